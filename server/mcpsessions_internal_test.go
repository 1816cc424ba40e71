package server

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEndTransportWaitsForRelease: a stdio session is ended twice at once,
// by its watcher and by ServeStdio. Whichever comes second must not
// return while the first is still forgetting the transport, and the
// transport is forgotten once. Before the fix the second returned at once,
// so a one-shot `plasmd stdio --store redis://…` process could close its
// store under the watcher's ForgetTransport and leave the transport's
// refs in Redis (found by the TypeScript SDK client test's one-shot case).
func TestEndTransportWaitsForRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := &mcp.ServerSession{} // no Mcp-Session-Id, as on stdio
		m := mcpSessions{ids: map[*mcp.ServerSession]string{ss: "conn-1"}}
		var mu sync.Mutex
		var released []string
		inRelease, finish := make(chan struct{}, 3), make(chan struct{})
		release := func(id string) {
			mu.Lock()
			released = append(released, id)
			mu.Unlock()
			inRelease <- struct{}{}
			<-finish
		}
		go m.end(ss, release) // the watcher
		<-inRelease
		secondDone := make(chan struct{})
		go func() { // ServeStdio
			m.end(ss, release)
			close(secondDone)
		}()
		synctest.Wait() // every goroutine of the bubble is blocked
		select {
		case <-secondDone:
			close(finish)
			t.Fatal("the second end returned while the first was still releasing the transport")
		default:
		}
		close(finish)
		<-secondDone
		synctest.Wait()
		if !slices.Equal(released, []string{"conn-1"}) {
			t.Errorf("released %v, want the transport once", released)
		}
		if len(m.ids) != 0 || len(m.ending) != 0 {
			t.Errorf("ids %v, ending %v: want both empty after the session ended", m.ids, m.ending)
		}
		m.end(ss, release) // a late watcher finds nothing left to release
		if len(released) != 1 {
			t.Errorf("a late end released again: %v", released)
		}
	})
}

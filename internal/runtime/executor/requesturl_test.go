package executor

import (
	"context"
	"sync"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// urlRecorder remembers the URL of every request the engine compiled.
type urlRecorder struct {
	*fakeEngine
	mu   sync.Mutex
	urls map[string]bool
}

func (e *urlRecorder) Compile(ctx context.Context, req *abi.CompileRequest) (*abi.CompiledRequest, error) {
	out, err := e.fakeEngine.Compile(ctx, req)
	if err == nil {
		e.mu.Lock()
		e.urls[out.URL] = true
		e.mu.Unlock()
	}
	return out, err
}

// The guest resolves relative next-page links against the URL that was
// requested (RFC 8288), so every Decode must be told that URL exactly as
// compiled.
func TestDecodeReceivesRequestURL(t *testing.T) {
	fe := &fakeEngine{caps: map[string]backendFunc{
		"list_repos": static(repoCols, repoRows()...),
		"get_user":   static([]string{"org"}, []any{"acme"}),
	}}
	e := &urlRecorder{fakeEngine: fe, urls: map[string]bool{}}
	list := fetch(0, "list_repos", "Repo")
	list.Args = map[string]any{"org": "acme"}
	list.Columns = repoCols
	user := fetch(1, "get_user", "User")
	user.Args = map[string]any{"login": "ann"}
	p := &plan.Plan{Nodes: []plan.Node{list, user}, Roots: roots(0, 1)}
	en := env(fe)
	en.Engine = e
	if _, err := New(&fakeSender{}, Limits{}).Run(context.Background(), p, en); err != nil {
		t.Fatalf("Run: %v", err)
	}
	decodes := fe.decodes()
	if len(decodes) != 2 {
		t.Fatalf("%d decodes, want 2", len(decodes))
	}
	for _, d := range decodes {
		if d.RequestURL == "" {
			t.Fatalf("decode of %s got no request URL", d.Capability)
		}
		if !e.urls[d.RequestURL] {
			t.Errorf("decode of %s got request URL %q, which was never compiled (compiled %v)", d.Capability, d.RequestURL, e.urls)
		}
	}
}

package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/plasmd/plasmd/server/internal/activity"
)

// liveEvent is the JSON of one SSE message; console.js builds table rows
// from it with textContent only.
type liveEvent struct {
	Kind    string `json:"kind"`
	Tenant  string `json:"tenant,omitempty"`
	At      string `json:"at"`
	Text    string `json:"text"`
	Status  string `json:"status,omitempty"`
	Href    string `json:"href,omitempty"`
	Session string `json:"session,omitempty"`
	Trace   string `json:"trace,omitempty"`
}

func toLive(e activity.Event) liveEvent {
	le := liveEvent{Kind: e.Kind, Tenant: e.Tenant, At: e.At.UTC().Format("2006-01-02 15:04:05Z"), Text: e.Text}
	switch {
	case e.Run != nil:
		le.Text = firstLine(e.Run.Program)
		le.Status = "ok"
		if e.Run.Failed() {
			le.Status = "failed"
		}
		le.Href = "/ui/runs/" + e.Run.ID
		le.Session = "/ui/sessions/" + e.Run.PromptHash + "/" + e.Run.SessionID
		le.Trace = e.Run.TraceID
	case e.Fault != nil:
		le.Text = e.Fault.Kind + " " + e.Fault.What
		if e.Fault.Result != "" {
			le.Text += ": " + e.Fault.Result
		}
	}
	return le
}

// events streams the viewer's live activity as server-sent events until
// the client goes away.
func (c *Console) events(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerOf(r)
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch, cancel := c.jr.Subscribe(v.scope())
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, ": plasmd live activity\n\n")
	fl.Flush()
	tick := time.NewTicker(c.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case e, ok := <-ch:
			if !ok {
				return
			}
			b, err := json.Marshal(toLive(e))
			if err != nil {
				continue
			}
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Kind, b); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

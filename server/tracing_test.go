package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tracing"
)

func recorder(t *testing.T) (*tracetest.SpanRecorder, server.Config) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	return rec, server.Config{TracerProvider: tp}
}

// A run is one span with its plan, steps, guest calls and backend calls
// under it, in the trace of its session; the trace id is in _meta.
func TestRunSpans(t *testing.T) {
	rec, cfg := recorder(t)
	f := newFixture(t, cfg)
	path := f.open(t, "tracker", "Issue", "Project")
	r := f.do(t, "POST", path, "text/plain", `Issue{project_id="prj-1"}.limit(2).comments[id]`, "Accept", "application/json")
	if r.status != 200 {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
	var out struct {
		Meta struct {
			Plasm struct {
				TraceID string `json:"trace_id"`
				RunID   string `json:"run_id"`
			} `json:"plasm"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatal(err)
	}
	sessionID := path[strings.LastIndex(path, "/")+1:]
	if want := tracing.SessionTraceID(sessionID).String(); out.Meta.Plasm.TraceID != want {
		t.Fatalf("_meta trace_id %q, want the session's %q", out.Meta.Plasm.TraceID, want)
	}
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID().String() != out.Meta.Plasm.TraceID {
			t.Errorf("span %s is in trace %s", s.Name(), s.SpanContext().TraceID())
		}
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	counts := map[string]int{"plasmd.run": 1, "plasmd.plan": 1, "plasmd.step fetch": 1, "plasmd.step hop": 1, "plasmd.backend GET": 3, "plasmd.guest compile": 3, "plasmd.guest decode": 3}
	for name, min := range counts {
		if len(byName[name]) < min {
			t.Errorf("%d %q spans, want at least %d (have %v)", len(byName[name]), name, min, keys(byName))
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	run := byName["plasmd.run"][0]
	if !run.Parent().IsRemote() {
		t.Error("the run's parent is not the session root")
	}
	attrs := map[string]string{}
	for _, kv := range run.Attributes() {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if attrs["plasmd.run_id"] != out.Meta.Plasm.RunID || attrs["plasmd.tenant"] != "anonymous" || attrs["plasmd.execute_session_id"] != sessionID {
		t.Errorf("run attributes %v", attrs)
	}
	ids := map[string]string{}
	for name, ss := range byName {
		for _, s := range ss {
			ids[s.SpanContext().SpanID().String()] = name
		}
	}
	parentOf := func(s sdktrace.ReadOnlySpan) string { return ids[s.Parent().SpanID().String()] }
	for _, s := range byName["plasmd.backend GET"] {
		if p := parentOf(s); !strings.HasPrefix(p, "plasmd.step ") {
			t.Errorf("backend call under %q, want a step", p)
		}
		for _, kv := range s.Attributes() {
			if kv.Key == "url.full" || kv.Key == "http.request.header.authorization" {
				t.Errorf("backend span records %s", kv.Key)
			}
		}
	}
	for _, name := range []string{"plasmd.plan", "plasmd.step fetch", "plasmd.step hop"} {
		if p := parentOf(byName[name][0]); p != "plasmd.run" {
			t.Errorf("%s under %q", name, p)
		}
	}
	// The console shows the trace id too.
	w := uiGet(f, "/ui/runs/"+out.Meta.Plasm.RunID, false)
	if !strings.Contains(w.Body.String(), out.Meta.Plasm.TraceID) {
		t.Error("the console's run page lacks the trace id")
	}
}

// Every run of one logical session is in one trace: the session's UUID.
func TestLogicalSessionIsTheTraceRoot(t *testing.T) {
	rec, cfg := recorder(t)
	f := newFixture(t, cfg)
	cs := f.mcpClient(t)
	ctx := contextCall(t, cs, "triage tracing", "tracker:Issue")
	ref, _ := ctx.meta["logical_session_ref"].(string)
	lid, _ := ctx.meta["logical_session_id"].(string)
	first := mustOK(t, runCall(t, cs, ref, `Issue("iss-1")`))
	second := runCall(t, cs, ref, `Issue{bogus=1}`)
	if !second.isError {
		t.Fatal("the bad program ran")
	}
	want := tracing.SessionTraceID(lid).String()
	if first.meta["trace_id"] != want {
		t.Fatalf("trace_id %v, want %s (logical session %s)", first.meta["trace_id"], want, lid)
	}
	runs := 0
	for _, s := range rec.Ended() {
		if s.Name() == "plasmd.run" {
			runs++
			if s.SpanContext().TraceID().String() != want {
				t.Errorf("run span in trace %s", s.SpanContext().TraceID())
			}
		}
	}
	if runs != 2 {
		t.Fatalf("%d run spans, want 2 (the failed run too)", runs)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

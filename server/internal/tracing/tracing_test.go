package tracing

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/uuid"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func TestSessionTraceID(t *testing.T) {
	u := uuid.New()
	if got := SessionTraceID(u.String()); [16]byte(got) != [16]byte(u) {
		t.Fatalf("a UUID session is not its own trace id: %s vs %s", got, u)
	}
	a, b := SessionTraceID("s-1"), SessionTraceID("s-2")
	if !a.IsValid() || a == b || a != SessionTraceID("s-1") {
		t.Fatal("non-UUID ids must hash to distinct, stable, valid trace ids")
	}
}

// With an endpoint, spans reach an OTLP/HTTP collector: here a loopback
// server decoding the protobuf export request.
func TestOTLPExport(t *testing.T) {
	var mu sync.Mutex
	var names []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(nil)
	}))
	defer srv.Close()
	ctx := context.Background()
	tp, err := OTLP(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	tr := New(tp)
	rctx, run := tr.Run(ctx, RunInfo{Tenant: "a", LogicalID: uuid.NewString()})
	_, pl := tr.Plan(rctx)
	pl.End(nil)
	run.End(errors.New("boom"))
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(names) != 2 {
		t.Fatalf("collector got %v", names)
	}
}

func TestOTLPRejectsBadEndpoints(t *testing.T) {
	for _, ep := range []string{"", "foo", "ftp://x", "http://"} {
		if _, err := OTLP(context.Background(), ep); !errors.Is(err, ErrEndpoint) {
			t.Errorf("%q: %v", ep, err)
		}
	}
}

func TestNilTracerIsNoop(t *testing.T) {
	var tr *Tracer
	ctx, s := tr.Run(context.Background(), RunInfo{SessionID: "x"})
	if s.TraceID() != SessionTraceID("x").String() {
		t.Fatal("a no-op run still carries its session's trace id")
	}
	_, p := tr.Plan(ctx)
	p.End(nil)
	s.End(nil)
}

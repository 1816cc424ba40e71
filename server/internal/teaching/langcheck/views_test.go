package langcheck_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/cml"
	"github.com/plasmd/plasmd/internal/engine/decode"
	"github.com/plasmd/plasmd/internal/engine/lang"
	"github.com/plasmd/plasmd/internal/fixture"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/server/internal/teaching"
)

// nativeEngine compiles and decodes in process (what engine.wasm runs).
type nativeEngine struct{ cat *catalog.Catalog }

func (e nativeEngine) Compile(_ context.Context, req *abi.CompileRequest) (*abi.CompiledRequest, error) {
	out, aerr := cml.Compile(e.cat, req)
	if aerr != nil {
		return nil, aerr
	}
	return out, nil
}

func (e nativeEngine) Decode(_ context.Context, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error) {
	out, aerr := decode.Decode(e.cat, req, body)
	if aerr != nil {
		return nil, aerr
	}
	return out, nil
}

// loopSender sends over plain HTTP to the in-process backend.
type loopSender struct{}

func (loopSender) Do(ctx context.Context, req *abi.CompiledRequest, _ []egress.Origin, _ egress.Secrets) (*egress.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, req.Method, req.URL, strings.NewReader(req.Body))
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return &egress.Response{Status: resp.StatusCode, Headers: resp.Header, Body: body}, err
}

// TestPlasmFormsView: the plasmforms catalog's view is loaded, taught as a
// one-row read, planned into a view node and run by the executor: its node
// reads every page of the notes and the view counts them.
func TestPlasmFormsView(t *testing.T) {
	cat, err := catalogdir.LoadPath(fixture.Path(t, "catalogs", "plasmforms"))
	if err != nil {
		t.Fatal(err)
	}
	backend := &notesBackend{}
	srv := httptest.NewServer(backend)
	defer srv.Close()
	cat.HTTPBackend, cat.Auth = srv.URL, catalog.Auth{Scheme: "none"}
	cats := map[string]*catalog.Catalog{cat.EntryID: cat}
	m := &symbol.Map{}
	w, err := teaching.Expose(m, teaching.Exposure{}, teaching.Request{Catalogs: cats, Seeds: []teaching.Seed{{EntryID: "plasmforms", Entity: "Digest"}}})
	if err != nil {
		t.Fatal(err)
	}
	p, aerr := lang.Plan(&abi.PlanRequest{Program: m.EntitySym("plasmforms", "Digest") + `{q="x"}`, Symbols: m.Clone(), Entries: w.Exposure.Entries()}, cats)
	if aerr != nil {
		t.Fatalf("plan: %v", aerr)
	}
	if len(p.Nodes) != 1 || p.Nodes[0].Op != plan.OpView || p.Verdict != plan.VerdictOK {
		t.Fatalf("plan: %+v", p)
	}
	origin, _ := egress.ParseOrigin(srv.URL)
	res, err := executor.New(loopSender{}, executor.Limits{}).Run(context.Background(), p, &executor.Env{Engine: nativeEngine{cat}, Origins: map[string][]egress.Origin{cat.EntryID: {origin}}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Roots[0].Table
	if !reflect.DeepEqual(got.Columns, []string{"id", "count"}) || !reflect.DeepEqual(got.Rows, [][]any{{"x", int64(3)}}) {
		t.Errorf("view row: %v %v", got.Columns, got.Rows)
	}
	if want := []string{"GET /v1/notes?q=x", "GET /v1/notes?page=2"}; !reflect.DeepEqual(backend.seen, want) {
		t.Errorf("sent %q, want %q", backend.seen, want)
	}
}

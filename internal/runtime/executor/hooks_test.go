package executor

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// trace records the order in which the engine, the hooks and the sender
// are reached.
type trace struct {
	mu     sync.Mutex
	events []string
}

func (tr *trace) add(ev string) {
	tr.mu.Lock()
	tr.events = append(tr.events, ev)
	tr.mu.Unlock()
}

func (tr *trace) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.events...)
}

type tracingEngine struct {
	*fakeEngine
	tr *trace
}

func (e tracingEngine) Compile(ctx context.Context, req *abi.CompileRequest) (*abi.CompiledRequest, error) {
	e.tr.add("compile " + req.Capability)
	return e.fakeEngine.Compile(ctx, req)
}

func (e tracingEngine) Decode(ctx context.Context, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error) {
	e.tr.add("engine decode " + req.Capability)
	return e.fakeEngine.Decode(ctx, req, body)
}

// tracingSender records each request it is asked to send, headers included.
type tracingSender struct {
	fakeSender
	tr   *trace
	mu   sync.Mutex
	reqs []*abi.CompiledRequest
}

func (s *tracingSender) Do(ctx context.Context, req *abi.CompiledRequest, allowed []egress.Origin, sec egress.Secrets) (*egress.Response, error) {
	s.tr.add("send")
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	return s.fakeSender.Do(ctx, req, allowed, sec)
}

var thingCols = []string{"id", "label"}

// TestHooksInvoke: a capability the module serves (transport: wasm) goes to
// Hooks.Invoke only. The engine never compiles or decodes it and nothing
// reaches egress; other capabilities of the same catalog keep the standard
// path.
func TestHooksInvoke(t *testing.T) {
	tests := []struct {
		name    string
		invoke  func(context.Context, *abi.CompileRequest) (*abi.DecodeResponse, error)
		wantErr string
		wantIs  error
	}{
		{name: "served", invoke: func(_ context.Context, req *abi.CompileRequest) (*abi.DecodeResponse, error) {
			return &abi.DecodeResponse{Table: abi.Table{Columns: thingCols, Rows: [][]any{{1.0, req.Vars["q"]}}}}, nil
		}},
		{name: "module error", wantErr: "invoke wasm_things: ", wantIs: errBoom, invoke: func(context.Context, *abi.CompileRequest) (*abi.DecodeResponse, error) {
			return nil, errBoom
		}},
		{name: "no result", wantErr: "invoke wasm_things: no result", invoke: func(context.Context, *abi.CompileRequest) (*abi.DecodeResponse, error) {
			return nil, nil
		}},
		{name: "ragged rows", wantErr: "row 1 has 1 cells for 2 columns", invoke: func(context.Context, *abi.CompileRequest) (*abi.DecodeResponse, error) {
			return &abi.DecodeResponse{Table: abi.Table{Columns: thingCols, Rows: [][]any{{1.0}}}}, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &trace{}
			fe := &fakeEngine{caps: map[string]backendFunc{"list_repos": static(repoCols, repoRows()...)}}
			s := &tracingSender{tr: tr}
			var got []*abi.CompileRequest
			var mu sync.Mutex
			e := &Env{Engine: tracingEngine{fe, tr}, Origins: map[string][]egress.Origin{entry: {apiOrigin}}}
			e.Hooks = map[string]*Hooks{entry: {
				Invoke: func(ctx context.Context, req *abi.CompileRequest) (*abi.DecodeResponse, error) {
					tr.add("invoke " + req.Capability)
					mu.Lock()
					got = append(got, req)
					mu.Unlock()
					return tt.invoke(ctx, req)
				},
				Invokes: func(c string) bool { return c == "wasm_things" },
			}}
			things := fetch(0, "wasm_things", "Thing")
			things.Args = map[string]any{"q": "needle"}
			p := &plan.Plan{Nodes: []plan.Node{things, fetch(1, "list_repos", "Repo")}, Roots: roots(0, 1)}
			res, err := New(s, Limits{}).Run(context.Background(), p, e)

			if len(fe.calls("wasm_things")) != 0 {
				t.Error("the engine compiled a capability the module serves")
			}
			for _, d := range fe.decodes() {
				if d.Capability == "wasm_things" {
					t.Error("the engine decoded a capability the module serves")
				}
			}
			s.mu.Lock()
			for _, r := range s.reqs {
				if strings.Contains(r.URL, "wasm_things") {
					t.Errorf("a module-served capability reached egress: %s", r.URL)
				}
			}
			s.mu.Unlock()
			if len(got) != 1 || got[0].EntryID != entry || got[0].Capability != "wasm_things" || got[0].Vars["q"] != "needle" {
				t.Fatalf("Invoke saw %+v", got)
			}

			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
					t.Fatalf("err = %v does not wrap %v", err, tt.wantIs)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			want := abi.Table{Columns: thingCols, Rows: [][]any{{1.0, "needle"}}}
			if !reflect.DeepEqual(res.Roots[0].Table, want) {
				t.Fatalf("module table %v, want %v", res.Roots[0].Table, want)
			}
			if len(res.Roots[1].Table.Rows) != len(repoRows()) {
				t.Fatalf("standard capability beside it: %v", res.Roots[1].Table)
			}
			if s.count() != 1 {
				t.Fatalf("egress saw %d requests, want only list_repos's", s.count())
			}
			for _, st := range res.Steps {
				if st.Node == 0 && st.Calls != 1 {
					t.Fatalf("invoke step %+v, want one call", st)
				}
			}
		})
	}
}

var errBoom = errors.New("module says no")

// TestHooksPrepareDecodeOrder: for a standard capability of a catalog with
// hooks, the engine compiles, prepare_request rewrites, egress sends what
// the hook produced (still under the catalog's origins, with the engine's
// pagination state), and decode_response replaces the engine's decode.
func TestHooksPrepareDecodeOrder(t *testing.T) {
	tests := []struct {
		name      string
		prepare   func(*abi.CompiledRequest) (*abi.CompiledRequest, error)
		decode    bool
		wantTrace []string
		wantErr   string
	}{
		{
			name: "both hooks",
			prepare: func(r *abi.CompiledRequest) (*abi.CompiledRequest, error) {
				out := *r
				out.Headers = append(out.Headers, [2]string{"X-Signature", "sig"})
				out.Page = map[string]any{"cursor": "forged"}
				return &out, nil
			},
			decode:    true,
			wantTrace: []string{"compile list_repos", "prepare", "send", "hook decode"},
		},
		{
			name:      "decode hook only",
			decode:    true,
			wantTrace: []string{"compile list_repos", "send", "hook decode"},
		},
		{
			name:      "prepare hook only",
			prepare:   func(r *abi.CompiledRequest) (*abi.CompiledRequest, error) { return r, nil },
			wantTrace: []string{"compile list_repos", "prepare", "send", "engine decode list_repos"},
		},
		{
			name:      "prepare fails",
			prepare:   func(*abi.CompiledRequest) (*abi.CompiledRequest, error) { return nil, errBoom },
			decode:    true,
			wantTrace: []string{"compile list_repos", "prepare"},
			wantErr:   "prepare_request list_repos: module says no",
		},
		{
			name:      "prepare returns nothing",
			prepare:   func(*abi.CompiledRequest) (*abi.CompiledRequest, error) { return nil, nil },
			wantTrace: []string{"compile list_repos", "prepare"},
			wantErr:   "prepare_request list_repos: no request",
		},
		{
			// A module cannot widen egress: its rewrite is checked against
			// the catalog's declared origins like any request.
			name: "prepare points elsewhere",
			prepare: func(r *abi.CompiledRequest) (*abi.CompiledRequest, error) {
				out := *r
				out.URL = "http://attacker.test/x"
				return &out, nil
			},
			decode:    true,
			wantTrace: []string{"compile list_repos", "prepare", "send"},
			wantErr:   "egress denied",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &trace{}
			fe := &fakeEngine{caps: map[string]backendFunc{"list_repos": static(repoCols, repoRows()...)}}
			s := &tracingSender{tr: tr}
			h := &Hooks{}
			if tt.prepare != nil {
				h.PrepareRequest = func(_ context.Context, r *abi.CompiledRequest) (*abi.CompiledRequest, error) {
					tr.add("prepare")
					return tt.prepare(r)
				}
			}
			var decoded []*abi.DecodeRequest
			if tt.decode {
				h.DecodeResponse = func(_ context.Context, r *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error) {
					tr.add("hook decode")
					decoded = append(decoded, r)
					if !strings.Contains(string(body), "list_repos") {
						t.Errorf("decode hook got body %q, not the backend's", body)
					}
					return &abi.DecodeResponse{Table: abi.Table{Columns: []string{"n"}, Rows: [][]any{{42.0}}}}, nil
				}
			}
			e := &Env{Engine: tracingEngine{fe, tr}, Origins: map[string][]egress.Origin{entry: {apiOrigin}}}
			e.Hooks = map[string]*Hooks{entry: h}
			n := fetch(0, "list_repos", "Repo")
			res, err := New(s, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{n}, Roots: roots(0)}, e)
			if got := tr.get(); !reflect.DeepEqual(got, tt.wantTrace) {
				t.Errorf("order %q, want %q", got, tt.wantTrace)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if tt.decode {
				if !reflect.DeepEqual(res.Roots[0].Table.Rows, [][]any{{42.0}}) {
					t.Fatalf("table %v, want the decode hook's", res.Roots[0].Table)
				}
				if len(decoded) != 1 || decoded[0].EntryID != entry || decoded[0].Capability != "list_repos" || decoded[0].Status != 200 {
					t.Fatalf("decode hook saw %+v", decoded)
				}
				// The engine's pagination state, not the module's rewrite.
				if decoded[0].Page["cursor"] == "forged" {
					t.Fatal("prepare_request changed the page the executor tracks")
				}
			}
			if tt.name == "both hooks" {
				s.mu.Lock()
				sent := s.reqs[0]
				s.mu.Unlock()
				if !reflect.DeepEqual(sent.Headers, [][2]string{{"X-Signature", "sig"}}) {
					t.Fatalf("egress got headers %v, want the hook's", sent.Headers)
				}
			}
		})
	}
}

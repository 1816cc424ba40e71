package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// The fakes stand in for a tenant's engine and for egress. The fake engine
// "compiles" a request by encoding the whole CompileRequest into the URL;
// the fake sender echoes the URL back as the body, so Decode sees exactly
// what was compiled and can answer from an in-memory backend.

const entry = "gh"

var apiOrigin = egress.Origin{Scheme: "http", Host: "api.test", Port: "80"}

// backendFunc answers one call of a capability.
type backendFunc func(call *abi.CompileRequest, relation string) (*abi.DecodeResponse, error)

type fakeEngine struct {
	caps map[string]backendFunc
	// fallback answers capabilities without an entry (used by the fuzz test).
	fallback backendFunc

	mu       sync.Mutex
	compiled []*abi.CompileRequest
	decoded  []*abi.DecodeRequest
}

func (e *fakeEngine) Compile(_ context.Context, req *abi.CompileRequest) (*abi.CompiledRequest, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.compiled = append(e.compiled, req)
	e.mu.Unlock()
	method := "GET"
	if strings.HasPrefix(req.Capability, "create") || strings.HasPrefix(req.Capability, "close") {
		method = "POST"
	}
	return &abi.CompiledRequest{
		Method: method,
		URL:    "http://api.test/" + url.PathEscape(req.Capability) + "?req=" + url.QueryEscape(string(b)),
		Page:   req.Page,
	}, nil
}

func (e *fakeEngine) Decode(_ context.Context, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error) {
	e.mu.Lock()
	e.decoded = append(e.decoded, req)
	e.mu.Unlock()
	u, err := url.Parse(string(body))
	if err != nil {
		return nil, err
	}
	var call abi.CompileRequest
	if err := json.Unmarshal([]byte(u.Query().Get("req")), &call); err != nil {
		return nil, fmt.Errorf("fake decode: %w", err)
	}
	if call.Capability != req.Capability || call.EntryID != req.EntryID {
		return nil, fmt.Errorf("fake decode: body is for %s/%s, decoding %s/%s", call.EntryID, call.Capability, req.EntryID, req.Capability)
	}
	if req.Status < 200 || req.Status > 299 {
		return nil, &abi.Error{Code: "backend", Message: "not found"}
	}
	h := e.caps[req.Capability]
	if h == nil {
		h = e.fallback
	}
	if h == nil {
		return nil, fmt.Errorf("fake backend has no capability %q", req.Capability)
	}
	return h(&call, req.Relation)
}

func (e *fakeEngine) calls(capability string) []*abi.CompileRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*abi.CompileRequest
	for _, c := range e.compiled {
		if c.Capability == capability {
			out = append(out, c)
		}
	}
	return out
}

func (e *fakeEngine) decodes() []*abi.DecodeRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*abi.DecodeRequest(nil), e.decoded...)
}

// fakeSender echoes the URL; hook, when set, can block, fail or change the
// status of a call.
type fakeSender struct {
	hook func(ctx context.Context, capability string) (status int, err error)
	// statusOf, when set, picks the status from the compiled call itself.
	statusOf func(call *abi.CompileRequest) int

	mu    sync.Mutex
	sends int
}

func (s *fakeSender) Do(ctx context.Context, req *abi.CompiledRequest, allowed []egress.Origin, _ egress.Secrets) (*egress.Response, error) {
	s.mu.Lock()
	s.sends++
	s.mu.Unlock()
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, err
	}
	o, err := egress.ParseOrigin(req.URL)
	if err != nil {
		return nil, err
	}
	permitted := false
	for _, a := range allowed {
		permitted = permitted || a == o
	}
	if !permitted {
		return nil, fmt.Errorf("%w: %s", egress.ErrDenied, o)
	}
	status := 200
	if s.hook != nil {
		capability, _ := url.PathUnescape(strings.TrimPrefix(u.EscapedPath(), "/"))
		if status, err = s.hook(ctx, capability); err != nil {
			return nil, err
		}
	}
	if s.statusOf != nil {
		var call abi.CompileRequest
		if err := json.Unmarshal([]byte(u.Query().Get("req")), &call); err != nil {
			return nil, err
		}
		status = s.statusOf(&call)
	}
	return &egress.Response{Status: status, Body: []byte(req.URL)}, nil
}

func (s *fakeSender) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sends
}

// static answers every call with the same table.
func static(cols []string, rows ...[]any) backendFunc {
	return func(*abi.CompileRequest, string) (*abi.DecodeResponse, error) {
		return &abi.DecodeResponse{Table: abi.Table{Columns: cols, Rows: rows}}, nil
	}
}

func env(e *fakeEngine) *Env {
	return &Env{Engine: e, Origins: map[string][]egress.Origin{entry: {apiOrigin}}}
}

func fetch(id int, capability, entity string) plan.Node {
	return plan.Node{ID: id, Op: plan.OpFetch, Effect: plan.EffectRead, EntryID: entry, Entity: entity, Capability: capability, Input: -1, Many: true}
}

func roots(ids ...int) []plan.Root {
	var out []plan.Root
	for _, id := range ids {
		out = append(out, plan.Root{Label: fmt.Sprintf("n%d", id), Node: id})
	}
	return out
}

// column returns one column of a table, for compact assertions.
func column(t abi.Table, name string) []any {
	c := t.Col(name)
	if c < 0 {
		return nil
	}
	out := []any{}
	for _, r := range t.Rows {
		out = append(out, r[c])
	}
	return out
}

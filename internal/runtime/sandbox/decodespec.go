package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/extract"
)

// maxSpecs bounds the extraction specs one engine client keeps: one per
// (catalog digest, capability, relation) in use, far more than a tenant's
// catalogs declare, so eviction (all at once) is rare.
const maxSpecs = 512

// specKey names a spec: the catalog's load digest ties it to the exact
// catalog the guest compiled it from.
type specKey struct{ entry, digest, capability, relation string }

// specCache holds compiled specs; safe for concurrent use.
type specCache struct {
	mu sync.Mutex
	m  map[specKey]*extract.Spec
}

func (c *specCache) get(k specKey) *extract.Spec {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *specCache) put(k specKey, s *extract.Spec) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxSpecs {
		c.m = make(map[specKey]*extract.Spec)
	}
	c.m[k] = s
}

// Decode turns a backend response body into rows. The guest compiles the
// capability's extraction spec once per catalog digest (catalog logic
// stays in the sandbox); the host applies it to every page natively with
// the one decoder (internal/model/extract), which is what makes a large
// page cost about what encoding/json costs. An engine module without the
// spec export is decoded in the guest (DecodeInGuest).
//
// The host decode keeps the guest call's bounds: a body over MaxInput is
// refused as it would have been, and the decode stops at CallTimeout
// (extract.Options.Interrupt), though its work is linear in the body.
func (e *Engine) Decode(ctx context.Context, req *abi.DecodeRequest, body []byte) (out *abi.DecodeResponse, err error) {
	t := e.Tenant
	mod, lim, digest := t.decodeState(req.EntryID)
	if mod == nil || !mod.HasExport(abi.ExportDecodeSpec) {
		return e.DecodeInGuest(ctx, req, body)
	}
	if len(body) > lim.MaxInput {
		return nil, t.callError(abi.ExportDecode, ErrInputTooLarge, fmt.Sprintf("%d bytes, limit %d", len(body), lim.MaxInput))
	}
	s, err := e.spec(ctx, req, digest)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	defer func() { t.host.obs.CallDone(t.id, abi.ExportDecode, Result(err), time.Since(start)) }()
	deadline := start.Add(lim.CallTimeout)
	var stopped error
	interrupt := func() error {
		if err := ctx.Err(); err != nil {
			stopped = err
		} else if time.Now().After(deadline) {
			stopped = ErrDeadline
		}
		return stopped
	}
	if interrupt() != nil {
		return nil, t.stoppedError(stopped, "before the host decode started")
	}
	res, aerr := extract.Apply(s, req, body, extract.Options{Interrupt: interrupt})
	switch {
	case stopped != nil:
		return nil, t.stoppedError(stopped, "host decode stopped")
	case aerr != nil:
		return nil, aerr
	}
	// The guest's answer was bounded by MaxOutput; the host's rows are too.
	if n := tableSize(res.Table.Rows, lim.MaxOutput); n > lim.MaxOutput {
		return nil, t.callError(abi.ExportDecode, ErrOutputTooLarge, fmt.Sprintf("decoded rows exceed %d bytes", lim.MaxOutput))
	}
	if res.Next, err = wireNext(res.Next); err != nil {
		return nil, &abi.Error{Code: abi.CodeDecode, Message: "decode " + s.Capability + ": " + err.Error()}
	}
	return res, nil
}

// wireNext gives next-page state the form it had when the guest sent it
// over JSON (numbers as json.Number), so continuations compare and
// compile exactly as before.
func wireNext(next map[string]any) (map[string]any, error) {
	if next == nil {
		return nil, nil
	}
	b, err := json.Marshal(next)
	if err != nil {
		return nil, fmt.Errorf("encode next page state: %w", err)
	}
	var out map[string]any
	if err := abi.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("next page state: %w", err)
	}
	return out, nil
}

// spec returns the extraction spec for req's capability, compiling it in
// the guest on first use for this catalog digest.
func (e *Engine) spec(ctx context.Context, req *abi.DecodeRequest, digest string) (*extract.Spec, error) {
	k := specKey{req.EntryID, digest, req.Capability, req.Relation}
	if s := e.specs.get(k); s != nil {
		return s, nil
	}
	in, err := json.Marshal(abi.DecodeSpecRequest{EntryID: req.EntryID, Capability: req.Capability, Relation: req.Relation})
	if err != nil {
		return nil, &abi.Error{Code: abi.CodeBadRequest, Message: "encode decode spec request: " + err.Error()}
	}
	var s extract.Spec
	if err := e.Tenant.do(ctx, abi.ExportDecodeSpec, []string{req.EntryID}, in, nil, func(b []byte) error {
		return abi.Unmarshal(b, &s)
	}); err != nil {
		return nil, err
	}
	// A readable spec past the bounds is refused without discarding the
	// instance: its answer was well framed, so nothing says its state is
	// broken (an unreadable answer, above, is and discards it). The engine
	// validates every spec it compiles and answers a catalog error instead
	// (decode.Spec), so only a module that is not this engine, or one from
	// before that check, sends one. It is not cached; each call asks again.
	if err := s.Validate(); err != nil {
		return nil, e.Tenant.callError(abi.ExportDecodeSpec, ErrABI,
			fmt.Sprintf("decode spec of catalog %q, capability %q: %v", req.EntryID, req.Capability, err))
	}
	// Cache only when the catalog did not change while the guest compiled:
	// the instance may have installed a newer one than digest names.
	if _, _, now := e.Tenant.decodeState(req.EntryID); now == digest {
		e.specs.put(k, &s)
	}
	return &s, nil
}

// stoppedError reports a host decode ended by its context or deadline
// with the kinds a guest call would have used.
func (t *Tenant) stoppedError(cause error, detail string) *CallError {
	kind := error(context.Canceled)
	if errors.Is(cause, context.DeadlineExceeded) || errors.Is(cause, ErrDeadline) {
		kind = ErrDeadline
	}
	return t.callError(abi.ExportDecode, kind, detail)
}

// decodeState reads what a host-side decode needs from the tenant: its
// module, its limits and the digest of the catalog load named entry.
func (t *Tenant) decodeState(entry string) (*Module, Limits, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.module, t.limits, t.loadIndex[entry]
}

// tableSize estimates, from above, the bytes rows take in the guest's
// tape encoding, stopping once past limit. Values come from a document
// whose nesting was capped, so the recursion is bounded.
func tableSize(rows [][]any, limit int) int {
	n := 0
	for _, row := range rows {
		for _, v := range row {
			if n = valueSize(v, n); n > limit {
				return n
			}
		}
	}
	return n
}

func valueSize(v any, n int) int {
	switch t := v.(type) {
	case string:
		return n + 1 + 10 + len(t)
	case json.Number: // a big integer carried as its text
		return n + 1 + 10 + len(t)
	case []any:
		n += 1 + 10
		for _, e := range t {
			n = valueSize(e, n)
		}
		return n
	case map[string]any:
		n += 1 + 10
		for k, e := range t {
			n = valueSize(e, n+10+len(k))
		}
		return n
	}
	return n + 1 + 10 // null, booleans, numbers
}

package executor

import (
	"context"
	"fmt"

	"github.com/plasmd/plasmd/guest/abi"
)

// Hooks are one catalog's vendor-module overrides of a backend call. A nil
// function is a hook the catalog's module does not declare; the standard
// engine's behaviour applies there.
type Hooks struct {
	// PrepareRequest rewrites each compiled request before it is sent
	// (e.g. to sign it).
	PrepareRequest func(ctx context.Context, req *abi.CompiledRequest) (*abi.CompiledRequest, error)
	// DecodeResponse replaces the standard decode of every response.
	DecodeResponse func(ctx context.Context, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error)
	// Invoke serves the capabilities Invokes reports (transport: wasm)
	// entirely, backend calls included; the executor neither compiles
	// nor sends for them.
	Invoke  func(ctx context.Context, req *abi.CompileRequest) (*abi.DecodeResponse, error)
	Invokes func(capability string) bool
}

func (h *Hooks) invokes(capability string) bool {
	return h != nil && h.Invoke != nil && h.Invokes != nil && h.Invokes(capability)
}

// compile builds the request of one call: the standard engine compiles it,
// then the catalog's prepare_request hook (if any) rewrites it.
func (r *run) compile(ctx context.Context, hooks *Hooks, req *abi.CompileRequest) (*abi.CompiledRequest, error) {
	creq, err := r.env.Engine.Compile(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", req.Capability, err)
	}
	if hooks == nil || hooks.PrepareRequest == nil {
		return creq, nil
	}
	page := creq.Page
	var auth *abi.AuthDirective
	if creq.Auth != nil {
		a := *creq.Auth
		auth = &a
	}
	prepared, err := hooks.PrepareRequest(ctx, creq)
	if err != nil {
		return nil, fmt.Errorf("prepare_request %s: %w", req.Capability, err)
	}
	if prepared == nil {
		return nil, fmt.Errorf("prepare_request %s: no request", req.Capability)
	}
	// Pagination state belongs to the engine: a module rewrites the wire
	// request, not which page the executor thinks it fetched.
	prepared.Page = page
	// So do the credentials: the engine attached the catalog's auth only
	// where it may go (its http_backend's origin); a module may drop it,
	// never name another scheme, token endpoint or secret.
	if prepared.Auth != nil {
		prepared.Auth = auth
	}
	return prepared, nil
}

// decoder returns the decode function for a catalog's responses.
func (r *run) decoder(hooks *Hooks) func(context.Context, *abi.DecodeRequest, []byte) (*abi.DecodeResponse, error) {
	if hooks != nil && hooks.DecodeResponse != nil {
		return hooks.DecodeResponse
	}
	return r.env.Engine.Decode
}

// invoke serves a transport: wasm capability through the module.
func (r *run) invoke(ctx context.Context, hooks *Hooks, req *abi.CompileRequest, step *Step) (*abi.DecodeResponse, error) {
	dec, err := hooks.Invoke(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("invoke %s: %w", req.Capability, err)
	}
	r.mu.Lock()
	step.Calls++
	r.mu.Unlock()
	if dec == nil {
		return nil, fmt.Errorf("invoke %s: no result", req.Capability)
	}
	return dec, nil
}

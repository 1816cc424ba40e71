package sandbox

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/hostabi"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// Sender performs a guest's backend request under the egress policy; it is
// what *egress.Client provides.
type Sender interface {
	Do(ctx context.Context, req *abi.CompiledRequest, allowed []egress.Origin, secrets egress.Secrets) (*egress.Response, error)
}

// HostEnv is what the host imports (hostabi.Module) may use during one
// call: the tenant's secrets, the origins of the catalog the call serves,
// and the egress client. It travels in the context.Context given to the
// call, because wazero hands that context to host functions; a call
// without one gets hostabi.ErrNoContext from every import.
type HostEnv struct {
	// Secrets back hmac_sha256 and the auth of http requests. The guest
	// picks every name, so give the catalog's scope
	// (egress.ScopeSecrets), never the tenant's whole store.
	Secrets egress.Secrets
	Origins []egress.Origin
	// Egress sends http requests; nil makes http fail with
	// hostabi.ErrUnavailable.
	Egress Sender
}

type hostEnvKey struct{}

// hostCall is the per-call state behind a HostEnv: the response http
// produced and http_read has not yet fetched.
type hostCall struct {
	env *HostEnv

	mu      sync.Mutex
	pending []byte
}

// WithHostEnv returns a context under which a guest call may use the host
// imports with env. Use a fresh context per call: the pending http response
// belongs to it.
func WithHostEnv(ctx context.Context, env *HostEnv) context.Context {
	return context.WithValue(ctx, hostEnvKey{}, &hostCall{env: env})
}

func hostCallOf(ctx context.Context) *hostCall {
	c, _ := ctx.Value(hostEnvKey{}).(*hostCall)
	if c == nil || c.env == nil {
		return nil
	}
	return c
}

// hostImport is the exact signature of one host function.
type hostImport struct {
	params, results []api.ValueType
}

var hostImports = map[string]hostImport{
	hostabi.HMACSHA256: {params: []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, results: []api.ValueType{api.ValueTypeI32}},
	hostabi.HTTP:       {params: []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, results: []api.ValueType{api.ValueTypeI64}},
	hostabi.HTTPRead:   {params: []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, results: []api.ValueType{api.ValueTypeI32}},
}

// checkImport admits WASI preview1 imports and the host module's functions
// with their exact signatures; anything else breaks the ABI.
func checkImport(imp api.FunctionDefinition) error {
	mod, name, _ := imp.Import()
	switch mod {
	case wasi_snapshot_preview1.ModuleName:
		return nil
	case hostabi.Module:
		want, ok := hostImports[name]
		if !ok {
			return fmt.Errorf("%w: imports %s.%s, which the host does not provide", ErrABI, mod, name)
		}
		if !slices.Equal(imp.ParamTypes(), want.params) || !slices.Equal(imp.ResultTypes(), want.results) {
			return fmt.Errorf("%w: imports %s.%s with signature %s, the host provides %s", ErrABI, mod, name,
				signature(imp.ParamTypes(), imp.ResultTypes()), signature(want.params, want.results))
		}
		return nil
	}
	return fmt.Errorf("%w: imports %s.%s, the sandbox provides only %s and %s", ErrABI, mod, name, wasi_snapshot_preview1.ModuleName, hostabi.Module)
}

// instantiateHostModule registers hostabi.Module in the runtime, once per
// Host. The functions are stack-based (no reflection) because signing sits
// on every request's path.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(hostabi.Module)
	add := func(name string, fn api.GoModuleFunc) {
		sig := hostImports[name]
		b.NewFunctionBuilder().WithGoModuleFunction(fn, sig.params, sig.results).Export(name)
	}
	add(hostabi.HMACSHA256, hostHMAC)
	add(hostabi.HTTP, hostHTTP)
	add(hostabi.HTTPRead, hostHTTPRead)
	_, err := b.Instantiate(ctx)
	return err
}

// read returns a copy of guest memory [ptr, ptr+n), or false when any of it
// lies outside memory. Copying matters: the guest may grow (and so move)
// its memory while the host still uses the bytes.
func read(m api.Module, ptr, n uint32) ([]byte, bool) {
	mem := m.Memory()
	if mem == nil {
		return nil, false
	}
	b, ok := mem.Read(ptr, n)
	if !ok {
		return nil, false
	}
	return slices.Clone(b), true
}

func i32(v int64) uint64 { return api.EncodeI32(int32(v)) }

func i64(v int64) uint64 { return api.EncodeI64(v) }

func hostHMAC(ctx context.Context, m api.Module, stack []uint64) {
	namePtr, nameLen := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	dataPtr, dataLen := api.DecodeU32(stack[2]), api.DecodeU32(stack[3])
	outPtr := api.DecodeU32(stack[4])
	c := hostCallOf(ctx)
	if c == nil {
		stack[0] = i32(hostabi.ErrNoContext)
		return
	}
	name, ok1 := read(m, namePtr, nameLen)
	data, ok2 := read(m, dataPtr, dataLen)
	if !ok1 || !ok2 || uint64(outPtr)+hostabi.HMACSize > uint64(m.Memory().Size()) {
		stack[0] = i32(hostabi.ErrBounds)
		return
	}
	var secret string
	ok := false
	if c.env.Secrets != nil {
		secret, ok = c.env.Secrets.Secret(string(name))
	}
	if !ok || secret == "" {
		stack[0] = i32(hostabi.ErrSecret)
		return
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(data)
	if !m.Memory().Write(outPtr, mac.Sum(nil)) {
		stack[0] = i32(hostabi.ErrBounds)
		return
	}
	stack[0] = i32(hostabi.OK)
}

func hostHTTP(ctx context.Context, m api.Module, stack []uint64) {
	reqPtr, reqLen := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	c := hostCallOf(ctx)
	if c == nil {
		stack[0] = i64(hostabi.ErrNoContext)
		return
	}
	if c.env.Egress == nil {
		stack[0] = i64(hostabi.ErrUnavailable)
		return
	}
	raw, ok := read(m, reqPtr, reqLen)
	if !ok {
		stack[0] = i64(hostabi.ErrBounds)
		return
	}
	var req abi.CompiledRequest
	if err := json.Unmarshal(raw, &req); err != nil || req.Method == "" || req.URL == "" {
		stack[0] = i64(hostabi.ErrRequest)
		return
	}
	var hdr hostabi.Response
	var body []byte
	var resp *egress.Response
	var err error
	// The guest is blocked on the backend: give its CPU slot to others.
	yieldCPU(ctx, func() { resp, err = c.env.Egress.Do(ctx, &req, c.env.Origins, c.env.Secrets) })
	if err != nil {
		// egress redacts secrets from its errors, so the message is safe
		// to hand to the guest.
		hdr.Error, hdr.ErrorKind = err.Error(), egressKind(err)
	} else {
		hdr.Status, hdr.Headers, body = resp.Status, resp.Headers, resp.Body
	}
	frame, err := abi.AppendFrame(nil, &hdr, body)
	if err != nil {
		stack[0] = i64(hostabi.ErrRequest)
		return
	}
	c.mu.Lock()
	c.pending = frame
	c.mu.Unlock()
	stack[0] = uint64(len(frame))
}

func egressKind(err error) string {
	switch {
	case errors.Is(err, egress.ErrDenied):
		return hostabi.EgressDenied
	case errors.Is(err, egress.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return hostabi.EgressTimeout
	case errors.Is(err, egress.ErrTooLarge):
		return hostabi.EgressTooLarge
	case errors.Is(err, egress.ErrSecret):
		return hostabi.EgressSecret
	}
	return hostabi.EgressTransport
}

func hostHTTPRead(ctx context.Context, m api.Module, stack []uint64) {
	outPtr, outLen := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	c := hostCallOf(ctx)
	if c == nil {
		stack[0] = i32(hostabi.ErrNoContext)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		stack[0] = i32(hostabi.ErrNoResponse)
		return
	}
	if uint64(outLen) < uint64(len(c.pending)) || !m.Memory().Write(outPtr, c.pending) {
		stack[0] = i32(hostabi.ErrBounds)
		return
	}
	c.pending = nil
	stack[0] = i32(hostabi.OK)
}

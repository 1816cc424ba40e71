package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// Refusal is a catalog the server refused to serve, with why. The rest of
// the registry serves without it.
type Refusal struct {
	EntryID string `json:"entry_id"`
	Error   string `json:"error"`
}

// ErrModuleRefused is wrapped by every vendor-module refusal.
var ErrModuleRefused = errors.New("vendor module refused")

// vendorModule is a catalog's verified, compiled module.
type vendorModule struct {
	module  *sandbox.Module
	hooks   []string
	invokes map[string]bool  // capabilities with transport: wasm
	cat     *catalog.Catalog // for the types of the rows it decodes
}

// vendors holds the registry's vendor modules and runs their hooks in
// per-(tenant, module) sandboxes, so a module instance never serves two
// tenants and never shares a pool with the standard engine.
type vendors struct {
	host    *sandbox.Host
	egress  sandbox.Sender
	modules map[string]*vendorModule // by entry id
	refused []Refusal

	mu        sync.Mutex
	sandboxes map[string]*sandbox.Tenant // by tenant id + "\x00" + module digest
}

// loadVendors verifies and compiles the vendor module of every catalog that
// declares one and returns the catalogs to serve: a catalog whose module is
// missing, does not match its sha256 pin, fails ABI validation (including
// the ABI version) or lacks a declared hook's export is left out and
// recorded as refused.
func loadVendors(ctx context.Context, log *slog.Logger, host *sandbox.Host, eg sandbox.Sender, cats []*catalog.Catalog, wasm map[string][]byte) ([]*catalog.Catalog, *vendors) {
	v := &vendors{host: host, egress: eg, modules: map[string]*vendorModule{}, sandboxes: map[string]*sandbox.Tenant{}}
	keep := make([]*catalog.Catalog, 0, len(cats))
	for _, c := range cats {
		if c.Module == nil {
			keep = append(keep, c)
			continue
		}
		vm, err := loadVendorModule(ctx, host, c, wasm[c.EntryID])
		if err != nil {
			log.Error("catalog refused", "entry_id", c.EntryID, "error", err)
			v.refused = append(v.refused, Refusal{EntryID: c.EntryID, Error: err.Error()})
			continue
		}
		v.modules[c.EntryID] = vm
		keep = append(keep, c)
	}
	return keep, v
}

func loadVendorModule(ctx context.Context, host *sandbox.Host, c *catalog.Catalog, wasm []byte) (*vendorModule, error) {
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%w: catalog %q: %s", ErrModuleRefused, c.EntryID, fmt.Sprintf(format, args...))
	}
	if wasm == nil {
		return nil, refuse("module.wasm is missing (the catalog declares module: {sha256, hooks})")
	}
	sum := sha256.Sum256(wasm)
	if got := hex.EncodeToString(sum[:]); got != c.Module.SHA256 {
		return nil, refuse("module.wasm has sha256 %s but domain.yaml pins %s; rebuild or re-pin the module", got, c.Module.SHA256)
	}
	m, err := host.Module(ctx, wasm)
	if err != nil {
		return nil, refuse("%v", err)
	}
	if m.ABIVersion != abi.Version {
		return nil, refuse("module speaks ABI version %d, this host speaks %d", m.ABIVersion, abi.Version)
	}
	vm := &vendorModule{module: m, hooks: slices.Clone(c.Module.Hooks), invokes: map[string]bool{}, cat: c}
	for _, h := range c.Module.Hooks {
		if !m.HasExport(abi.HookExport(h)) {
			return nil, refuse("module declares hook %s but does not export %s", h, abi.HookExport(h))
		}
	}
	for name, mp := range c.Mappings {
		if mp != nil && mp.Transport == "wasm" {
			if !slices.Contains(vm.hooks, abi.HookInvoke) {
				return nil, refuse("capability %s has transport: wasm but the module does not declare the invoke hook", name)
			}
			vm.invokes[name] = true
		}
	}
	return vm, nil
}

// Refused lists catalogs left out of the registry, sorted by entry id;
// never nil, so JSON shows an empty list rather than null.
func (v *vendors) Refused() []Refusal {
	if v == nil {
		return []Refusal{}
	}
	out := append([]Refusal{}, v.refused...)
	slices.SortFunc(out, func(a, b Refusal) int {
		if a.EntryID < b.EntryID {
			return -1
		}
		if a.EntryID > b.EntryID {
			return 1
		}
		return 0
	})
	return out
}

func (v *vendors) sandbox(t *tenant.Tenant, m *sandbox.Module, limits sandbox.Limits) *sandbox.Tenant {
	key := t.ID + "\x00vendor:" + m.Digest
	v.mu.Lock()
	defer v.mu.Unlock()
	if sb, ok := v.sandboxes[key]; ok {
		return sb
	}
	// Owner: module calls count against the tenant's CPU share.
	sb := v.host.Tenant(key, sandbox.TenantSpec{Module: m, Limits: limits, Owner: t.ID})
	v.sandboxes[key] = sb
	return sb
}

// hooks returns the executor hooks of the entries that have a vendor
// module, bound to tenant t: its sandbox, each catalog's origins and the
// secrets secretsFor scopes to that catalog (hmac_sha256 and http resolve
// nothing else; a nil secretsFor resolves nothing).
func (v *vendors) hooks(t *tenant.Tenant, limits sandbox.Limits, entries []string, origins map[string][]egress.Origin, secretsFor func(entryID string) egress.Secrets) map[string]*executor.Hooks {
	if v == nil || len(v.modules) == 0 {
		return nil
	}
	out := map[string]*executor.Hooks{}
	for _, e := range entries {
		vm, ok := v.modules[e]
		if !ok {
			continue
		}
		sb := v.sandbox(t, vm.module, limits)
		var secrets egress.Secrets
		if secretsFor != nil {
			secrets = secretsFor(e)
		}
		env := &sandbox.HostEnv{Secrets: secrets, Origins: origins[e], Egress: v.egress}
		out[e] = vm.bind(sb, env)
	}
	return out
}

// bind builds the executor hooks of one module for one tenant.
func (vm *vendorModule) bind(sb *sandbox.Tenant, env *sandbox.HostEnv) *executor.Hooks {
	h := &executor.Hooks{}
	call := func(ctx context.Context, hook string, in []byte, out any) error {
		// A fresh HostEnv context per call: it holds the call's pending
		// http response.
		b, err := sb.Call(sandbox.WithHostEnv(ctx, env), abi.HookExport(hook), in)
		if err != nil {
			return err
		}
		if err := abi.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s: malformed result from the vendor module: %w", hook, err)
		}
		return nil
	}
	for _, hook := range vm.hooks {
		switch hook {
		case abi.HookPrepareRequest:
			h.PrepareRequest = func(ctx context.Context, req *abi.CompiledRequest) (*abi.CompiledRequest, error) {
				in, err := json.Marshal(req)
				if err != nil {
					return nil, err
				}
				var out abi.CompiledRequest
				if err := call(ctx, hook, in, &out); err != nil {
					return nil, err
				}
				return &out, nil
			}
		case abi.HookDecodeResponse:
			h.DecodeResponse = func(ctx context.Context, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error) {
				in, err := abi.AppendFrame(nil, req, body)
				if err != nil {
					return nil, err
				}
				var out abi.DecodeResponse
				if err := call(ctx, hook, in, &out); err != nil {
					return nil, err
				}
				vendorCells(vm.cat, req.Capability, req.Relation, &out.Table)
				return &out, nil
			}
		case abi.HookInvoke:
			h.Invoke = func(ctx context.Context, req *abi.CompileRequest) (*abi.DecodeResponse, error) {
				in, err := json.Marshal(req)
				if err != nil {
					return nil, err
				}
				var out abi.DecodeResponse
				if err := call(ctx, hook, in, &out); err != nil {
					return nil, err
				}
				vendorCells(vm.cat, req.Capability, "", &out.Table)
				return &out, nil
			}
			invokes := vm.invokes
			h.Invokes = func(capability string) bool { return invokes[capability] }
		}
	}
	return h
}

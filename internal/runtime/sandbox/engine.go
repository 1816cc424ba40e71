package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/request"
	"github.com/plasmd/plasmd/internal/model/tape"
)

// Engine is the client of the standard engine module over one tenant's
// instance pool: it turns plan, compile and decode requests into ABI calls
// and keeps the tenant's catalogs loaded in every instance. The pool it
// embeds (Tenant: limits, queueing, stats, Close) knows nothing of
// catalogs or plans; vendor modules use a pool directly.
type Engine struct {
	*Tenant
	specs     *specCache // extraction specs by catalog digest (decodespec.go)
	templates *templates // request templates by catalog digest (template.go)
}

// NewEngine returns the engine client over pool, whose module must be the
// standard engine.
func NewEngine(pool *Tenant) *Engine {
	return &Engine{Tenant: pool, specs: &specCache{}, templates: &templates{m: map[templateKey]*request.Template{}}}
}

// SetCatalogs replaces the catalogs every instance holds (see
// Tenant.SetLoads for when they are loaded and retired).
func (e *Engine) SetCatalogs(cats []*catalog.Catalog) { e.Tenant.SetLoads(CatalogLoads(cats)) }

// CatalogLoads encodes catalogs as loads for the engine's
// plasm_load_catalog, keyed by entry id and digested by their encoding.
func CatalogLoads(cats []*catalog.Catalog) []Load {
	loads := make([]Load, 0, len(cats))
	for _, c := range cats {
		if c == nil {
			continue
		}
		l := Load{Key: c.EntryID, Name: fmt.Sprintf("catalog %q", c.EntryID), Export: abi.ExportLoadCatalog}
		l.Payload, l.Err = json.Marshal(abi.LoadCatalogRequest{Catalog: c})
		if l.Err != nil {
			l.Err = fmt.Errorf("sandbox: encode catalog %q: %w", c.EntryID, l.Err)
		} else {
			sum := sha256.Sum256(l.Payload)
			l.Digest = hex.EncodeToString(sum[:])
		}
		loads = append(loads, l)
	}
	return loads
}

// Plan parses, checks and plans a program, encoding req.Symbols for this
// call (see PlanWith to reuse an encoding across calls).
func (e *Engine) Plan(ctx context.Context, req *abi.PlanRequest) (*plan.Plan, error) {
	sym, err := EncodeSymbols(req.Symbols)
	if err != nil {
		return nil, &abi.Error{Code: abi.CodeBadRequest, Message: err.Error()}
	}
	return e.PlanWith(ctx, req, sym)
}

// PlanWith plans req with the symbol map already encoded in sym, which
// replaces req.Symbols; nil means wire names only.
func (e *Engine) PlanWith(ctx context.Context, req *abi.PlanRequest, sym *Symbols) (*plan.Plan, error) {
	// The header is binary (no JSON decoding in the guest) and names the
	// symbol map by digest only: an instance keeps the maps it decoded, so
	// the map itself travels only when the instance answers that it does
	// not hold it.
	// The answer comes in the plan's binary wire form when the engine
	// can write it (planwire.go), else as JSON.
	head := *req
	head.Symbols = nil
	head.SymbolsDigest = sym.Digest()
	head.PlanWire = e.planWire()
	frame := abi.AppendFrameRaw(nil, abi.AppendPlanHeader(nil, &head), nil)
	var p *plan.Plan
	use := func(b []byte) (err error) { p, err = decodePlan(b); return err }
	err := e.Tenant.do(ctx, abi.ExportPlan, needsOf(req.Entries), frame, nil, use)
	if ae, ok := err.(*abi.Error); ok && ae.Code == abi.CodeSymbolsUnknown && sym != nil {
		err = e.Tenant.do(ctx, abi.ExportPlan, needsOf(req.Entries), frame, sym.json, use)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Compile builds the backend request of one capability call: filled
// natively from the capability's template when the engine made one and
// the call's values fit it, else compiled in the guest.
func (e *Engine) Compile(ctx context.Context, req *abi.CompileRequest) (*abi.CompiledRequest, error) {
	in, err := json.Marshal(req)
	if err != nil {
		// The guest would have refused it the same way.
		return nil, &abi.Error{Code: abi.CodeBadRequest, Message: "encode " + abi.ExportCompile + " request: " + err.Error()}
	}
	if len(in) <= e.Tenant.Limits().MaxInput {
		if r, ok := e.template(ctx, req.EntryID, req.Capability).Fill(req.Vars, req.Page); ok {
			return r, nil
		}
	}
	// Past the tenant's input limit the guest path refuses with
	// ErrInputTooLarge, as it did before templates: a filled template must
	// not accept what the guest would not.
	var r abi.CompiledRequest
	if err := e.Tenant.do(ctx, abi.ExportCompile, []string{req.EntryID}, in, nil, func(b []byte) error { return abi.Unmarshal(b, &r) }); err != nil {
		return nil, err
	}
	return &r, nil
}

// DecodeInGuest turns a backend response body into rows inside the guest
// (plasm_decode), for engines without the spec export and for tests that
// compare the two sides. A successful JSON body is tokenised into a tape
// first; any other body is written into the guest straight from the
// caller's slice.
func (e *Engine) DecodeInGuest(ctx context.Context, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error) {
	// A successful JSON body is tokenised here, natively, and travels as a
	// tape: the guest then builds values instead of scanning bytes (see
	// guest/tape). Anything else goes raw so the guest reports it exactly.
	r := *req
	payload := body
	if r.Status >= 200 && r.Status <= 299 && len(bytes.TrimSpace(body)) > 0 {
		if tp, err := tape.AppendJSON(nil, body); err == nil {
			payload, r.Tape = tp, true
		}
	}
	head, err := abi.AppendFrame(nil, &r, nil)
	if err != nil {
		return nil, &abi.Error{Code: abi.CodeBadRequest, Message: "encode decode request: " + err.Error()}
	}
	var out abi.DecodeResponse
	if err := e.Tenant.do(ctx, abi.ExportDecode, []string{req.EntryID}, head, payload, func(b []byte) error {
		if !r.Tape {
			return abi.Unmarshal(b, &out)
		}
		h, rows, err := abi.SplitFrame(b)
		if err != nil {
			return err
		}
		var th abi.DecodeTapeHeader
		if err := abi.Unmarshal(h, &th); err != nil {
			return err
		}
		out.Next = th.Next
		out.Table.Columns, out.Table.Rows, err = tape.DecodeTable(rows)
		return err
	}); err != nil {
		return nil, err
	}
	return &out, nil
}

func (e *Engine) jsonCall(ctx context.Context, export string, needs []string, req, resp any) error {
	in, err := json.Marshal(req)
	if err != nil {
		// The guest would have refused it the same way.
		return &abi.Error{Code: abi.CodeBadRequest, Message: "encode " + export + " request: " + err.Error()}
	}
	return e.Tenant.do(ctx, export, needs, in, nil, func(b []byte) error { return abi.Unmarshal(b, resp) })
}

// needsOf is the catalogs a plan needs: its entries, or all when it names
// none (the guest then resolves against everything loaded). Compile and
// Decode name their one entry, so an instance installs a catalog on the
// first call that uses it.
func needsOf(entries []string) []string {
	if len(entries) == 0 {
		return nil
	}
	return entries
}

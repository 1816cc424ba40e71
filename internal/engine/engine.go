// Package engine is the standard plasmd engine: it owns the catalogs loaded
// into one instance and dispatches ABI operations to the parser/planner
// (lang), the request compiler (cml) and the response decoder (decode).
//
// The same Engine runs inside the wasip1 guest (guest/cmd/engine) and
// natively, which is how benchmarks measure the sandbox's cost as a ratio.
package engine

import (
	"encoding/json"
	"fmt"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/cml"
	"github.com/plasmd/plasmd/internal/engine/decode"
	"github.com/plasmd/plasmd/internal/engine/lang"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/request"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/internal/model/tape"
)

// Engine holds one instance's state: the catalogs loaded into it and the
// symbol maps it has decoded.
type Engine struct {
	catalogs map[string]*catalog.Catalog
	symbols  map[string]*symbol.Map // by digest; see abi.PlanRequest.SymbolsDigest
	out      []byte                 // reused output buffer
	// plans keeps the planner's buffers between plan calls; each plan is
	// encoded into out before the next call can reuse them.
	plans lang.Scratch
}

// maxSymbolMaps bounds the decoded maps an instance keeps: enough for the
// sessions one tenant works in at once, small next to its catalogs.
const maxSymbolMaps = 32

// New returns an empty engine.
func New() *Engine {
	return &Engine{catalogs: map[string]*catalog.Catalog{}, symbols: map[string]*symbol.Map{}}
}

// symbolMap returns the map in payload, decoding it only when digest is
// new to this instance. An empty payload means no symbols (wire names only).
// A digest with no payload names a map the host expects this instance to
// hold; when it does not, the answer is abi.CodeSymbolsUnknown and the
// host sends the map.
func (e *Engine) symbolMap(digest string, payload []byte) (*symbol.Map, *abi.Error) {
	if m, ok := e.symbols[digest]; ok && digest != "" {
		return m, nil
	}
	if len(payload) == 0 {
		if digest != "" {
			return nil, &abi.Error{Code: abi.CodeSymbolsUnknown, Message: "plasm_plan: symbol map " + digest + " is not held by this instance; send it"}
		}
		return nil, nil
	}
	m := &symbol.Map{}
	if err := json.Unmarshal(payload, m); err != nil {
		return nil, badRequest(abi.ExportPlan, fmt.Errorf("symbol map: %w", err))
	}
	if digest != "" {
		if len(e.symbols) >= maxSymbolMaps {
			clear(e.symbols)
		}
		e.symbols[digest] = m
	}
	return m, nil
}

// Handle runs the op named by export on in and returns the output envelope.
// The returned slice is reused by the next call. Handle never panics: a
// panic inside an op becomes an internal error.
func (e *Engine) Handle(export string, in []byte) (out []byte) {
	e.out = e.out[:0]
	// The deferred recover sits in a function with one return, so Go
	// open-codes it; in dispatch, with its many returns, it would go
	// through the runtime's defer records on every call.
	defer func() {
		if r := recover(); r != nil {
			out = e.fail(&abi.Error{Code: abi.CodeInternal, Message: fmt.Sprintf("engine panic: %v", r)})
		}
	}()
	return e.dispatch(export, in)
}

// dispatch routes one call to its export's handler. It stays whole: it
// is the table of every ABI export, one short case each, and read as one
// it shows that each export answers exactly once.
func (e *Engine) dispatch(export string, in []byte) []byte {
	switch export {
	case abi.ExportPing:
		e.out = append(e.out, abi.StatusOK)
		return append(e.out, in...)
	case abi.ExportLoadCatalog:
		var req abi.LoadCatalogRequest
		if err := json.Unmarshal(in, &req); err != nil || req.Catalog == nil || req.Catalog.EntryID == "" {
			return e.fail(badRequest(export, err))
		}
		// The catalog crossed the sandbox boundary: Freeze checks the
		// invariants every op relies on before anything indexes it, and
		// nothing in the instance changes it from here on.
		if err := req.Catalog.Freeze(); err != nil {
			return e.fail(&abi.Error{Code: abi.CodeCatalog, Message: err.Error(),
				Hint: "the host's loader builds consistent catalogs; this one was changed or built elsewhere"})
		}
		e.catalogs[req.Catalog.EntryID] = req.Catalog
		return e.ok(abi.LoadCatalogResponse{EntryID: req.Catalog.EntryID, Digest: req.Catalog.Digest})
	case abi.ExportPlan:
		header, payload, err := abi.SplitFrame(in)
		if err != nil {
			return e.fail(badRequest(export, err))
		}
		var req abi.PlanRequest
		if err := abi.ParsePlanHeader(header, &req); err != nil {
			return e.fail(badRequest(export, err))
		}
		var aerr *abi.Error
		if req.Symbols, aerr = e.symbolMap(req.SymbolsDigest, payload); aerr != nil {
			return e.fail(aerr)
		}
		p, aerr := e.plans.Plan(&req, e.catalogs)
		if aerr != nil {
			return e.fail(aerr)
		}
		e.out = append(e.out[:0], abi.StatusOK)
		if req.PlanWire == plan.WireVersion {
			var err error
			if e.out, err = p.AppendBinary(e.out); err == nil {
				return e.out
			}
			// A plan the binary form cannot carry goes as JSON.
			e.out = e.out[:1]
		}
		e.out = p.AppendJSON(e.out)
		return e.out
	case abi.ExportPlanWire:
		return e.ok(plan.WireVersion)
	case abi.ExportCompile:
		var req abi.CompileRequest
		if err := abi.Unmarshal(in, &req); err != nil {
			return e.fail(badRequest(export, err))
		}
		cat, aerr := e.catalog(req.EntryID)
		if aerr != nil {
			return e.fail(aerr)
		}
		r, aerr := cml.Compile(cat, &req)
		if aerr != nil {
			return e.fail(aerr)
		}
		return e.ok(r)
	case abi.ExportDecodeSpec:
		return e.decodeSpec(in)
	case abi.ExportTemplate:
		var req abi.TemplateRequest
		if err := abi.Unmarshal(in, &req); err != nil {
			return e.fail(badRequest(export, err))
		}
		cat, aerr := e.catalog(req.EntryID)
		if aerr != nil {
			return e.fail(aerr)
		}
		t, reason := cml.Template(cat, req.Capability)
		return e.ok(request.Answer{Template: t, Reason: reason})
	case abi.ExportDecode:
		header, body, err := abi.SplitFrame(in)
		if err != nil {
			return e.fail(badRequest(export, err))
		}
		var req abi.DecodeRequest
		if err := abi.Unmarshal(header, &req); err != nil {
			return e.fail(badRequest(export, err))
		}
		cat, aerr := e.catalog(req.EntryID)
		if aerr != nil {
			return e.fail(aerr)
		}
		r, aerr := decode.Decode(cat, &req, body)
		if aerr != nil {
			return e.fail(aerr)
		}
		if !req.Tape {
			return e.ok(r)
		}
		e.out = append(e.out[:0], abi.StatusOK)
		if e.out, err = abi.AppendFrame(e.out, abi.DecodeTapeHeader{Next: r.Next}, nil); err != nil {
			return e.fail(&abi.Error{Code: abi.CodeInternal, Message: "encode response: " + err.Error()})
		}
		e.out = tape.AppendTable(e.out, r.Table.Columns, r.Table.Rows)
		return e.out
	}
	return e.fail(&abi.Error{Code: abi.CodeBadRequest, Message: "unknown export " + export})
}

// Catalog returns a loaded catalog (for native callers and tests).
func (e *Engine) Catalog(entryID string) *catalog.Catalog { return e.catalogs[entryID] }

func (e *Engine) catalog(entryID string) (*catalog.Catalog, *abi.Error) {
	if c := e.catalogs[entryID]; c != nil {
		return c, nil
	}
	return nil, &abi.Error{Code: abi.CodeCatalog, Message: fmt.Sprintf("catalog %q is not loaded in this instance", entryID)}
}

func (e *Engine) ok(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return e.fail(&abi.Error{Code: abi.CodeInternal, Message: "encode response: " + err.Error()})
	}
	e.out = append(e.out[:0], abi.StatusOK)
	return append(e.out, b...)
}

func (e *Engine) fail(ae *abi.Error) []byte {
	b, _ := json.Marshal(ae)
	e.out = append(e.out[:0], abi.StatusError)
	return append(e.out, b...)
}

func badRequest(export string, err error) *abi.Error {
	msg := "malformed request"
	if err != nil {
		msg += ": " + err.Error()
	}
	return &abi.Error{Code: abi.CodeBadRequest, Message: export + ": " + msg}
}

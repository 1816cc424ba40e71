package engine

import (
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/decode"
)

// decodeSpec answers abi.ExportDecodeSpec: the extraction spec of one
// capability, compiled from the loaded catalog, for the host to apply to
// every page of its responses.
func (e *Engine) decodeSpec(in []byte) []byte {
	var req abi.DecodeSpecRequest
	if err := abi.Unmarshal(in, &req); err != nil {
		return e.fail(badRequest(abi.ExportDecodeSpec, err))
	}
	cat, aerr := e.catalog(req.EntryID)
	if aerr != nil {
		return e.fail(aerr)
	}
	s, aerr := decode.Spec(cat, req.Capability, req.Relation)
	if aerr != nil {
		return e.fail(aerr)
	}
	return e.ok(s)
}

// Package decode compiles a capability's response shape into an
// extraction spec (internal/model/extract): which rows a backend's answer
// holds, which field feeds which column, how values are coerced and
// derived, embedded from_parent_get relation rows, and how the next page's
// state is computed. The engine compiles specs inside the sandbox, where
// catalog logic stays; the host applies them natively to every page, and
// Decode applies them here for the guest's own plasm_decode, so there is
// one decoder.
//
// Pagination rules worth knowing when writing a catalog:
//   - Relative next-page references (a Link header target, a next-URL
//     field) resolve against DecodeRequest.RequestURL, the URL that was
//     requested, as RFC 8288 and RFC 3986 require; http_backend is only the
//     fallback when the host leaves RequestURL empty. The resolved URL must
//     still be on the catalog's origin, which guest/cml checks when it
//     compiles the continuation.
//   - A counter without step advances by the number of items the page
//     carried. That suits offset counters and is wrong for page-number
//     counters, which must set step: 1.
package decode

import (
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
	"github.com/plasmd/plasmd/internal/model/tape"
)

// Decode decodes one response body: it compiles the capability's spec and
// applies it, exactly as the host applies a spec the guest compiled.
func Decode(cat *catalog.Catalog, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, *abi.Error) {
	if cat == nil || req == nil {
		return nil, &abi.Error{Code: abi.CodeBadRequest, Message: "decode: missing catalog or request"}
	}
	s, aerr := Spec(cat, req.Capability, req.Relation)
	if aerr != nil {
		return nil, aerr
	}
	var opt extract.Options
	if req.Tape {
		opt.Parse = tapeTree
	}
	return extract.Apply(s, req, body, opt)
}

// tapeTree builds the document of a body the host sent as a tape.
func tapeTree(b []byte) (any, error) { return tape.Decode(b) }

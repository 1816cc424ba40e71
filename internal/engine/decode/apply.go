package decode

import (
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
	"github.com/plasmd/plasmd/internal/model/tape"
)

// decodeSpec decodes one response body by compiling the capability's spec
// and applying it, as the host does natively.
func decodeSpec(cat *catalog.Catalog, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, *abi.Error) {
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
func tapeTree(b []byte) (any, error) {
	root, err := tape.Root(b)
	if err != nil {
		return nil, err
	}
	return root.Value()
}

// Package decode turns backend response bodies into rows.
package decode

import (
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/catalog"
)

// Decode decodes one response body.
func Decode(cat *catalog.Catalog, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, *abi.Error) {
	return nil, &abi.Error{Code: abi.CodeInternal, Message: "decoder not built yet"}
}

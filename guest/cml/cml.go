// Package cml evaluates catalog mapping expressions into backend requests.
package cml

import (
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/catalog"
)

// Compile builds the wire request of one capability call.
func Compile(cat *catalog.Catalog, req *abi.CompileRequest) (*abi.CompiledRequest, *abi.Error) {
	return nil, &abi.Error{Code: abi.CodeInternal, Message: "compiler not built yet"}
}

//go:build wasip1

// Command invoker is a test vendor module serving capabilities with the
// invoke hook: it fetches Vars["url"] through the host's http import and
// returns the status and body as one row.
package main

import (
	"errors"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/pdk"
)

func main() {}

//go:wasmexport plasm_hook_invoke
func invoke(n uint32) uint64 { return pdk.Invoke(n, fetch) }

func fetch(req *abi.CompileRequest) (*abi.DecodeResponse, error) {
	url, _ := req.Vars["url"].(string)
	resp, err := pdk.HTTP(&abi.CompiledRequest{Method: "GET", URL: url})
	if err != nil {
		var ee *pdk.EgressError
		if errors.As(err, &ee) {
			return nil, pdk.Errorf(abi.CodeBadRequest, "egress %s: %s", ee.Kind, ee.Message)
		}
		return nil, err
	}
	return &abi.DecodeResponse{Table: abi.Table{
		Columns: []string{"status", "body"},
		Rows:    [][]any{{resp.Status, string(resp.Body)}},
	}}, nil
}

package pdk_test

import (
	"fmt"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/pdk"
)

// A prepare_request hook receives the request the standard engine compiled
// and returns it changed (here: one extra header). In a module the export
// is one line:
//
//	//go:wasmexport plasm_hook_prepare_request
//	func prepareRequest(n uint32) uint64 { return pdk.PrepareRequest(n, addVersion) }
//
// HandlePrepareRequest is the same logic without guest memory, for tests.
func ExampleHandlePrepareRequest() {
	addVersion := func(r *abi.CompiledRequest) (*abi.CompiledRequest, error) {
		r.Headers = append(r.Headers, [2]string{"X-Api-Version", "2"})
		return r, nil
	}
	in := []byte(`{"method":"GET","url":"https://api.example.com/items"}`)
	out := pdk.HandlePrepareRequest(in, addVersion)
	if out[0] != abi.StatusOK {
		panic(string(out[1:]))
	}
	var got abi.CompiledRequest
	if err := abi.Unmarshal(out[1:], &got); err != nil {
		panic(err)
	}
	fmt.Println(got.Method, got.URL, got.Headers)
	// Output: GET https://api.example.com/items [[X-Api-Version 2]]
}

//go:build wasip1

package main

import "github.com/plasmd/plasmd/guest/pdk"

//go:wasmexport plasm_hook_prepare_request
func prepareRequest(n uint32) uint64 { return pdk.PrepareRequest(n, sign) }

//go:wasmexport plasm_hook_decode_response
func decodeResponse(n uint32) uint64 { return pdk.DecodeResponse(n, decode) }

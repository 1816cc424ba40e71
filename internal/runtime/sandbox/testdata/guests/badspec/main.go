//go:build wasip1

// Command badspec is a hostile test guest posing as the engine: it accepts
// any catalog and answers plasm_decode_spec with a spec chosen by the
// requested capability — of the wrong version, over the column limit, not
// JSON, an error, or no answer at all (an endless loop). The host must
// refuse each with a typed error and never apply it.
package main

import (
	"bytes"
	"strings"
	"unsafe"
)

var input, output []byte

func main() {}

//go:wasmexport plasm_alloc
func alloc(size uint32) uint32 {
	if uint64(cap(input)) < uint64(max(size, 1)) {
		input = make([]byte, max(size, 1))
	}
	input = input[:cap(input)]
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(input))))
}

func respond(status byte, msg []byte) uint64 {
	output = append(append(output[:0], status), msg...)
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(output))))<<32 | uint64(len(output))
}

//go:wasmexport plasm_abi_version
func abiVersion() int32 { return 1 }

//go:wasmexport plasm_ping
func ping(n uint32) uint64 { return respond(0, input[:n]) }

//go:wasmexport plasm_load_catalog
func loadCatalog(n uint32) uint64 { return respond(0, []byte(`{"entry_id":"bad"}`)) }

//go:wasmexport plasm_decode_spec
func decodeSpec(n uint32) uint64 {
	req := input[:n]
	switch {
	case bytes.Contains(req, []byte(`"version"`)):
		return respond(0, []byte(`{"version":99,"capability":"c","columns":[]}`))
	case bytes.Contains(req, []byte(`"columns"`)):
		return respond(0, []byte(`{"version":1,"capability":"c","columns":[`+strings.Repeat(`{"name":"x"},`, 2000)+`{"name":"y"}]}`))
	case bytes.Contains(req, []byte(`"garbage"`)):
		return respond(0, []byte(`{"version":1,`))
	case bytes.Contains(req, []byte(`"refuse"`)):
		return respond(1, []byte(`{"code":"decode","message":"no such capability"}`))
	case bytes.Contains(req, []byte(`"loop"`)):
		for {
		}
	}
	return respond(0, []byte(`{"version":1,"capability":"c","columns":[{"name":"id","path":["id"]}]}`))
}

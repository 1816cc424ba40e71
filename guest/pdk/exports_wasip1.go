//go:build wasip1

package pdk

import (
	"encoding/json"
	"runtime"
	"unsafe"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/hostabi"
)

// input is the buffer plasm_alloc hands the host; output is the last
// envelope. Both stay referenced between calls because the host writes and
// reads them from outside Go. One call at a time, so no locking.
var input, output []byte

//go:wasmexport plasm_abi_version
func abiVersion() int32 { return abi.Version }

//go:wasmexport plasm_alloc
func alloc(size uint32) uint32 {
	if n := max(uint64(size), 1); uint64(cap(input)) < n {
		input = make([]byte, n)
	}
	input = input[:cap(input)]
	return ptrOf(input)
}

func ptrOf(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

// request returns the n input bytes of the current call, or false when the
// host claims more than it was given room for.
func request(n uint32) ([]byte, bool) {
	if uint64(n) > uint64(len(input)) {
		return nil, false
	}
	return input[:n], true
}

func finish(env []byte) uint64 {
	output = env
	return abi.PackResult(ptrOf(output), uint32(len(output)))
}

func badLength() uint64 {
	return finish(errorEnvelope(Errorf(abi.CodeBadRequest, "input length exceeds the plasm_alloc buffer")))
}

// PrepareRequest serves a plasm_hook_prepare_request export with fn.
func PrepareRequest(n uint32, fn func(*abi.CompiledRequest) (*abi.CompiledRequest, error)) uint64 {
	in, ok := request(n)
	if !ok {
		return badLength()
	}
	return finish(HandlePrepareRequest(in, fn))
}

// DecodeResponse serves a plasm_hook_decode_response export with fn.
func DecodeResponse(n uint32, fn func(*abi.DecodeRequest, []byte) (*abi.DecodeResponse, error)) uint64 {
	in, ok := request(n)
	if !ok {
		return badLength()
	}
	return finish(HandleDecodeResponse(in, fn))
}

// Invoke serves a plasm_hook_invoke export with fn.
func Invoke(n uint32, fn func(*abi.CompileRequest) (*abi.DecodeResponse, error)) uint64 {
	in, ok := request(n)
	if !ok {
		return badLength()
	}
	return finish(HandleInvoke(in, fn))
}

//go:wasmimport plasm hmac_sha256
func hostHMACSHA256(namePtr, nameLen, dataPtr, dataLen, outPtr uint32) int32

//go:wasmimport plasm http
func hostHTTP(reqPtr, reqLen uint32) int64

//go:wasmimport plasm http_read
func hostHTTPRead(outPtr, outLen uint32) int32

type wasmHost struct{}

func init() { host = wasmHost{} }

func (wasmHost) HMACSHA256(secret string, data []byte) ([]byte, error) {
	name := []byte(secret)
	out := make([]byte, hostabi.HMACSize)
	// Zero-length slices still need a valid address for the host's bounds
	// check; a one-byte spare keeps SliceData non-nil.
	name = append(name, 0)[:len(name)]
	data = append(data[:len(data):len(data)], 0)[:len(data)]
	rc := hostHMACSHA256(ptrOf(name), uint32(len(name)), ptrOf(data), uint32(len(data)), ptrOf(out))
	runtime.KeepAlive(name)
	runtime.KeepAlive(data)
	runtime.KeepAlive(out)
	if rc != hostabi.OK {
		return nil, &HostError{Func: hostabi.HMACSHA256, Code: int64(rc)}
	}
	return out, nil
}

func (wasmHost) HTTP(req *abi.CompiledRequest) (*Response, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	size := hostHTTP(ptrOf(raw), uint32(len(raw)))
	runtime.KeepAlive(raw)
	if size < 0 {
		return nil, &HostError{Func: hostabi.HTTP, Code: size}
	}
	frame := make([]byte, max(size, 1))
	if rc := hostHTTPRead(ptrOf(frame), uint32(size)); rc != hostabi.OK {
		return nil, &HostError{Func: hostabi.HTTPRead, Code: int64(rc)}
	}
	runtime.KeepAlive(frame)
	return parseHTTPResponse(frame[:size])
}

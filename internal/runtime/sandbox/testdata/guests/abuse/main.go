//go:build wasip1

// Command abuse is a hostile test guest that calls the host imports with
// pointers and lengths outside its memory. plasm_ping's message names the
// case; the reply is the host statuses the calls returned, comma-separated,
// so the test can check that the host refused each one without trapping.
// Any message that is not a case is echoed.
package main

import (
	"strconv"
	"strings"
	"unsafe"
)

var input, output []byte

func main() {}

//go:wasmimport plasm hmac_sha256
func hmacSHA256(namePtr, nameLen, dataPtr, dataLen, outPtr uint32) int32

//go:wasmimport plasm http
func httpSend(reqPtr, reqLen uint32) int64

//go:wasmimport plasm http_read
func httpRead(outPtr, outLen uint32) int32

//go:wasmexport plasm_alloc
func alloc(size uint32) uint32 {
	if uint64(cap(input)) < uint64(max(size, 1)) {
		input = make([]byte, max(size, 1))
	}
	input = input[:cap(input)]
	return ptr(input)
}

func ptr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

func respond(msg []byte) uint64 {
	output = append(append(output[:0], 0), msg...)
	return uint64(ptr(output))<<32 | uint64(len(output))
}

//go:wasmexport plasm_abi_version
func abiVersion() int32 { return 1 }

// Globals keep the buffers alive and at fixed addresses across the host
// calls.
var (
	name    = []byte("KEY")
	data    = []byte("payload")
	mac     = make([]byte, 32)
	goodReq = []byte(`{"method":"GET","url":"http://api.test/x"}`)
	badReq  = []byte(`{not json`)
	frame   = make([]byte, 1<<16)
)

const (
	top    = 0xffffffff // the last addressable byte of a wasm32 memory
	wrap   = 0xfffffff0 // plus a 32-byte length, wraps around in u32
	negOne = 0xffffffff // -1 as a u32 length
	half   = 0x80000000 // "negative" as an i32: 2 GiB
)

func cases(c string) []int64 {
	switch c {
	case "hmac ok":
		return []int64{int64(hmacSHA256(ptr(name), uint32(len(name)), ptr(data), uint32(len(data)), ptr(mac)))}
	case "hmac name at 4GiB":
		return []int64{int64(hmacSHA256(top, 1, ptr(data), uint32(len(data)), ptr(mac)))}
	case "hmac name length -1":
		return []int64{int64(hmacSHA256(ptr(name), negOne, ptr(data), uint32(len(data)), ptr(mac)))}
	case "hmac data wraps":
		return []int64{int64(hmacSHA256(ptr(name), uint32(len(name)), wrap, 32, ptr(mac)))}
	case "hmac data at 2GiB":
		return []int64{int64(hmacSHA256(ptr(name), uint32(len(name)), half, 1, ptr(mac)))}
	case "hmac out at 4GiB":
		return []int64{int64(hmacSHA256(ptr(name), uint32(len(name)), ptr(data), uint32(len(data)), top))}
	case "hmac out wraps":
		return []int64{int64(hmacSHA256(ptr(name), uint32(len(name)), ptr(data), uint32(len(data)), wrap))}
	case "http ok":
		size := httpSend(ptr(goodReq), uint32(len(goodReq)))
		if size < 0 {
			return []int64{size}
		}
		return []int64{boolCode(size > 0), int64(httpRead(ptr(frame), uint32(size)))}
	case "http request at 4GiB":
		return []int64{httpSend(top, 1)}
	case "http request wraps":
		return []int64{httpSend(wrap, 32)}
	case "http request length -1":
		return []int64{httpSend(ptr(goodReq), negOne)}
	case "http empty request":
		return []int64{httpSend(0, 0)}
	case "http malformed request":
		return []int64{httpSend(ptr(badReq), uint32(len(badReq)))}
	case "read without request":
		return []int64{int64(httpRead(ptr(frame), uint32(len(frame))))}
	case "read bad buffers":
		// Every refused read leaves the response pending, so the last,
		// valid read still gets it.
		size := httpSend(ptr(goodReq), uint32(len(goodReq)))
		if size < 0 {
			return []int64{size}
		}
		return []int64{
			int64(httpRead(ptr(frame), uint32(size-1))), // too small
			int64(httpRead(top, uint32(size))),
			int64(httpRead(wrap, negOne)),
			int64(httpRead(half, uint32(size))),
			int64(httpRead(ptr(frame), uint32(size))),
			int64(httpRead(ptr(frame), uint32(size))), // already fetched
		}
	}
	return nil
}

func boolCode(ok bool) int64 {
	if ok {
		return 0
	}
	return -100
}

//go:wasmexport plasm_ping
func ping(n uint32) uint64 {
	msg := input[:n]
	codes := cases(string(msg))
	if codes == nil {
		return respond(msg)
	}
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = strconv.FormatInt(c, 10)
	}
	return respond([]byte(strings.Join(parts, ",")))
}

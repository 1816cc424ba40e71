// Package abi is the one description of the boundary between the host and a
// plasmd guest module. Host (runtime/) and guest (guest/engine, guest/pdk)
// both import it, so exports, encodings and versions cannot drift apart.
//
// # Calling convention
//
// A guest exports:
//
//	plasm_abi_version() -> i32            must return Version
//	plasm_alloc(size u32) -> ptr u32      a guest-owned input buffer of at least size bytes
//	<op export>(len u32) -> u64           one per operation (see the Export* names)
//
// To call an operation the host asks for (or reuses) the input buffer, writes
// the request into it, and calls the op export with the request length. The
// result packs the output's pointer in the high 32 bits and its length in the
// low 32 bits. The output stays valid until the next call into the instance;
// the host copies it out before calling again.
//
// # Output envelope
//
// Byte 0 of every output is a status: StatusOK followed by the op's response,
// or StatusError followed by a JSON Error. A trap (panic that escapes, stack
// or memory exhaustion, a deadline) is not an output: the host discards the
// instance.
//
// # Encodings
//
// Requests and responses are JSON, except that ops carrying an opaque payload
// (ExportDecode, ExportPlan, vendor hooks) use a frame: a little-endian u32
// header length, the JSON header, then the raw payload bytes, so large
// response bodies are never escaped or copied into JSON strings.
//
// ExportPlan's header is binary (AppendPlanHeader) and its answer is the
// plan as JSON, or in the plan's binary wire form when the header asks for
// it (PlanRequest.PlanWire, ExportPlanWire). Its payload is the session's
// symbol map as JSON and its header names the map's digest. The engine keeps decoded maps by digest, so a
// session's map is decoded once per instance, not once per program: guest
// code pays for every loop iteration under wazero's deadline checks (see
// docs/decisions.md), and the map is the largest part of a plan request.
package abi

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// Version is the ABI version a guest must report from plasm_abi_version.
const Version = 1

// Required exports of every guest.
const (
	ExportVersion = "plasm_abi_version"
	ExportAlloc   = "plasm_alloc"
)

// Op exports of the standard engine.
const (
	ExportPing        = "plasm_ping"         // raw bytes in, same bytes out
	ExportLoadCatalog = "plasm_load_catalog" // LoadCatalogRequest → LoadCatalogResponse
	ExportPlan        = "plasm_plan"         // frame(PlanRequest, symbol map JSON) → plan.Plan (JSON or binary; see ExportPlanWire)
	ExportCompile     = "plasm_compile"      // CompileRequest → CompiledRequest
	ExportDecode      = "plasm_decode"       // frame(DecodeRequest, body) → DecodeResponse
	// ExportDecodeSpec compiles a capability's extraction spec, which the
	// host applies natively to every page (DecodeSpecRequest → spec JSON).
	// Optional: a host falls back to ExportDecode for engines without it.
	ExportDecodeSpec = "plasm_decode_spec"
)

// Vendor hook exports. A catalog's module declares which it provides; each
// declared hook must be exported.
const (
	HookPrepareRequest = "prepare_request"
	HookDecodeResponse = "decode_response"
	HookInvoke         = "invoke"
)

// HookExport is the export name of a vendor hook.
func HookExport(hook string) string { return "plasm_hook_" + hook }

// Output status bytes.
const (
	StatusOK    byte = 0
	StatusError byte = 1
)

// Error codes a guest returns. Callers branch on Code; Message is for humans.
const (
	CodeSyntax        = "syntax"
	CodeUnknownEntity = "unknown_entity"
	CodeUnknownField  = "unknown_field"
	CodeUnknownMethod = "unknown_method"
	CodeType          = "type"
	CodeCatalog       = "catalog"
	CodeCompile       = "compile"
	CodeDecode        = "decode"
	CodeBadRequest    = "bad_request"
	CodeInternal      = "internal"
)

// Error is the guest's error channel. Line and Column are 1-based positions
// in the program (0 when not about a program).
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Hint    string `json:"hint,omitempty"`
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Message)
	}
	return e.Message
}

// PackResult packs an output pointer and length into a call's u64 result.
func PackResult(ptr, n uint32) uint64 { return uint64(ptr)<<32 | uint64(n) }

// UnpackResult splits a call's u64 result into pointer and length.
func UnpackResult(v uint64) (ptr, n uint32) { return uint32(v >> 32), uint32(v) }

// ErrFrame reports a malformed frame.
var ErrFrame = errors.New("abi: malformed frame")

// AppendFrame appends a frame of header (JSON-encoded) and payload to dst.
func AppendFrame(dst []byte, header any, payload []byte) ([]byte, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return dst, err
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(h)))
	dst = append(dst, h...)
	return append(dst, payload...), nil
}

// SplitFrame splits a frame into its JSON header and payload without copying.
func SplitFrame(b []byte) (header, payload []byte, err error) {
	if len(b) < 4 {
		return nil, nil, ErrFrame
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, ErrFrame
	}
	// The header's capacity ends where the payload starts, so a caller that
	// appends to the header cannot overwrite the payload it shares memory with.
	return b[4 : 4+n : 4+n], b[4+n:], nil
}

// Unmarshal decodes a JSON message keeping numbers as json.Number, so an
// integer id above 2^53 crosses the boundary exactly instead of being
// rounded through float64 (a rounded id in a mutation hits another row).
func Unmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("abi: trailing data after the JSON message")
	}
	return nil
}

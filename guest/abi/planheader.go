package abi

import (
	"encoding/binary"
	"errors"
)

// PlanHeaderTag starts a binary ExportPlan header. A JSON header starts
// with '{' (or whitespace), so the engine tells the two apart by the
// first byte and still accepts JSON from older hosts.
const PlanHeaderTag byte = 0xB1

// CodeSymbolsUnknown is the engine's answer to a plan request that names
// a symbol map by digest without carrying it, when the instance does not
// hold that map: the host sends the request again with the map. Hosts
// send a map only then, so a plan call carries the program and digests,
// not the session's whole map.
const CodeSymbolsUnknown = "symbols_unknown"

// ExportPlanWire marks an engine whose plan header may carry
// PlanRequest.PlanWire, asking for the plan in its binary wire form
// (internal/model/plan: AppendBinary, DecodeBinary) instead of JSON. A host
// sets PlanWire only for a module that exports it, because an older
// engine refuses a header with the field; an older host never sets it and
// gets JSON. Called, it answers the wire version the engine writes (a JSON
// number). The answer to a plan call is either form: the binary one starts
// with plan.WireTag, which no JSON text starts with, so a host reads both.
const ExportPlanWire = "plasm_plan_wire"

// Limits of a binary plan header: the decoder refuses anything larger
// before allocating for it.
const (
	maxHeaderEntries = 1 << 10
	maxPlanWire      = 1 << 16
)

// ErrPlanHeader reports a malformed binary plan header.
var ErrPlanHeader = errors.New("abi: malformed binary plan header")

// AppendFrameRaw appends a frame of an already encoded header and payload
// to dst.
func AppendFrameRaw(dst, header, payload []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(header)))
	dst = append(dst, header...)
	return append(dst, payload...)
}

// AppendPlanHeader appends req's program, symbol-map digest and entries in
// the binary plan header form (req.Symbols is not part of a header).
// Strings are uvarint-length-prefixed; the entries are preceded by their
// count. A non-zero PlanWire follows as a uvarint; when it is 0 nothing
// follows, so the header is the one engines before ExportPlanWire read.
func AppendPlanHeader(dst []byte, req *PlanRequest) []byte {
	dst = append(dst, PlanHeaderTag)
	dst = appendString(dst, req.Program)
	dst = appendString(dst, req.SymbolsDigest)
	dst = binary.AppendUvarint(dst, uint64(len(req.Entries)))
	for _, e := range req.Entries {
		dst = appendString(dst, e)
	}
	if req.PlanWire > 0 {
		dst = binary.AppendUvarint(dst, uint64(req.PlanWire))
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// ParsePlanHeader decodes a plan header, binary or JSON, into req. The
// binary decoder is a single forward pass: every loop advances through b
// or counts down a length already checked against what is left of b, so
// its work is linear in len(b) whatever the bytes are.
func ParsePlanHeader(b []byte, req *PlanRequest) error {
	if len(b) == 0 || b[0] != PlanHeaderTag {
		return Unmarshal(b, req)
	}
	r := b[1:]
	var err error
	if req.Program, r, err = readString(r); err != nil {
		return err
	}
	if req.SymbolsDigest, r, err = readString(r); err != nil {
		return err
	}
	n, k := binary.Uvarint(r)
	// Each entry takes at least its one-byte length, so a count above
	// what is left is malformed and never allocated.
	if k <= 0 || n > maxHeaderEntries || n > uint64(len(r)-k) {
		return ErrPlanHeader
	}
	r = r[k:]
	req.Entries = make([]string, n)
	for i := range req.Entries {
		if req.Entries[i], r, err = readString(r); err != nil {
			return err
		}
	}
	if len(r) == 0 {
		return nil
	}
	// The optional wire version: present only when not 0, and last.
	v, k := binary.Uvarint(r)
	if k <= 0 || k != len(r) || v == 0 || v > maxPlanWire {
		return ErrPlanHeader
	}
	req.PlanWire = int(v)
	return nil
}

func readString(r []byte) (string, []byte, error) {
	n, k := binary.Uvarint(r)
	if k <= 0 || n > uint64(len(r)-k) {
		return "", nil, ErrPlanHeader
	}
	r = r[k:]
	return string(r[:n]), r[n:], nil
}

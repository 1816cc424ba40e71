// Package wasmmeter makes a Wasm module interruptible by rewriting it:
// guest code pays fuel from a counter of its own at checkpoints, and only
// when the counter runs out does it call the host (an import, ImportModule
// "." ImportName), which either refills it or, past the call's deadline,
// traps. wazero's own termination check (WithCloseOnContextDone) instead
// exits to Go at every loop header, which Go-compiled guests pay on every
// function entry and loop iteration.
//
// Instrument adds the import (the last function import: every defined
// function's index shifts by one, and every reference to one is rewritten),
// a mutable i32 global (the fuel, appended so no global index moves, never
// exported), and a check sequence at every checkpoint:
//
//	global.get $fuel  i32.const C  i32.lt_u
//	if  call $tick  global.set $fuel  end
//	global.get $fuel  i32.const C  i32.sub  global.set $fuel
//
// Checkpoints are at every function entry, right after every loop
// instruction (where every backward branch lands) and right after every
// call and call_indirect (where a callee returns); more are added where
// the walk to the next one could exceed MaxCost. C is the longest walk, in
// instructions along fall-throughs and forward jumps, from the checkpoint
// to the next one, plus a little for the check itself. Between two
// executed checks control can only move forward inside one body, so it
// runs at most C instructions. Bulk memory and table operations, whose
// work grows with their length operand, are preceded by a charge of that
// length (see appendBulkCharge). See docs/decisions.md "Guests are
// metered, not checked at every loop" for the whole argument.
//
// Everything rests on the meter reading every byte as wazero v1.12 reads
// it (decoder agreement): Screen reads a whole module that way and
// refuses what wazero's validator and compilers read differently (typed
// function references, ErrTypedRef); the sandbox runs it before any
// wazero compilation, and Instrument and Verify run it too. The bytes are
// read by wasmbin (integers, section framing, and the instruction
// decoder, in the meter's readings: see decode.go); this package owns
// what they mean to the meter: Screen and its caps, the rewrite, the
// checkpoint placement and Verify.
//
// Verify re-derives those facts from an instrumented module alone and
// fails unless they hold. Instrument refuses (ErrUnsupported, ErrMalformed)
// anything it cannot rewrite exactly; the caller then runs the module with
// wazero's own checks instead. Only modules wazero has validated may be
// instrumented: an index that was out of range in the original could
// otherwise land on the added import or global.
package wasmmeter

import (
	"errors"
	"fmt"

	"github.com/plasmd/plasmd/internal/runtime/wasmbin"
)

// Errors Instrument and Verify return.
var (
	// ErrMalformed: the bytes are not a well-formed module as far as the
	// meter reads them. It is wasmbin.ErrMalformed itself, so the shared
	// reader's refusals (cut short, over-long or overflowing integers)
	// are this package's without wrapping at every call.
	ErrMalformed = wasmbin.ErrMalformed
	// ErrUnsupported: a well-formed module using something the meter does
	// not rewrite (an unknown opcode, exceptions, threads, an import from
	// ImportModule, a name section it cannot parse).
	ErrUnsupported = errors.New("wasmmeter: module not meterable")
	// ErrUnmetered: Verify found code that could run unchecked or touch
	// the meter's own state.
	ErrUnmetered = errors.New("wasmmeter: module not metered")
	// ErrTypedRef: the module uses a typed function reference form (0x63
	// or 0x64) somewhere; wazero v1.12's validator and compilers read
	// those differently (its compiler can even panic), so no such module
	// is accepted. See Screen.
	ErrTypedRef = errors.New("wasmmeter: typed function references are not accepted")
)

const (
	// ImportModule and ImportName name the tick import: a function
	// () -> i32 returning the next refill, or trapping at the deadline.
	ImportModule = "plasmd_meter"
	ImportName   = "tick"
	// MaxCost is the most instructions a checkpoint charges for; a tick
	// must refill at least this much.
	MaxCost = 1000
)

const (
	secCustom   = 0
	secType     = 1
	secImport   = 2
	secFunction = 3
	secGlobal   = 6
	secExport   = 7
	secStart    = 8
	secElement  = 9
	secCode     = 10
	secTag      = 13
)

// order is each known section's place in a module; custom sections have
// none.
var order = map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}

type section struct {
	id      byte
	payload []byte
	at      int // the module offset of payload[0]
}

// reader reads the section's payload, naming module offsets.
func (s section) reader() *reader { return newReader(s.payload, s.at) }

// sections reads the module's framing (wasmbin.EachSection) and refuses
// unknown section ids and known ones out of order.
func sections(module []byte) ([]section, error) {
	var out []section
	last := 0
	err := wasmbin.EachSection(module, func(s wasmbin.Section) error {
		if s.ID != secCustom {
			o, ok := order[s.ID]
			if !ok || o <= last {
				return fmt.Errorf("%w: section %d at module byte %d unknown or out of order", ErrMalformed, s.ID, s.At)
			}
			last = o
		}
		out = append(out, section{id: s.ID, payload: s.Payload.Buf, at: s.Payload.Base})
		return nil
	})
	return out, err
}

// rewriter carries what rewriting needs across sections.
type rewriter struct {
	importedFuncs   uint32 // function imports in the original
	importedGlobals uint32
	definedGlobals  uint32
	tickType        uint32   // index of the appended () -> i32 type
	params          []uint32 // each type's parameter count
	funcTypes       []uint32 // each defined function's type
}

func (w *rewriter) readTypes(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	w.tickType = n
	for range n {
		if form, err := r.Byte(); err != nil || form != 0x60 {
			return fmt.Errorf("%w: type form", ErrUnsupported)
		}
		for k := range 2 {
			c, err := r.U32()
			if err != nil {
				return err
			}
			if _, err := r.Bytes(c); err != nil {
				return err
			}
			if k == 0 {
				w.params = append(w.params, c)
			}
		}
	}
	return nil
}

func (w *rewriter) readFunctions(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	if uint64(n) > uint64(r.Left()) { // each takes a byte
		return fmt.Errorf("%w: %d functions in %d bytes at module byte %d", ErrMalformed, n, r.Left(), r.Offset(r.Pos))
	}
	for range n {
		t, err := r.U32()
		if err != nil {
			return err
		}
		if uint64(t) >= uint64(len(w.params)) {
			return fmt.Errorf("%w: function of type %d at module byte %d", ErrMalformed, t, r.Offset(r.Pos))
		}
		w.funcTypes = append(w.funcTypes, t)
	}
	return nil
}

func (w *rewriter) fn(i uint32) uint32 {
	if i >= w.importedFuncs {
		return i + 1
	}
	return i
}

func (w *rewriter) fuel() uint32 { return w.importedGlobals + w.definedGlobals }

// Instrument returns module metered as the package comment describes. The
// module must have been validated by wazero (see the package comment).
func Instrument(module []byte) ([]byte, error) {
	if err := Screen(module); err != nil {
		return nil, err
	}
	secs, err := sections(module)
	if err != nil {
		return nil, err
	}
	w := &rewriter{}
	// First pass: the counts every rewrite needs.
	for _, s := range secs {
		switch s.id {
		case secType:
			if err := w.readTypes(s.reader()); err != nil {
				return nil, err
			}
		case secFunction:
			if err := w.readFunctions(s.reader()); err != nil {
				return nil, err
			}
		case secImport:
			if err := w.countImports(s.reader()); err != nil {
				return nil, err
			}
		case secGlobal:
			n, err := s.reader().U32()
			if err != nil {
				return nil, err
			}
			w.definedGlobals = n
		case secTag:
			return nil, fmt.Errorf("%w: exception tags", ErrUnsupported)
		}
	}

	out := []byte(wasmbin.Header)
	emit := func(id byte, payload []byte) { out = wasmbin.AppendSection(out, id, payload) }
	// Sections the meter needs that the module may lack are added in
	// their place.
	pending := map[byte][]byte{
		secType:   w.typePayload(nil),
		secImport: w.importPayload(nil),
		secGlobal: w.globalPayload(nil, nil),
	}
	flush := func(before int) {
		for _, id := range []byte{secType, secImport, secGlobal} {
			if p, ok := pending[id]; ok && order[id] < before {
				emit(id, p)
				delete(pending, id)
			}
		}
	}
	for _, s := range secs {
		if s.id != secCustom {
			flush(order[s.id])
		}
		p, keep, err := w.section(s)
		if err != nil {
			return nil, err
		}
		if keep {
			emit(s.id, p)
		}
		delete(pending, s.id)
	}
	flush(len(order) + 1)
	return out, nil
}

// section rewrites one section's payload; keep false drops it.
func (w *rewriter) section(s section) (payload []byte, keep bool, err error) {
	switch s.id {
	case secType:
		return w.typePayload(s.payload), true, nil
	case secImport:
		return w.importPayload(s.payload), true, nil
	case secGlobal:
		p, err := w.globals(s.reader())
		return p, true, err
	case secExport:
		p, err := w.exports(s.reader())
		return p, true, err
	case secStart:
		r := s.reader()
		f, err := r.U32()
		if err != nil || !r.Done() {
			return nil, false, fmt.Errorf("%w: start section at module byte %d", ErrMalformed, s.at)
		}
		return wasmbin.AppendU32(nil, w.fn(f)), true, nil
	case secElement:
		p, err := w.elements(s.reader())
		return p, true, err
	case secCode:
		p, err := w.code(s.reader())
		return p, true, err
	case secCustom:
		return w.custom(s.reader())
	}
	return s.payload, true, nil
}

// typePayload appends () -> i32 to a type section payload (nil: none).
func (w *rewriter) typePayload(p []byte) []byte {
	rest := []byte(nil)
	if p != nil {
		r := newReader(p, 0)
		_, _ = r.U32() // counted in Instrument's first pass
		rest = p[r.Pos:]
	}
	out := wasmbin.AppendU32(nil, w.tickType+1)
	out = append(out, rest...)
	return append(out, 0x60, 0x00, 0x01, 0x7f)
}

func (w *rewriter) countImports(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	for range n {
		mod, err := r.Name()
		if err != nil {
			return err
		}
		if _, err := r.Name(); err != nil {
			return err
		}
		if mod == ImportModule {
			return fmt.Errorf("%w: module already imports from %s", ErrUnsupported, ImportModule)
		}
		kind, err := r.Byte()
		if err != nil {
			return err
		}
		switch kind {
		case 0: // function: type index
			w.importedFuncs++
			_, err = r.U32()
		case 1, 2, 3:
			// A table, memory or global import could carry a host
			// function reference into call_indirect (and plasmd provides
			// none of them anyway).
			err = fmt.Errorf("%w: imports a table, memory or global (%s)", ErrUnsupported, mod)
		default:
			err = fmt.Errorf("%w: import kind %d", ErrUnsupported, kind)
		}
		if err != nil {
			return err
		}
	}
	if !r.Done() {
		return fmt.Errorf("%w: bytes after the imports at module byte %d", ErrMalformed, r.Offset(r.Pos))
	}
	return nil
}

func limits(r *reader) error {
	at := r.Pos
	flag, err := r.Byte()
	if err != nil {
		return err
	}
	if flag > 1 { // shared or 64-bit: not enabled
		return fmt.Errorf("%w: limits flag %d at module byte %d", ErrUnsupported, flag, r.Offset(at))
	}
	if _, err := r.U32(); err != nil {
		return err
	}
	if flag == 1 {
		_, err = r.U32()
	}
	return err
}

// importPayload appends the tick import to an import section payload
// (nil: none).
func (w *rewriter) importPayload(p []byte) []byte {
	var count uint32
	rest := []byte(nil)
	if p != nil {
		r := newReader(p, 0)
		count, _ = r.U32() // read in countImports
		rest = p[r.Pos:]
	}
	out := wasmbin.AppendU32(nil, count+1)
	out = append(out, rest...)
	out = wasmbin.AppendName(out, ImportModule)
	out = wasmbin.AppendName(out, ImportName)
	out = append(out, 0)
	return wasmbin.AppendU32(out, w.tickType)
}

// globals rewrites ref.func in initialisers; globalPayload appends the
// fuel.
func (w *rewriter) globals(r *reader) ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	var body []byte
	for range n {
		at := r.Pos
		if _, err := valType(r); err != nil {
			return nil, err
		}
		mutAt := r.Pos
		if mut, err := r.Byte(); err != nil || mut > 1 {
			return nil, fmt.Errorf("%w: global mutability at module byte %d", ErrMalformed, r.Offset(mutAt))
		}
		body = append(body, r.Buf[at:r.Pos]...)
		if body, err = w.constExpr(r, body); err != nil {
			return nil, err
		}
	}
	if !r.Done() {
		return nil, fmt.Errorf("%w: bytes after the globals at module byte %d", ErrMalformed, r.Offset(r.Pos))
	}
	return w.globalPayload(r.Buf, body), nil
}

func (w *rewriter) globalPayload(p, body []byte) []byte {
	out := wasmbin.AppendU32(nil, w.definedGlobals+1)
	out = append(out, body...)
	// mutable i32 = 0: the first check calls the tick, so a call that
	// starts past its deadline stops before any loop runs.
	return append(out, 0x7f, 0x01, opI32Const, 0x00, opEnd)
}

// constExpr copies a constant expression up to its end, rewriting
// ref.func.
func (w *rewriter) constExpr(r *reader, out []byte) ([]byte, error) {
	var in inst
	for {
		if err := decodeInst(r, &in); err != nil {
			return nil, err
		}
		if err := w.refCheck(r, &in); err != nil {
			return nil, err
		}
		out = w.emitInst(out, r.Buf, &in)
		if in.Op == opEnd {
			return out, nil
		}
		switch in.Op {
		case opBlock, opLoop, opIf, opElse:
			return nil, fmt.Errorf("%w: control instruction in a constant expression at module byte %d", ErrMalformed, r.Offset(in.Pos))
		}
	}
}

// refCheck refuses references to imported functions other than direct
// calls (ref.func), and tail calls: every host call must be a call
// instruction, so the fuel can be emptied right after it.
func (w *rewriter) refCheck(r *reader, in *inst) error {
	switch in.Op {
	case opRefFunc:
		if in.Idx < w.importedFuncs {
			return fmt.Errorf("%w: ref.func of imported function %d at module byte %d", ErrUnsupported, in.Idx, r.Offset(in.Pos))
		}
	case opReturnCall, opReturnCallIn:
		return fmt.Errorf("%w: tail call at module byte %d", ErrUnsupported, r.Offset(in.Pos))
	}
	return nil
}

// emitInst appends an instruction's bytes, with a function index shifted.
func (w *rewriter) emitInst(out, code []byte, in *inst) []byte {
	if in.NamesFunction() {
		out = append(out, code[in.Pos:in.IdxAt]...)
		out = wasmbin.AppendU32(out, w.fn(in.Idx))
		return append(out, code[in.IdxEnd:in.End]...)
	}
	return append(out, code[in.Pos:in.End]...)
}

// code instruments every function body.
func (w *rewriter) code(r *reader) ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(r.Buf)+len(r.Buf)/2)
	out = wasmbin.AppendU32(out, n)
	var body []byte
	for i := range n {
		size, err := r.U32()
		if err != nil {
			return nil, err
		}
		br, err := r.sub(size)
		if err != nil {
			return nil, err
		}
		if uint64(i) >= uint64(len(w.funcTypes)) {
			return nil, fmt.Errorf("%w: more bodies than functions at module byte %d", ErrMalformed, br.Base)
		}
		if body, err = w.body(body[:0], &br, w.params[w.funcTypes[i]]); err != nil {
			return nil, fmt.Errorf("function body %d at module byte %d: %w", i, br.Base, err)
		}
		out = wasmbin.AppendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	if !r.Done() {
		return nil, fmt.Errorf("%w: bytes after the code at module byte %d", ErrMalformed, r.Offset(r.Pos))
	}
	return out, nil
}

// body instruments one function body (r, at its start) into out; params
// is the function's parameter count.
func (w *rewriter) body(out []byte, r *reader, params uint32) ([]byte, error) {
	b := r.Buf
	groups, locals, err := readLocals(r)
	if err != nil {
		return nil, err
	}
	codeAt := r.Pos

	// Pass 1: the control flow.
	s := newScanner()
	var in inst
	bulk := false
	for i := 0; !r.Done(); i++ {
		if err := decodeInst(r, &in); err != nil {
			return nil, err
		}
		if err := s.add(i, &in); err != nil {
			return nil, fmt.Errorf("%w at module byte %d", err, r.Offset(in.Pos))
		}
		if err := w.refCheck(r, &in); err != nil {
			return nil, err
		}
		bulk = bulk || isBulk(&in)
	}
	f, err := s.finish()
	if err != nil {
		return nil, err
	}
	at, cost := place(f)

	// A body with bulk operations gets one more i32 local, the scratch
	// its charges use.
	scratch := uint64(params) + locals
	if !bulk {
		out = append(out, b[:codeAt]...)
	} else {
		if scratch >= 1<<32-1 {
			return nil, fmt.Errorf("%w: %d locals", ErrUnsupported, scratch)
		}
		out = wasmbin.AppendU32(out, groups+1)
		lr := newReader(b, r.Base)
		_, _ = lr.U32()
		out = append(out, b[lr.Pos:codeAt]...)
		out = append(out, 1, 0x7f)
	}

	// Pass 2: copy with checks in place and function indices shifted.
	r.Pos = codeAt
	fuel := w.fuel()
	for i := 0; !r.Done(); i++ {
		if err := decodeInst(r, &in); err != nil {
			return nil, err
		}
		if at[i] {
			out = appendCheck(out, fuel, w.importedFuncs, uint32(cost[i]))
		}
		if isBulk(&in) {
			out = appendBulkCharge(out, fuel, w.importedFuncs, uint32(scratch))
		}
		out = w.emitInst(out, b, &in)
		if in.Op == opCall && in.Idx < w.importedFuncs || in.Op == opCallIndirect {
			// A host call may take a while (a guest sleep, an http
			// request): empty the fuel so the check after it ticks and
			// the host sees the deadline at once. call_indirect gets the
			// same, in case a host function ever reached a table despite
			// the refusals (defence in depth: it costs one tick per
			// indirect call's return at most).
			out = append(out, opI32Const, 0, opGlobalSet)
			out = wasmbin.AppendU32(out, fuel)
		}
	}
	return out, nil
}

// readLocals reads a body's local declarations: how many groups and how
// many locals in all.
func readLocals(r *reader) (groups uint32, locals uint64, err error) {
	groups, err = r.U32()
	if err != nil {
		return 0, 0, err
	}
	for range groups {
		n, err := r.U32()
		if err != nil {
			return 0, 0, err
		}
		if _, err := valType(r); err != nil {
			return 0, 0, err
		}
		locals += uint64(n)
	}
	return groups, locals, nil
}

// isBulk reports an instruction whose work grows with an operand: the
// memory and table operations that take a length (or a table.grow's
// delta) as their last operand.
func isBulk(in *inst) bool {
	if in.Op != prefixMisc {
		return false
	}
	switch in.Sub {
	case 0x08, 0x0a, 0x0b, 0x0c, 0x0e, 0x0f, 0x11: // memory.init/copy/fill, table.init/copy/grow/fill
		return true
	}
	return false
}

// BulkShift scales a bulk operation's length to fuel: one unit per
// 1<<BulkShift bytes (or table elements).
const BulkShift = 4

// appendBulkCharge appends the sequence charging the i32 length on top of
// the stack (left there for the operation): when the fuel cannot pay for
// it the tick runs first, so the host sees the deadline right before a
// large operation.
//
//	local.tee $n  global.get $fuel  local.get $n  i32.const BulkShift  i32.shr_u  i32.lt_u
//	if  call $tick  global.set $fuel
//	else  global.get $fuel  local.get $n  i32.const BulkShift  i32.shr_u  i32.sub  global.set $fuel  end
func appendBulkCharge(b []byte, fuel, tick, scratch uint32) []byte {
	charge := func(b []byte) []byte {
		b = append(b, opLocalGet)
		b = wasmbin.AppendU32(b, scratch)
		return append(b, opI32Const, BulkShift, opI32ShrU)
	}
	b = append(b, opLocalTee)
	b = wasmbin.AppendU32(b, scratch)
	b = append(b, opGlobalGet)
	b = wasmbin.AppendU32(b, fuel)
	b = charge(b)
	b = append(b, opI32LtU, opIf, blockEmpty, opCall)
	b = wasmbin.AppendU32(b, tick)
	b = append(b, opGlobalSet)
	b = wasmbin.AppendU32(b, fuel)
	b = append(b, opElse, opGlobalGet)
	b = wasmbin.AppendU32(b, fuel)
	b = charge(b)
	b = append(b, opI32Sub, opGlobalSet)
	b = wasmbin.AppendU32(b, fuel)
	return append(b, opEnd)
}

func skipLocals(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	for range n {
		if _, err := r.U32(); err != nil {
			return err
		}
		if _, err := valType(r); err != nil {
			return err
		}
	}
	return nil
}

// appendCheck appends the check sequence charging cost.
func appendCheck(b []byte, fuel, tick, cost uint32) []byte {
	b = append(b, opGlobalGet)
	b = wasmbin.AppendU32(b, fuel)
	b = append(b, opI32Const)
	b = wasmbin.AppendS32(b, int32(cost))
	b = append(b, opI32LtU, opIf, blockEmpty, opCall)
	b = wasmbin.AppendU32(b, tick)
	b = append(b, opGlobalSet)
	b = wasmbin.AppendU32(b, fuel)
	b = append(b, opEnd, opGlobalGet)
	b = wasmbin.AppendU32(b, fuel)
	b = append(b, opI32Const)
	b = wasmbin.AppendS32(b, int32(cost))
	b = append(b, opI32Sub, opGlobalSet)
	return wasmbin.AppendU32(b, fuel)
}

package oldmeter

import (
	"fmt"
)

// verifier holds what Verify learns about an instrumented module.
type verifier struct {
	tick      uint32   // function index of the tick import
	fuel      uint32   // global index of the fuel
	types     [][]byte // each function type's encoding after 0x60
	globals   uint32   // imported + defined so far
	hostFuncs uint32   // imported functions, the tick included
	haveTick  bool
	haveFuel  bool
}

// Verify checks, from the instrumented bytes alone, what the meter's
// boundedness argument needs:
//   - exactly one import from ImportModule: ImportName, a function
//     () -> i32, and the last global is a mutable i32 (the fuel);
//   - the module passes Screen (every byte read as wazero reads it, no
//     typed function reference form anywhere);
//   - each body starts with a check, and one immediately follows every
//     loop instruction and every call and call_indirect;
//   - every call of an imported function and every call_indirect is
//     immediately followed by emptying the fuel;
//   - every check charges at least the longest walk (fall-throughs and
//     forward jumps: br, br_if, br_table to a block or if, an if's false
//     edge, a then-arm reaching else) from it to the next check or the
//     body's end, and at most MaxCost;
//   - every bulk memory or table operation is immediately preceded by the
//     charge of its length, and every such charge by nothing else;
//   - the fuel and the tick are used nowhere but in checks: not exported,
//     not in a table or element segment, not the start function, not
//     referenced by ref.func.
//
// It does not validate the module otherwise (wazero does that when the
// module is compiled).
func Verify(module []byte) error {
	if err := screen(module, 1); err != nil {
		return err
	}
	secs, err := sections(module)
	if err != nil {
		return err
	}
	v := &verifier{}
	for _, s := range secs {
		if err := v.section(s); err != nil {
			return err
		}
	}
	if !v.haveTick || !v.haveFuel {
		return fmt.Errorf("%w: no tick import or fuel global", ErrUnmetered)
	}
	return nil
}

func (v *verifier) section(s section) error {
	r := s.reader()
	switch s.id {
	case secType:
		return v.typeSection(r)
	case secImport:
		return v.imports(r)
	case secGlobal:
		return v.globalSection(r)
	case secExport:
		return v.exports(r)
	case secStart:
		f, err := r.U32()
		if err != nil {
			return err
		}
		if v.haveTick && f == v.tick {
			return fmt.Errorf("%w: the tick is the start function", ErrUnmetered)
		}
	case secElement:
		return v.elements(r)
	case secCode:
		return v.code(r)
	case secTag:
		return fmt.Errorf("%w: exception tags", ErrUnsupported)
	}
	return nil
}

func (v *verifier) typeSection(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	for range n {
		start := r.Pos
		form, err := r.Byte()
		if err != nil {
			return err
		}
		if form != 0x60 {
			return fmt.Errorf("%w: type form %#x", ErrUnsupported, form)
		}
		for range 2 { // params, results
			k, err := r.U32()
			if err != nil {
				return err
			}
			if _, err := r.Bytes(k); err != nil {
				return err
			}
		}
		v.types = append(v.types, r.Buf[start+1:r.Pos])
	}
	return nil
}

func (v *verifier) imports(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	var funcs uint32
	for range n {
		mod, err := r.Name()
		if err != nil {
			return err
		}
		name, err := r.Name()
		if err != nil {
			return err
		}
		kind, err := r.Byte()
		if err != nil {
			return err
		}
		switch kind {
		case 0:
			t, err := r.U32()
			if err != nil {
				return err
			}
			if mod == ImportModule {
				if v.haveTick || name != ImportName {
					return fmt.Errorf("%w: import %s.%s", ErrUnmetered, mod, name)
				}
				if uint64(t) >= uint64(len(v.types)) || string(v.types[t]) != "\x00\x01\x7f" {
					return fmt.Errorf("%w: the tick is not () -> i32", ErrUnmetered)
				}
				v.tick, v.haveTick = funcs, true
			}
			funcs++
		case 1, 2, 3:
			// A table or global could bring a host function into
			// call_indirect, past the fuel emptying after host calls.
			return fmt.Errorf("%w: imports a table, memory or global", ErrUnmetered)
		default:
			err = fmt.Errorf("%w: import kind %d", ErrUnsupported, kind)
		}
		if err != nil {
			return err
		}
	}
	v.hostFuncs = funcs
	return nil
}

func (v *verifier) globalSection(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	for i := range n {
		t, err := r.Bytes(2)
		if err != nil {
			return err
		}
		if err := v.constExpr(r); err != nil {
			return err
		}
		if i == n-1 {
			if t[0] != 0x7f || t[1] != 1 {
				return fmt.Errorf("%w: the last global is not a mutable i32", ErrUnmetered)
			}
			v.fuel, v.haveFuel = v.globals+i, true
		}
	}
	v.globals += n
	return nil
}

// constExpr checks a constant expression references neither the tick nor
// the fuel.
func (v *verifier) constExpr(r *reader) error {
	var in inst
	for {
		if err := decodeInst(r, &in); err != nil {
			return err
		}
		if err := v.plain(r, &in); err != nil {
			return err
		}
		if in.op == opEnd {
			return nil
		}
	}
}

// plain fails if an instruction outside a check uses the tick or the
// fuel.
func (v *verifier) plain(r *reader, in *inst) error {
	switch in.op {
	case opCall, opRefFunc:
		if v.haveTick && in.idx == v.tick {
			return fmt.Errorf("%w: the tick referenced outside a check at module byte %d", ErrUnmetered, r.Offset(in.pos))
		}
		if in.op == opRefFunc && in.idx < v.hostFuncs {
			return fmt.Errorf("%w: ref.func of an imported function at module byte %d", ErrUnmetered, r.Offset(in.pos))
		}
	case opReturnCall, opReturnCallIn:
		return fmt.Errorf("%w: tail call at module byte %d", ErrUnmetered, r.Offset(in.pos))
	case opGlobalGet, opGlobalSet:
		if v.haveFuel && in.idx == v.fuel {
			return fmt.Errorf("%w: the fuel referenced outside a check at module byte %d", ErrUnmetered, r.Offset(in.pos))
		}
	}
	return nil
}

func (v *verifier) exports(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	for range n {
		name, err := r.Name()
		if err != nil {
			return err
		}
		kind, err := r.Byte()
		if err != nil {
			return err
		}
		idx, err := r.U32()
		if err != nil {
			return err
		}
		if (kind == 0 && v.haveTick && idx == v.tick) || (kind == 3 && v.haveFuel && idx == v.fuel) {
			return fmt.Errorf("%w: export %q is the meter's own", ErrUnmetered, name)
		}
	}
	return nil
}

func (v *verifier) elements(r *reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	for range n {
		at := r.Pos
		flags, err := r.U32()
		if err != nil {
			return err
		}
		if flags > 7 {
			return fmt.Errorf("%w: element segment flags %d at module byte %d", ErrMalformed, flags, r.Offset(at))
		}
		if flags&2 != 0 && flags&1 == 0 {
			if _, err := r.U32(); err != nil {
				return err
			}
		}
		if flags&1 == 0 {
			if err := v.constExpr(r); err != nil {
				return err
			}
		}
		if flags&3 != 0 {
			if _, err := elemKind(r, flags); err != nil {
				return err
			}
		}
		count, err := r.U32()
		if err != nil {
			return err
		}
		for range count {
			if flags&4 != 0 {
				if err := v.constExpr(r); err != nil {
					return err
				}
				continue
			}
			f, err := r.U32()
			if err != nil {
				return err
			}
			if f < v.hostFuncs {
				return fmt.Errorf("%w: an imported function in an element segment", ErrUnmetered)
			}
		}
	}
	return nil
}

func (v *verifier) code(r *reader) error {
	if !v.haveTick || !v.haveFuel {
		return fmt.Errorf("%w: no tick import or fuel global", ErrUnmetered)
	}
	n, err := r.U32()
	if err != nil {
		return err
	}
	for i := range n {
		size, err := r.U32()
		if err != nil {
			return err
		}
		br, err := r.sub(size)
		if err != nil {
			return err
		}
		if err := v.body(&br); err != nil {
			return fmt.Errorf("function body %d at module byte %d: %w", i, br.Base, err)
		}
	}
	return nil
}

// body checks one function body (r, at its start).
func (v *verifier) body(r *reader) error {
	if err := skipLocals(r); err != nil {
		return err
	}
	s := newScanner()
	var in inst
	// checks[i] is the cost of the check before instruction i (0: none);
	// two checks in a row both charge, so their costs add.
	var checks []int
	i := 0
	pendingBulk := false // a bulk charge was just read: a bulk operation must follow
	pendingZero := false // a host call was just read: the fuel must be emptied
	for !r.Done() {
		for len(checks) <= i {
			checks = append(checks, 0)
		}
		at := r.Pos
		kind, cost, err := v.check(r)
		if err != nil {
			return err
		}
		if kind != seqNone && pendingBulk {
			return fmt.Errorf("%w: a bulk charge not followed by its operation at module byte %d", ErrUnmetered, r.Offset(at))
		}
		if (kind == seqZero) != pendingZero {
			return fmt.Errorf("%w: a host call not followed by emptying the fuel (or the fuel emptied elsewhere) at module byte %d", ErrUnmetered, r.Offset(at))
		}
		switch kind {
		case seqZero:
			pendingZero = false
			continue
		case seqCheck:
			checks[i] += cost
			continue
		case seqBulk:
			pendingBulk = true
			continue
		}
		r.Pos = at
		if err := decodeInst(r, &in); err != nil {
			return err
		}
		if isBulk(&in) != pendingBulk {
			return fmt.Errorf("%w: bulk operation without its charge (or a charge without one) at module byte %d", ErrUnmetered, r.Offset(in.pos))
		}
		pendingBulk = false
		if err := v.plain(r, &in); err != nil {
			return err
		}
		if err := s.add(i, &in); err != nil {
			return fmt.Errorf("%w at module byte %d", err, r.Offset(in.pos))
		}
		pendingZero = in.op == opCall && in.idx < v.hostFuncs || in.op == opCallIndirect
		i++
	}
	f, err := s.finish()
	if err != nil {
		return err
	}
	if len(checks) > f.n && checks[f.n] != 0 {
		return fmt.Errorf("%w: a check after the function's end (body at module byte %d)", ErrMalformed, r.Base)
	}
	return verifyFlow(f, checks[:f.n])
}

// verifyFlow checks the placement and the costs of a body's checks.
func verifyFlow(f flow, checks []int) error {
	at := make([]bool, f.n)
	for i, c := range checks {
		at[i] = c > 0
	}
	walk := paths(f, at, false)
	for i := 0; i < f.n; i++ {
		if f.mustCheck[i] && !at[i] {
			return fmt.Errorf("%w: no check before instruction %d (function entry, loop header or return point)", ErrUnmetered, i)
		}
		if at[i] && checks[i] < int(walk[i]) {
			return fmt.Errorf("%w: the check before instruction %d charges %d for a walk of %d instructions",
				ErrUnmetered, i, checks[i], walk[i])
		}
	}
	return nil
}

// Meter sequences check can read.
const (
	seqNone  = iota
	seqCheck // a checkpoint's check
	seqBulk  // a bulk operation's charge
	seqZero  // the fuel emptied after a host call
)

// check reads a meter sequence at r if one starts there: seqNone (and
// r's position undefined) when the next instructions do not touch the
// fuel; an error when they do but are not exactly a check or a charge.
func (v *verifier) check(r *reader) (kind, cost int, err error) {
	var in inst
	if err := decodeInst(r, &in); err != nil {
		return seqNone, 0, nil
	}
	if in.op == opI32Const && r.Pos == in.pos+2 && r.Buf[in.pos+1] == 0 {
		// i32.const 0 global.set $fuel: only after a host call.
		var set inst
		if err := decodeInst(r, &set); err == nil && set.op == opGlobalSet && set.idx == v.fuel {
			return seqZero, 0, nil
		}
		return seqNone, 0, nil
	}
	var scratch uint32
	if in.op == opLocalTee {
		scratch = in.idx
		if err := decodeInst(r, &in); err != nil || in.op != opGlobalGet || in.idx != v.fuel {
			return seqNone, 0, nil
		}
		if !v.bulkCharge(r, scratch) {
			return seqNone, 0, fmt.Errorf("%w: the fuel used outside a meter sequence at module byte %d", ErrUnmetered, r.Offset(in.pos))
		}
		return seqBulk, 0, nil
	}
	if in.op != opGlobalGet || in.idx != v.fuel {
		return seqNone, 0, nil
	}
	var c1, c2 int64
	steps := []func() bool{
		func() bool { return r.next(opI32Const) && r.s32(&c1) },
		func() bool { return r.next(opI32LtU) && r.next(opIf) && r.next(blockEmpty) },
		func() bool { return r.next(opCall) && r.index(v.tick) },
		func() bool { return r.next(opGlobalSet) && r.index(v.fuel) && r.next(opEnd) },
		func() bool { return r.next(opGlobalGet) && r.index(v.fuel) },
		func() bool { return r.next(opI32Const) && r.s32(&c2) },
		func() bool { return r.next(opI32Sub) && r.next(opGlobalSet) && r.index(v.fuel) },
	}
	for _, step := range steps {
		if !step() {
			// Made only on failure: boxing a module offset allocates.
			return seqNone, 0, fmt.Errorf("%w: the fuel used outside a meter sequence at module byte %d", ErrUnmetered, r.Offset(in.pos))
		}
	}
	if c1 != c2 || c1 < 1 || c1 > MaxCost {
		return seqNone, 0, fmt.Errorf("%w: check at module byte %d compares %d and charges %d", ErrUnmetered, r.Offset(in.pos), c1, c2)
	}
	return seqCheck, int(c1), nil
}

// bulkCharge reads the rest of a bulk charge (after its local.tee and
// first global.get), whose scratch local is scratch.
func (v *verifier) bulkCharge(r *reader, scratch uint32) bool {
	charge := func() bool {
		var shift int64
		return r.next(opLocalGet) && r.index(scratch) && r.next(opI32Const) && r.s32(&shift) &&
			shift == BulkShift && r.next(opI32ShrU)
	}
	return charge() && r.next(opI32LtU) && r.next(opIf) && r.next(blockEmpty) &&
		r.next(opCall) && r.index(v.tick) && r.next(opGlobalSet) && r.index(v.fuel) &&
		r.next(opElse) && r.next(opGlobalGet) && r.index(v.fuel) && charge() &&
		r.next(opI32Sub) && r.next(opGlobalSet) && r.index(v.fuel) && r.next(opEnd)
}

func (r *reader) next(b byte) bool {
	c, err := r.Byte()
	return err == nil && c == b
}

func (r *reader) index(want uint32) bool {
	x, err := r.U32()
	return err == nil && x == want
}

func (r *reader) s32(v *int64) bool {
	x, err := r.Signed(5)
	*v = x
	return err == nil
}

package oldmeter

import "fmt"

// Screen reads a whole module, every section and every instruction, the
// way wazero v1.12 reads it, and fails unless every byte is read the same
// way by the meter, wazero's validator and wazero's compilers. In
// particular it refuses (ErrTypedRef) every typed function reference form
// (a reference type starting 0x63 or 0x64: in types, imports, tables,
// globals, element segments, locals, select t, block types, ref.null):
// wazero's validator reads those as a type and a heap type where its
// compilers skip a fixed number of bytes, so the code the validator
// checked is not the code that runs, and wazevo can panic in a compile
// worker goroutine, which no recover in the caller catches.
//
// Screen is conservative: anything it cannot read (ErrMalformed,
// ErrUnsupported) is refused too, so it must run, and pass, before any
// wazero compilation of untrusted bytes, metered or not. It only reads:
// validation (types, indices, stack shapes) is left to wazero. Unlike the
// meter it reads a SIMD sub-opcode byte with its high bit set as wazero
// does (see decodeSIMD): wazero's validator and compilers agree on it, so
// such a module is only unmeterable, not refused.
//
// It also refuses (ErrTooLarge) a module whose tables, globals or
// segments would make wazero allocate host memory far beyond the module's
// size and outside its linear memory, per instance (see MaxTables and the
// other caps), every table.grow, and more locals than MaxFunctionLocals
// in a function or MaxModuleLocals in the module. It reads custom
// section names and the "name" section as wazero does (see
// screenCustom): wazero sizes allocations by their declared lengths and
// counts before reading them.
//
// Every position in its errors is a module offset ("at module byte N"),
// the byte a hex dump of the uploaded file shows.
func Screen(module []byte) error { return screen(module, 0) }

// screen is Screen allowing each function body slack locals more than the
// caps (Verify reads a metered module: Instrument adds at most one local,
// the bulk charge's scratch, to a body).
func screen(module []byte, slack uint64) error {
	secs, err := sections(module)
	if err != nil {
		return err
	}
	c := &caps{slack: slack}
	for _, s := range secs {
		r := s.reader()
		if err := screenSection(r, s.id, c); err != nil {
			return fmt.Errorf("section %d: %w", s.id, err)
		}
		if !r.Done() {
			return fmt.Errorf("%w: bytes after section %d at module byte %d", ErrMalformed, s.id, r.Offset(r.Pos))
		}
	}
	return nil
}

// Section ids Screen reads that the rewriter passes through.
const (
	secTable     = 4
	secMemory    = 5
	secData      = 11
	secDataCount = 12
)

func screenSection(r *reader, id byte, c *caps) error {
	switch id {
	case secCustom:
		return screenCustom(r)
	case secStart, secDataCount:
		// One u32 (the caller checks nothing follows).
		_, err := r.U32()
		return err
	case secTag:
		return fmt.Errorf("%w: exception tags at module byte %d", ErrUnsupported, r.Offset(0))
	}
	n, err := r.U32()
	if err != nil {
		return err
	}
	if uint64(n) > uint64(r.Left()) { // every entry takes a byte
		return fmt.Errorf("%w: %d entries in %d bytes at module byte %d", ErrMalformed, n, r.Left(), r.Offset(r.Pos))
	}
	each := map[byte]func(*reader) error{
		secType:     screenFuncType,
		secImport:   func(r *reader) error { return screenImport(r, c) },
		secFunction: func(r *reader) error { _, err := r.U32(); return err },
		secTable:    func(r *reader) error { return screenTable(r, c) },
		secMemory:   limits,
		secGlobal:   func(r *reader) error { return screenGlobal(r, c) },
		secExport:   screenExport,
		secElement:  func(r *reader) error { return screenElement(r, c) },
		secCode:     func(r *reader) error { return screenBody(r, c) },
		secData:     func(r *reader) error { return screenData(r, c) },
	}[id]
	if each == nil {
		return fmt.Errorf("%w: unknown section at module byte %d", ErrMalformed, r.Offset(0))
	}
	for i := range n {
		if err := each(r); err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
	}
	return nil
}

func screenFuncType(r *reader) error {
	at := r.Pos
	if form, err := r.Byte(); err != nil || form != 0x60 {
		return fmt.Errorf("%w: type form (only functions) at module byte %d", ErrUnsupported, r.Offset(at))
	}
	for range 2 { // parameters, results
		n, err := r.U32()
		if err != nil {
			return err
		}
		for range n {
			if _, err := valType(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func screenImport(r *reader, c *caps) error {
	for range 2 {
		if _, err := r.Name(); err != nil {
			return err
		}
	}
	at := r.Pos
	kind, err := r.Byte()
	if err != nil {
		return err
	}
	switch kind {
	case 0:
		_, err = r.U32()
	case 1:
		err = screenTable(r, c)
	case 2:
		err = limits(r)
	case 3:
		err = screenGlobalType(r, c)
	default:
		err = fmt.Errorf("%w: import kind %d at module byte %d", ErrUnsupported, kind, r.Offset(at))
	}
	return err
}

// screenTable reads a table type, counting the table and its minimum
// size against MaxTables and MaxTableElements.
func screenTable(r *reader, c *caps) error {
	at := r.Offset(r.Pos)
	if _, err := refType(r); err != nil {
		return err
	}
	lim := *r // to read the minimum again once limits has checked the flag
	if err := limits(r); err != nil {
		return err
	}
	_, _ = lim.Byte()
	min, _ := lim.U32()
	if err := add(&c.tables, 1, MaxTables, "tables", at); err != nil {
		return err
	}
	return add(&c.tableElems, uint64(min), MaxTableElements, "table elements (the tables' minimum sizes together)", at)
}

// screenGlobalType reads a global's type, counting it against MaxGlobals.
func screenGlobalType(r *reader, c *caps) error {
	if err := add(&c.globals, 1, MaxGlobals, "globals", r.Offset(r.Pos)); err != nil {
		return err
	}
	if _, err := valType(r); err != nil {
		return err
	}
	at := r.Pos
	if mut, err := r.Byte(); err != nil || mut > 1 {
		return fmt.Errorf("%w: global mutability at module byte %d", ErrMalformed, r.Offset(at))
	}
	return nil
}

func screenGlobal(r *reader, c *caps) error {
	if err := screenGlobalType(r, c); err != nil {
		return err
	}
	return screenExpr(r)
}

func screenExport(r *reader) error {
	if _, err := r.Name(); err != nil {
		return err
	}
	if _, err := r.Byte(); err != nil {
		return err
	}
	_, err := r.U32()
	return err
}

// screenExpr reads a constant expression up to its end.
func screenExpr(r *reader) error {
	var in inst
	for {
		if err := decodeInst(r, &in); err != nil {
			return err
		}
		switch in.op {
		case opEnd:
			return nil
		case opBlock, opLoop, opIf, opElse:
			return fmt.Errorf("%w: control instruction in a constant expression at module byte %d", ErrMalformed, r.Offset(in.pos))
		}
	}
}

func screenElement(r *reader, c *caps) error {
	at := r.Pos
	if err := add(&c.elemSegs, 1, MaxElementSegments, "element segments", r.Offset(at)); err != nil {
		return err
	}
	flags, err := r.U32()
	if err != nil {
		return err
	}
	if flags > 7 {
		return fmt.Errorf("%w: element segment flags %d at module byte %d", ErrMalformed, flags, r.Offset(at))
	}
	if flags&2 != 0 && flags&1 == 0 { // explicit table index
		if _, err := r.U32(); err != nil {
			return err
		}
	}
	if flags&1 == 0 { // active: offset
		if err := screenExpr(r); err != nil {
			return err
		}
	}
	if flags&3 != 0 {
		if _, err := elemKind(r, flags); err != nil {
			return err
		}
	}
	n, err := r.U32()
	if err != nil {
		return err
	}
	if uint64(n) > uint64(r.Left()) {
		return fmt.Errorf("%w: %d elements in %d bytes at module byte %d", ErrMalformed, n, r.Left(), r.Offset(r.Pos))
	}
	if err := add(&c.segElems, uint64(n), MaxSegmentElements, "elements in element segments", r.Offset(at)); err != nil {
		return err
	}
	for range n {
		if flags&4 != 0 {
			err = screenExpr(r)
		} else {
			_, err = r.U32()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// screenBody reads one code entry: its size, locals and instructions,
// which must end exactly at the size.
func screenBody(r *reader, c *caps) error {
	size, err := r.U32()
	if err != nil {
		return err
	}
	br, err := r.sub(size)
	if err != nil {
		return err
	}
	br.wazeroSIMD = true
	if err := screenLocals(&br, c); err != nil {
		return err
	}
	var in inst
	for !br.Done() {
		if err := decodeInst(&br, &in); err != nil {
			return err
		}
		if in.op == prefixMisc && in.sub == miscTableGrow {
			return fmt.Errorf("%w: table.grow at module byte %d: a guest could grow a table to 2^32 entries of host memory; the Go toolchain never emits it", ErrTooLarge, br.Offset(in.pos))
		}
	}
	return nil
}

// screenLocals reads a body's local declarations as skipLocals does and
// refuses them past MaxFunctionLocals or, summed over the module,
// MaxModuleLocals, naming the declaration that passed the cap. It runs
// before wazero sums them and sizes a slice by the sum.
func screenLocals(r *reader, c *caps) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	c.bodies++
	var inFunc uint64
	for range n {
		at := r.Offset(r.Pos)
		k, err := r.U32()
		if err != nil {
			return err
		}
		if inFunc += uint64(k); inFunc > MaxFunctionLocals+c.slack {
			return fmt.Errorf("%w: %d locals in one function, at most %d are accepted, at module byte %d", ErrTooLarge, inFunc, MaxFunctionLocals, at)
		}
		if err := add(&c.locals, uint64(k), MaxModuleLocals+c.slack*c.bodies, "locals", at); err != nil {
			return err
		}
		if _, err := valType(r); err != nil {
			return err
		}
	}
	return nil
}

// miscTableGrow is table.grow's 0xFC sub-opcode: the one instruction that
// makes wazero allocate host memory for a table after instantiation.
const miscTableGrow = 0x0f

func screenData(r *reader, c *caps) error {
	at := r.Pos
	if err := add(&c.dataSegs, 1, MaxDataSegments, "data segments", r.Offset(at)); err != nil {
		return err
	}
	flags, err := r.U32()
	if err != nil {
		return err
	}
	switch flags {
	case 0:
		err = screenExpr(r)
	case 1:
	case 2:
		if _, err = r.U32(); err == nil {
			err = screenExpr(r)
		}
	default:
		err = fmt.Errorf("%w: data segment flags %d at module byte %d", ErrMalformed, flags, r.Offset(at))
	}
	if err != nil {
		return err
	}
	n, err := r.U32()
	if err != nil {
		return err
	}
	_, err = r.Bytes(n)
	return err
}

package oldmeter

import "fmt"

// Custom sections. wazero v1.12 reads every custom section's name, and
// decodes the "name" section (internal/wasm/binary/names.go), before any
// validation: it allocates a name's declared length before reading it,
// and sizes a map by a declared count before reading an entry, so 24
// bytes declaring 2^32-1 local names made it ask for ~96 GB and crashed
// the process out of memory, which nothing recovers. Screen reads them
// first, as wazero does, and refuses (ErrTooLarge) every length or count
// the bytes left could not hold. Other custom sections wazero copies by
// their section size (bounded by the module) or skips.

// screenCustom reads a custom section: its name and, for "name", every
// subsection wazero decodes, in its order (0 module name, 1 function
// names, 2 local names; others are skipped by their size, as wazero
// does). wazero decodes a known subsection without looking at its size
// and reads on from wherever it stopped, so a known subsection must end
// exactly at its size, and fit the section, or it is refused
// (ErrMalformed): then wazero reads the same bytes as Screen.
func screenCustom(r *reader) error {
	name, err := screenName(r, "custom section name")
	if err != nil {
		return err
	}
	if name != "name" {
		r.Pos = len(r.Buf)
		return nil
	}
	for !r.Done() {
		idAt := r.Pos
		id, _ := r.Byte()
		size, err := r.U32()
		if err != nil {
			return err
		}
		if uint64(size) > uint64(r.Left()) {
			return fmt.Errorf("%w: name subsection %d of %d bytes with %d left in the section at module byte %d", ErrMalformed, id, size, r.Left(), r.Offset(idAt))
		}
		sub, _ := r.sub(size)
		switch id {
		case 0:
			_, err = screenName(&sub, "module name")
		case 1:
			err = screenNameMap(&sub, false)
		case 2:
			err = screenNameMap(&sub, true)
		default:
			continue
		}
		if err != nil {
			return fmt.Errorf("name subsection %d: %w", id, err)
		}
		if !sub.Done() {
			return fmt.Errorf("%w: bytes after name subsection %d at module byte %d (wazero would read them as another subsection)", ErrMalformed, id, sub.Offset(sub.Pos))
		}
	}
	return nil
}

// screenNameMap reads a function name map (vector of function index and
// name) or, indirect, a local name map (vector of function index and a
// vector of local index and name), refusing each count before reading
// any entry of it.
func screenNameMap(r *reader, indirect bool) error {
	n, err := screenCount(r, "functions")
	if err != nil {
		return err
	}
	for range n {
		if _, err := r.U32(); err != nil {
			return err
		}
		if !indirect {
			if _, err := screenName(r, "function name"); err != nil {
				return err
			}
			continue
		}
		k, err := screenCount(r, "local names")
		if err != nil {
			return err
		}
		for range k {
			if _, err := r.U32(); err != nil {
				return err
			}
			if _, err := screenName(r, "local name"); err != nil {
				return err
			}
		}
	}
	return nil
}

// screenCount reads the count of a name map, whose every entry takes at
// least 2 bytes (an index and a length or count), and refuses one the
// bytes left could not hold.
func screenCount(r *reader, what string) (uint32, error) {
	at := r.Pos
	n, err := r.U32()
	if err != nil {
		return 0, err
	}
	if uint64(n)*2 > uint64(r.Left()) {
		return 0, fmt.Errorf("%w: %d %s in a name map of %d bytes (2 or more each) at module byte %d", ErrTooLarge, n, what, r.Left(), r.Offset(at))
	}
	return n, nil
}

// screenName reads a name whose declared length must fit the bytes left:
// wazero allocates the length before reading it.
func screenName(r *reader, what string) (string, error) {
	at := r.Pos
	n, err := r.U32()
	if err != nil {
		return "", err
	}
	if uint64(n) > uint64(r.Left()) {
		return "", fmt.Errorf("%w: %s of %d bytes with %d left at module byte %d", ErrTooLarge, what, n, r.Left(), r.Offset(at))
	}
	b, err := r.Bytes(n)
	return string(b), err
}

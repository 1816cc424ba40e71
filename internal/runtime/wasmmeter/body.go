package wasmmeter

import "fmt"

// A function body is seen as a sequence of instructions numbered 0..n-1
// (the final end is n-1). A checkpoint "at i" is a check sequence placed
// just before instruction i. The analysis below is shared by Instrument
// (which places checkpoints) and Verify (which recomputes the same facts
// from the instrumented bytes and checks the placed ones suffice).

// control is one open block, loop or if while a body is decoded.
type control struct {
	op    byte // opBlock, opLoop, opIf, or 0 for the function itself
	start int  // index of the block/loop/if instruction
	// minSrc is the smallest index of an instruction that jumps forward
	// to this frame's end (a br to it, or an if's false edge, or the
	// then-arm's jump at else); -1 when none does.
	minSrc int
}

// flow is what the meter needs to know about a body's control flow.
type flow struct {
	n int // number of instructions, final end included
	// mustCheck[i]: a checkpoint is required at i whatever else holds:
	// i is 0 (function entry), follows a loop (the target of every
	// backward branch) or follows a call (where a callee returns).
	mustCheck []bool
	// minSrc[i] is the smallest index of an instruction that jumps
	// forward to i; -1 when nothing jumps to i.
	minSrc []int32
}

// scanner accumulates a flow one instruction at a time.
type scanner struct {
	f     flow
	stack []control
	ended bool
}

func newScanner() *scanner {
	return &scanner{stack: []control{{op: 0, minSrc: -1}}}
}

func (s *scanner) grow(i int) {
	for len(s.f.mustCheck) <= i+1 {
		s.f.mustCheck = append(s.f.mustCheck, false)
		s.f.minSrc = append(s.f.minSrc, -1)
	}
}

func (s *scanner) jump(target int, src int) {
	s.grow(target)
	if m := s.f.minSrc[target]; m < 0 || int32(src) < m {
		s.f.minSrc[target] = int32(src)
	}
}

// branch records a br to label depth l from instruction i.
func (s *scanner) branch(l uint32, i int) error {
	if uint64(l) >= uint64(len(s.stack)) {
		return fmt.Errorf("%w: branch depth %d with %d labels open", ErrMalformed, l, len(s.stack))
	}
	c := &s.stack[len(s.stack)-1-int(l)]
	switch c.op {
	case opLoop, 0:
		// A loop's label is its header, right after the loop instruction,
		// where a checkpoint always is; the function's label returns.
	default:
		if c.minSrc < 0 || i < c.minSrc {
			c.minSrc = i
		}
	}
	return nil
}

// add records instruction i.
func (s *scanner) add(i int, in *inst) error {
	if s.ended {
		return fmt.Errorf("%w: instructions after the function's end", ErrMalformed)
	}
	s.grow(i)
	if i == 0 {
		s.f.mustCheck[0] = true
	}
	switch in.op {
	case opBlock, opLoop, opIf:
		s.stack = append(s.stack, control{op: in.op, start: i, minSrc: -1})
		if in.op == opLoop {
			s.f.mustCheck[i+1] = true
		}
	case opElse:
		c := &s.stack[len(s.stack)-1]
		if c.op != opIf {
			return fmt.Errorf("%w: else outside an if", ErrMalformed)
		}
		// The if's false edge lands after the else; the then-arm, on
		// reaching the else, jumps to the end.
		s.jump(i+1, c.start)
		c.op = opElse
		if c.minSrc < 0 || i < c.minSrc {
			c.minSrc = i
		}
	case opEnd:
		c := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		if c.op == opIf && (c.minSrc < 0 || c.start < c.minSrc) {
			c.minSrc = c.start // no else: the false edge lands after the end
		}
		if len(s.stack) == 0 {
			s.ended = true
			s.f.n = i + 1
			return nil
		}
		if c.minSrc >= 0 {
			s.jump(i+1, c.minSrc)
		}
	case opBr, opBrIf:
		return s.branch(in.idx, i)
	case opBrTable:
		for _, l := range in.labels {
			if err := s.branch(l, i); err != nil {
				return err
			}
		}
	case opCall, opCallIndirect:
		s.f.mustCheck[i+1] = true
	}
	return nil
}

func (s *scanner) finish() (flow, error) {
	if !s.ended {
		return flow{}, fmt.Errorf("%w: function body without its end", ErrMalformed)
	}
	s.f.mustCheck = s.f.mustCheck[:s.f.n]
	s.f.minSrc = s.f.minSrc[:s.f.n]
	return s.f, nil
}

// place chooses checkpoints for f: the required ones, one at every jump
// target that some jump reaches across an earlier checkpoint, and one
// wherever MaxCost instructions have passed without one. The sweep is
// left to right, so when a target is considered every checkpoint before
// it is already decided.
func place(f flow) []bool {
	at := make([]bool, f.n)
	last := -1
	for i := 0; i < f.n; i++ {
		if f.mustCheck[i] || (f.minSrc[i] >= 0 && last > int(f.minSrc[i])) || i-last >= MaxCost {
			at[i] = true
			last = i
		}
	}
	return at
}

// runs returns, for each checkpoint, the number of instructions from it
// to the next checkpoint or the body's end: the cost it charges.
func runs(at []bool) []int {
	cost := make([]int, len(at))
	next := len(at)
	for i := len(at) - 1; i >= 0; i-- {
		if at[i] {
			cost[i] = next - i
			next = i
		}
	}
	return cost
}

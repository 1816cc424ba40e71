package wasmmeter

import (
	"fmt"
	"slices"
)

// A function body is seen as a sequence of instructions numbered 0..n-1
// (the final end is n-1). A checkpoint "at i" is a check sequence placed
// just before instruction i. Control moves from instruction i to i+1
// (fall-through) or along a jump; every jump to a loop's label lands at
// the loop's header i+1, where a checkpoint always is, and every other
// jump goes forward. The analysis below is shared by Instrument (which
// places checkpoints) and Verify (which recomputes the same facts from the
// instrumented bytes and checks the placed ones suffice).

// control is one open block, loop or if while a body is decoded.
type control struct {
	op    byte // opBlock, opLoop, opIf, opElse (an if past its else), or 0 for the function
	start int  // index of the block, loop or if instruction
	// srcs are the instructions that jump forward to just after this
	// frame's end: a br to its label, an if's false edge when there is no
	// else, the then-arm's jump at else.
	srcs []int32
}

// edge is a forward jump.
type edge struct{ src, dst int32 }

// flow is what the meter needs to know about a body's control flow.
type flow struct {
	n int // number of instructions, final end included
	// mustCheck[i]: a checkpoint is required at i: i is 0 (function
	// entry), follows a loop instruction (the target of every backward
	// branch) or follows a call (where a callee returns).
	mustCheck []bool
	// noFall[i]: control never passes from i to i+1 (br, br_table,
	// return, unreachable, else, a tail call, the final end).
	noFall []bool
	// edges are the forward jumps, sorted by source.
	edges []edge
}

// scanner accumulates a flow one instruction at a time.
type scanner struct {
	f      flow
	stack  []control
	ended  bool
	lastOp byte
}

func newScanner() *scanner {
	return &scanner{stack: []control{{op: 0}}}
}

// branch records a jump from instruction i to label depth l.
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
		c.srcs = append(c.srcs, int32(i))
	}
	return nil
}

// add records instruction i.
func (s *scanner) add(i int, in *inst) error {
	if s.ended {
		return fmt.Errorf("%w: instructions after the function's end", ErrMalformed)
	}
	s.f.mustCheck = append(s.f.mustCheck, i == 0)
	s.f.noFall = append(s.f.noFall, false)
	if i > 0 {
		switch prev := s.lastOp; prev {
		case opLoop, opCall, opCallIndirect:
			s.f.mustCheck[i] = true
		}
	}
	s.lastOp = in.Op
	switch in.Op {
	case opBlock, opLoop, opIf:
		s.stack = append(s.stack, control{op: in.Op, start: i})
	case opElse:
		c := &s.stack[len(s.stack)-1]
		if c.op != opIf {
			return fmt.Errorf("%w: else outside an if", ErrMalformed)
		}
		// The if's false edge lands after the else; the then-arm, on
		// reaching the else, jumps past the end.
		s.f.edges = append(s.f.edges, edge{int32(c.start), int32(i + 1)})
		c.op = opElse
		c.srcs = append(c.srcs, int32(i))
		s.f.noFall[i] = true
	case opEnd:
		c := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		if len(s.stack) == 0 {
			s.ended = true
			s.f.n = i + 1
			s.f.noFall[i] = true
			return nil
		}
		if c.op == opIf {
			c.srcs = append(c.srcs, int32(c.start)) // no else: the false edge lands past the end
		}
		for _, src := range c.srcs {
			s.f.edges = append(s.f.edges, edge{src, int32(i + 1)})
		}
	case opBr:
		s.f.noFall[i] = true
		return s.branch(in.Idx, i)
	case opBrIf:
		return s.branch(in.Idx, i)
	case opBrTable:
		s.f.noFall[i] = true
		for _, l := range in.Labels {
			if err := s.branch(l, i); err != nil {
				return err
			}
		}
	case opUnreachable, 0x0f, opReturnCall, opReturnCallIn: // 0x0f: return
		s.f.noFall[i] = true
	}
	return nil
}

func (s *scanner) finish() (flow, error) {
	if !s.ended {
		return flow{}, fmt.Errorf("%w: function body without its end", ErrMalformed)
	}
	slices.SortFunc(s.f.edges, func(a, b edge) int { return int(a.src - b.src) })
	return s.f, nil
}

// paths computes, from the last instruction back, the longest walk (in
// instructions) from each instruction along fall-throughs and forward
// jumps until a checkpoint: what a check placed there must charge. With
// force, a successor whose walk would make its predecessor's exceed
// MaxCost-checkCost gets a checkpoint too (at is updated); a checkpoint added that
// way only shortens walks computed before it, so the costs stay upper
// bounds.
func paths(f flow, at []bool, force bool) []int32 {
	val := make([]int32, f.n)
	valueAt := func(j int32) int32 {
		if int(j) >= f.n || at[j] {
			return 0
		}
		return val[j]
	}
	e := len(f.edges)
	for i := f.n - 1; i >= 0; i-- {
		// The edges from i are the run of sorted edges ending at e.
		lo := e
		for lo > 0 && int(f.edges[lo-1].src) == i {
			lo--
		}
		succ := f.edges[lo:e]
		e = lo
		best := func() int32 {
			var b int32
			if !f.noFall[i] {
				b = valueAt(int32(i + 1))
			}
			for _, ed := range succ {
				b = max(b, valueAt(ed.dst))
			}
			return b
		}
		v := 1 + best()
		if limit := int32(MaxCost - checkCost); force && v > limit {
			if !f.noFall[i] && 1+valueAt(int32(i+1)) > limit {
				at[i+1] = true
			}
			for _, ed := range succ {
				if 1+valueAt(ed.dst) > limit {
					at[ed.dst] = true
				}
			}
			v = 1 + best()
		}
		val[i] = v
	}
	return val
}

// checkCost is what a check charges for itself on top of the walk after
// it: the sequence costs about as much as four plain instructions when
// the fuel lasts, so a loop of one instruction still pays for its time.
const checkCost = 4

// place chooses checkpoints for f and what each charges (cost[i] for a
// checkpoint at i): the longest walk from it plus checkCost, at most
// MaxCost.
func place(f flow) (at []bool, cost []int32) {
	at = slices.Clone(f.mustCheck)
	cost = paths(f, at, true)
	for i := range cost {
		cost[i] += checkCost
	}
	return at, cost
}

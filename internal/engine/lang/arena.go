package lang

import "github.com/plasmd/plasmd/internal/model/plan"

// The parser builds its AST from slabs: chunks of nodes handed out one by
// one and, in a Scratch, kept for the next program. A program's AST is a
// few dozen small objects that all die together when planning ends; in the
// Wasm guest each separate allocation (and the collection it brings
// nearer) costs far more than the work done with it.

// slab hands out T's, singly or as short slices, from chunks it keeps
// until reset. A chunk is never grown, so pointers into it stay valid.
// Reset does not clear: every way out of the slab (put, take, slice)
// overwrites or zeroes what it hands out, so a reset costs nothing and a
// slab no program used costs nothing either. Until overwritten, a slot
// still points at what the previous program put there, which bounds what a
// Scratch holds on to at one program's worth.
type slab[T any] struct {
	chunks [][]T
	c, i   int // the chunk in use and the next free element in it
	// direct makes every take a plain allocation: a one-off parse (Plan)
	// has nothing to reuse, and chunks would only cost it memory.
	direct bool
}

// slabChunk is the size of a slab's first chunk; later ones double.
const slabChunk = 16

// maxSlabChunks bounds the chunks a slab keeps across reset (240 elements
// of each kind, a few hundred KB over all slabs at worst, against a 64 MB
// instance), so one huge program does not pin its AST; typical programs use
// a fraction of the first chunk.
const maxSlabChunks = 4

// grab returns n contiguous elements holding whatever they last held.
func (s *slab[T]) grab(n int) []T {
	if s.direct {
		return make([]T, n)
	}
	for s.c < len(s.chunks) {
		if ch := s.chunks[s.c]; len(ch)-s.i >= n {
			s.i += n
			return ch[s.i-n : s.i : s.i]
		}
		s.c, s.i = s.c+1, 0
	}
	size := max(slabChunk<<min(len(s.chunks), 10), n)
	s.chunks = append(s.chunks, make([]T, size))
	s.i = n
	return s.chunks[s.c][:n:n]
}

// take returns n contiguous zeroed elements.
func (s *slab[T]) take(n int) []T {
	x := s.grab(n)
	if !s.direct {
		clear(x)
	}
	return x
}

// put stores x in the slab and returns its address.
func (s *slab[T]) put(x T) *T {
	p := &s.grab(1)[0]
	*p = x
	return p
}

// slice returns an empty slice with room for n elements; appending more
// than n moves it to the heap as usual. A direct slab returns nil, so a
// one-off parse grows its slices exactly as plain appends would.
func (s *slab[T]) slice(n int) []T {
	if s.direct {
		return nil
	}
	return s.grab(n)[:0]
}

// empty is slice for a result that must be non-nil even when nothing is
// appended (it encodes as [] rather than null).
func (s *slab[T]) empty(n int) []T {
	if s.direct {
		return []T{}
	}
	return s.grab(n)[:0]
}

// reset makes everything handed out available again and drops chunks
// beyond maxSlabChunks.
func (s *slab[T]) reset() {
	if len(s.chunks) > maxSlabChunks {
		clear(s.chunks[maxSlabChunks:])
		s.chunks = s.chunks[:maxSlabChunks]
	}
	s.c, s.i = 0, 0
}

// astArena holds the slabs of one parse.
type astArena struct {
	lines     slab[line]
	rhss      slab[rhs]
	sources   slab[source]
	steps     slab[step]
	values    slab[value]
	names     slab[name]
	preds     slab[pred]
	args      slab[arg]
	lineRefs  slab[*line]
	rhsRefs   slab[*rhs]
	stepRefs  slab[*step]
	valueRefs slab[*value]
	syms      slab[symRef] // filled by expand, before the parse
}

// planArena holds the slabs of one planning call: the short slices and
// small structs of the plan itself (valid, like the rest of a Scratch's
// plan, until its next call) and the planner's own bookkeeping.
type planArena struct {
	strs       slab[string]
	ints       slab[int]
	bools      slab[bool]
	transforms slab[plan.Transform]
	roots      slab[plan.Root]
	hops       slab[plan.Hop]
	binds      slab[plan.Bind]
	bounds     slab[bound]
	plans      slab[plan.Plan]
	evs        slab[evPred]
}

// directAST and directPlan serve every one-off call. A direct slab never
// writes to itself (take allocates and returns), so sharing them between
// goroutines is safe, and a one-off Plan allocates no arena.
var (
	directAST  = oneOff()
	directPlan = oneOffPlan()
)

func oneOffPlan() *planArena {
	a := &planArena{}
	a.strs.direct, a.ints.direct, a.bools.direct, a.transforms.direct = true, true, true, true
	a.roots.direct, a.hops.direct, a.binds.direct, a.bounds.direct, a.plans.direct = true, true, true, true, true
	a.evs.direct = true
	return a
}

func (a *planArena) reset() {
	a.strs.reset()
	a.ints.reset()
	a.bools.reset()
	a.transforms.reset()
	a.roots.reset()
	a.hops.reset()
	a.binds.reset()
	a.bounds.reset()
	a.plans.reset()
	a.evs.reset()
}

// oneOff returns an arena whose slabs allocate directly.
func oneOff() *astArena {
	a := &astArena{}
	a.lines.direct, a.rhss.direct, a.sources.direct, a.steps.direct = true, true, true, true
	a.values.direct, a.names.direct, a.preds.direct, a.args.direct = true, true, true, true
	a.lineRefs.direct, a.rhsRefs.direct, a.stepRefs.direct, a.valueRefs.direct = true, true, true, true
	a.syms.direct = true
	return a
}

func (a *astArena) reset() {
	a.lines.reset()
	a.rhss.reset()
	a.sources.reset()
	a.steps.reset()
	a.values.reset()
	a.names.reset()
	a.preds.reset()
	a.args.reset()
	a.lineRefs.reset()
	a.rhsRefs.reset()
	a.stepRefs.reset()
	a.valueRefs.reset()
	a.syms.reset()
}

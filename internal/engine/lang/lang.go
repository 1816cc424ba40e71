// Package lang owns the plasm language inside the engine: it lexes a
// program, expands session symbols (e#/m#/p#/r#) at the token level, parses
// it into a positioned AST, resolves and type-checks every name against the
// session's catalogs, and plans it into a plan.Plan the host can execute
// without any catalog knowledge.
//
// Every failure is an *abi.Error carrying a code callers branch on, the
// 1-based line:column of the offending text and, where it helps, a hint
// (the valid names, a "did you mean", or the form to write instead). Inputs
// are bounded (size, bracket depth, node count), and nothing here panics on
// hostile programs.
package lang

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// Limits on the work one program may ask for.
const (
	MaxProgram = 64 << 10 // bytes
	maxDepth   = 64       // bracket nesting
	maxNodes   = 256      // plan nodes
)

// Plan turns a program into a plan against the loaded catalogs.
func Plan(req *abi.PlanRequest, catalogs map[string]*catalog.Catalog) (*plan.Plan, *abi.Error) {
	s := Scratch{oneOff: true}
	return s.Plan(req, catalogs)
}

// Scratch plans programs like Plan but keeps its working buffers (tokens,
// plan nodes, label tables) from one call to the next, so a warm caller
// allocates little per program. In the Wasm guest every allocation, and
// the garbage collection it brings, costs many times what it does natively;
// an engine instance, which serves one call at a time and encodes each plan
// before taking the next call, holds one Scratch.
//
// The plan a Scratch returns shares memory with it: it is valid only until
// the Scratch's next call. A Scratch is not safe for concurrent use. The
// zero value is ready to use.
type Scratch struct {
	toks       []token
	opens      []pos
	nodes      []plan.Node
	gets       []entGet
	entries    []*catalog.Catalog
	labels     table[*bound]
	boundLater table[pos]
	ast        astArena
	plan       planArena
	// oneOff marks the Scratch of a single Plan call: it parses into
	// plain allocations, there being no next call to reuse slabs.
	oneOff bool
}

// maxKeptTokens bounds the token buffer a Scratch keeps between calls, so
// one huge program does not pin megabytes in an instance for good.
const maxKeptTokens = 4096

// Plan turns a program into a plan against the loaded catalogs. The plan
// is valid until the next call on s.
func (s *Scratch) Plan(req *abi.PlanRequest, catalogs map[string]*catalog.Catalog) (*plan.Plan, *abi.Error) {
	if req == nil {
		return nil, &abi.Error{Code: abi.CodeBadRequest, Message: "plan request is missing"}
	}
	src := req.Program
	if len(src) > MaxProgram {
		return nil, errAt(posOf(src, MaxProgram), abi.CodeBadRequest,
			fmt.Sprintf("program is %d bytes; the limit is %d", len(src), MaxProgram), "split the work into several programs")
	}
	lx := &lexer{src: src, line: 1, col: 1, toks: s.toks[:0], opens: s.opens[:0], lineStart: true}
	toks, err := lx.lex()
	if cap(lx.toks) <= maxKeptTokens {
		s.toks, s.opens = lx.toks[:0], lx.opens[:0]
	}
	if err != nil {
		return nil, err
	}
	arena := &s.ast
	if s.oneOff {
		arena = directAST
	} else {
		arena.reset()
	}
	if err := expand(toks, req.Symbols, &arena.syms); err != nil {
		return nil, err
	}
	lines, err := parse(toks, arena)
	if err != nil {
		return nil, err
	}
	if err := checkSupported(lines); err != nil {
		return nil, err
	}
	s.labels.reset()
	s.boundLater.reset()
	s.entries = sessionEntries(req, catalogs, s.entries[:0])
	pa := &s.plan
	if s.oneOff {
		pa = directPlan
	} else {
		pa.reset()
	}
	p := &planner{req: req, src: src, entries: s.entries, nodes: s.nodes[:0], labels: &s.labels, boundLater: &s.boundLater, pa: pa, gets: s.gets[:0]}
	pl, err := p.program(lines)
	clear(p.gets) // keep no catalog alive through the cache
	s.gets = p.gets[:0]
	s.nodes = p.nodes[:0]
	return pl, err
}

// posOf is the line:column of byte offset off.
func posOf(src string, off int) pos {
	before := src[:off]
	line := strings.Count(before, "\n") + 1
	col := utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
	return pos{line, col}
}

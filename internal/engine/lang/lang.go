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
	if req == nil {
		return nil, &abi.Error{Code: abi.CodeBadRequest, Message: "plan request is missing"}
	}
	src := req.Program
	if len(src) > MaxProgram {
		return nil, errAt(posOf(src, MaxProgram), abi.CodeBadRequest,
			fmt.Sprintf("program is %d bytes; the limit is %d", len(src), MaxProgram), "split the work into several programs")
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	if err := expand(toks, req.Symbols); err != nil {
		return nil, err
	}
	lines, err := parse(toks)
	if err != nil {
		return nil, err
	}
	if err := checkSupported(lines); err != nil {
		return nil, err
	}
	p := &planner{req: req, src: src, entries: sessionEntries(req, catalogs)}
	return p.program(lines)
}

// posOf is the line:column of byte offset off.
func posOf(src string, off int) pos {
	before := src[:off]
	line := strings.Count(before, "\n") + 1
	col := utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
	return pos{line, col}
}

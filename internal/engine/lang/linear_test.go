package lang

import (
	"fmt"
	"strings"
	"testing"
)

// The lexer and parser stay linear in the program's size: the allocations
// for a program four times as long are at most about four times as many,
// for every shape of input the new grammar adds. Allocation counts do not
// depend on machine speed, so the test cannot flake on a loaded machine.
func TestParserLinear(t *testing.T) {
	gens := map[string]func(n int) string{
		"comments": func(n int) string {
			return strings.Repeat(";; a comment line with words\n", n) + "Project"
		},
		"heredoc_lines": func(n int) string {
			return "note = <<EOF\n" + strings.Repeat("a line of text EOFX\n", n) + "EOF\nnote"
		},
		"phrase": func(n int) string {
			return "Issue{title=" + strings.Repeat("word ", n) + "}"
		},
		"preds": func(n int) string {
			var b strings.Builder
			b.WriteString("Issue{")
			for i := range n {
				fmt.Fprintf(&b, "Project.name=\"x%d\", ", i)
			}
			b.WriteString("status=\"open\"}")
			return b.String()
		},
		"args": func(n int) string {
			return "Issue.create(" + strings.Repeat("title=\"x\", ", n) + "..)"
		},
		"stray_tags": func(n int) string {
			return "a = <<T\nx\nT\n" + strings.Repeat("T\n", n)
		},
		"derive": func(n int) string {
			var b strings.Builder
			b.WriteString("a = Project\nb = a => {")
			for i := range n {
				fmt.Fprintf(&b, "c%d: _.name, ", i)
			}
			b.WriteString("z: 1}\nb")
			return b.String()
		},
	}
	for name, gen := range gens {
		small, large := gen(500), gen(2000)
		a1 := testing.AllocsPerRun(3, func() { lexParse(small) })
		a4 := testing.AllocsPerRun(3, func() { lexParse(large) })
		if a4 > 4.5*a1+64 {
			t.Errorf("%s: %.0f allocations for %d bytes, %.0f for %d bytes: not linear", name, a1, len(small), a4, len(large))
		}
	}
}

func lexParse(src string) {
	toks, err := lex(src)
	if err != nil {
		return
	}
	if expand(toks, testSymbols(), &oneOff().syms) != nil {
		return
	}
	_, _ = parse(toks, nil)
}

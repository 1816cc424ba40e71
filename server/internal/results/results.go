// Package results renders run results for agents and clients: the Markdown
// an MCP client sees (one "## label (n rows)" heading and a fenced TSV table
// per root), TSV, JSON rows and NDJSON.
package results

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/executor"
)

// PreviewRows is how many rows Markdown shows before pointing at the full
// artifact.
const PreviewRows = 25

// Root is one rendered result.
type Root struct {
	Label string
	Table abi.Table
	// PageHandle continues the list (e.g. s0_pg2), when there is more.
	PageHandle string
	// ArtifactURI is where the full result can be read.
	ArtifactURI string
}

// Markdown renders roots as the text an agent reads.
func Markdown(roots []Root) string {
	var b strings.Builder
	for i, r := range roots {
		if i > 0 {
			b.WriteByte('\n')
		}
		n := len(r.Table.Rows)
		fmt.Fprintf(&b, "## %s (%d %s)\n", oneLine(r.Label), n, plural(n, "row", "rows"))
		if len(r.Table.Columns) == 0 && n == 0 {
			b.WriteString("_No rows._\n")
			continue
		}
		show := r.Table
		if n > PreviewRows {
			show.Rows = show.Rows[:PreviewRows]
		}
		var body strings.Builder
		writeTSV(&body, show)
		fence := fenceFor(body.String())
		b.WriteString(fence + "tsv\n")
		b.WriteString(body.String())
		b.WriteString(fence + "\n")
		if n > PreviewRows {
			if r.ArtifactURI != "" {
				fmt.Fprintf(&b, "_Showing %d of %d rows. Full result: %s_\n", PreviewRows, n, r.ArtifactURI)
			} else {
				fmt.Fprintf(&b, "_Showing %d of %d rows._\n", PreviewRows, n)
			}
		}
		if r.PageHandle != "" {
			fmt.Fprintf(&b, "_More rows: `page(%s)`_\n", r.PageHandle)
		}
	}
	return b.String()
}

// TSV renders roots as TSV blocks separated by "# label" lines.
func TSV(roots []Root) string {
	var b strings.Builder
	for i, r := range roots {
		if len(roots) > 1 {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "# %s\n", oneLine(r.Label))
		}
		writeTSV(&b, r.Table)
	}
	return b.String()
}

func writeTSV(b *strings.Builder, t abi.Table) {
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteByte('\t')
		}
		b.WriteString(Cell(c))
	}
	b.WriteByte('\n')
	for _, row := range t.Rows {
		for i, v := range row {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(Cell(v))
		}
		b.WriteByte('\n')
	}
}

// Cell renders one value so that a TSV row stays one line with one tab per
// column: tabs, newlines and backslashes are escaped.
func Cell(v any) string {
	s := executor.Text(v)
	if !strings.ContainsAny(s, "\t\n\r\\") {
		return s
	}
	return cellEscaper.Replace(s)
}

// cellEscaper is built once: a Replacer compiles its table on first use,
// which per cell cost more than the escaping.
var cellEscaper = strings.NewReplacer("\\", "\\\\", "\t", "\\t", "\n", "\\n", "\r", "\\r")

// Objects converts a table to JSON-ready row objects keyed by column.
func Objects(t abi.Table) []map[string]any {
	out := make([]map[string]any, len(t.Rows))
	for i, row := range t.Rows {
		m := make(map[string]any, len(t.Columns))
		for j, c := range t.Columns {
			if j < len(row) {
				m[c] = row[j]
			}
		}
		out[i] = m
	}
	return out
}

// NDJSON renders one JSON object per row, each tagged with its root label.
func NDJSON(roots []Root) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, r := range roots {
		for _, obj := range Objects(r.Table) {
			if err := enc.Encode(map[string]any{"root": r.Label, "row": obj}); err != nil {
				return nil, err
			}
		}
	}
	return []byte(b.String()), nil
}

// fenceFor returns a backtick fence longer than any backtick run in body:
// a cell that starts a row with ``` would otherwise close the block early
// and turn the rest of the table into Markdown.
func fenceFor(body string) string {
	longest, run := 0, 0
	for i := 0; i < len(body); i++ {
		if body[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// maxLabel bounds a heading so a long program line cannot flood the output.
const maxLabel = 120

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxLabel {
		// Cut on a rune boundary so the heading stays valid UTF-8.
		cut := maxLabel - 3
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/plasmd/plasmd/guest/abi"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs from golden:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

func rows(n int) [][]any {
	out := make([][]any, n)
	for i := range out {
		out[i] = []any{fmt.Sprintf("i%d", i+1), int64(i + 1)}
	}
	return out
}

// multiRoot is a representative run: a single row with awkward cells, a list
// larger than the preview with a page handle and artifact, an empty list
// with columns, and a mutation with no rows or columns.
func multiRoot() []Root {
	return []Root{
		{
			Label: "Issue(\"i1\")",
			Table: abi.Table{
				Columns: []string{"id", "title", "votes", "score", "open", "assignee", "labels"},
				Rows: [][]any{{"i1", "Crash\ton\nlogin \\ again", int64(3), 1.5, true, nil,
					[]any{"bug", map[string]any{"name": "p1"}}}},
			},
		},
		{
			Label:       "Issue{status=\"open\"}",
			Table:       abi.Table{Columns: []string{"id", "votes"}, Rows: rows(30)},
			PageHandle:  "s0_pg2",
			ArtifactURI: "plasmd://runs/r1/1.ndjson",
		},
		{Label: "Project{archived=true}", Table: abi.Table{Columns: []string{"id", "name"}}},
		{Label: "Issue(\"i2\").delete()", Table: abi.Table{}},
	}
}

func TestMarkdownGolden(t *testing.T) {
	golden(t, "multi_root.md", Markdown(multiRoot()))
}

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name     string
		root     Root
		contains []string
		absent   []string
	}{
		{
			name:     "singular heading",
			root:     Root{Label: "Item", Table: abi.Table{Columns: []string{"id", "n"}, Rows: rows(1)}},
			contains: []string{"## Item (1 row)\n", "```tsv\nid\tn\ni1\t1\n```\n"},
			absent:   []string{"rows)", "_No rows._", "Showing", "page("},
		},
		{
			name:     "plural heading",
			root:     Root{Label: "Item", Table: abi.Table{Columns: []string{"id", "n"}, Rows: rows(2)}},
			contains: []string{"## Item (2 rows)\n", "id\tn\ni1\t1\ni2\t2\n"},
		},
		{
			name:     "zero rows with columns keeps the header table",
			root:     Root{Label: "Item", Table: abi.Table{Columns: []string{"id"}}},
			contains: []string{"## Item (0 rows)\n", "```tsv\nid\n```\n"},
			absent:   []string{"_No rows._"},
		},
		{
			name:     "no columns and no rows",
			root:     Root{Label: "Item.delete()"},
			contains: []string{"## Item.delete() (0 rows)\n_No rows._\n"},
			absent:   []string{"```"},
		},
		{
			name:     "exactly the preview size shows everything",
			root:     Root{Label: "L", Table: abi.Table{Columns: []string{"id", "n"}, Rows: rows(PreviewRows)}, ArtifactURI: "a://x"},
			contains: []string{fmt.Sprintf("i%d\t%d\n```", PreviewRows, PreviewRows)},
			absent:   []string{"Showing", "a://x"},
		},
		{
			name:     "preview then artifact",
			root:     Root{Label: "L", Table: abi.Table{Columns: []string{"id", "n"}, Rows: rows(PreviewRows + 1)}, ArtifactURI: "a://x"},
			contains: []string{"## L (26 rows)", "i25\t25\n```\n_Showing 25 of 26 rows. Full result: a://x_\n"},
			absent:   []string{"i26"},
		},
		{
			name:     "preview without an artifact does not dangle",
			root:     Root{Label: "L", Table: abi.Table{Columns: []string{"id", "n"}, Rows: rows(40)}},
			contains: []string{"_Showing 25 of 40 rows._\n"},
			absent:   []string{"Full result"},
		},
		{
			name:     "page handle",
			root:     Root{Label: "L", Table: abi.Table{Columns: []string{"id", "n"}, Rows: rows(2)}, PageHandle: "s3_pg2"},
			contains: []string{"```\n_More rows: `page(s3_pg2)`_\n"},
		},
		{
			name:     "label collapsed to one line",
			root:     Root{Label: "a =\n  Item\t{x=1}", Table: abi.Table{Columns: []string{"id"}}},
			contains: []string{"## a = Item {x=1} (0 rows)\n"},
		},
		{
			name:     "escaped cells",
			root:     Root{Label: "L", Table: abi.Table{Columns: []string{"a\tb", "c"}, Rows: [][]any{{"x\ty", "1\n2\r3\\4"}}}},
			contains: []string{"a\\tb\tc\nx\\ty\t1\\n2\\r3\\\\4\n"},
		},
		{
			name:     "cell cannot close the fence",
			root:     Root{Label: "L", Table: abi.Table{Columns: []string{"body"}, Rows: [][]any{{"```"}, {"````md"}}}},
			contains: []string{"`````tsv\nbody\n```\n````md\n`````\n"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Markdown([]Root{tc.root})
			for _, s := range tc.contains {
				if !strings.Contains(got, s) {
					t.Errorf("missing %q in:\n%s", s, got)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(got, s) {
					t.Errorf("unexpected %q in:\n%s", s, got)
				}
			}
		})
	}
}

func TestMarkdownRowsStayOneLine(t *testing.T) {
	got := Markdown(multiRoot()[:1])
	lines := strings.Split(got, "\n")
	// heading, fence, header, one row, fence, trailing "".
	if len(lines) != 6 {
		t.Fatalf("got %d lines:\n%s", len(lines), got)
	}
	if n := strings.Count(lines[3], "\t"); n != 6 {
		t.Fatalf("row has %d tabs, want 6: %q", n, lines[3])
	}
}

func TestLongLabelTruncatedOnRuneBoundary(t *testing.T) {
	label := strings.Repeat("é", 100) // 200 bytes
	got := Markdown([]Root{{Label: label}})
	if !utf8.ValidString(got) {
		t.Fatalf("invalid UTF-8 heading: %q", got)
	}
	heading := strings.SplitN(got, "\n", 2)[0]
	if !strings.HasSuffix(heading, "... (0 rows)") || len(heading) > len("## ")+maxLabel+len(" (0 rows)") {
		t.Fatalf("heading = %q", heading)
	}
	if got := oneLine(strings.Repeat("a", maxLabel)); len(got) != maxLabel || strings.HasSuffix(got, "...") {
		t.Fatalf("label at the limit was cut: %q", got)
	}
}

func TestCell(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{nil, ""},
		{"plain", "plain"},
		{"a\tb", `a\tb`},
		{"a\nb", `a\nb`},
		{"a\r\nb", `a\r\nb`},
		{`C:\dir`, `C:\\dir`},
		{`\t`, `\\t`}, // a literal backslash-t stays distinguishable from a tab
		{int64(-7), "-7"},
		{1.25, "1.25"},
		{float64(1e21), "1000000000000000000000"},
		{true, "true"},
		{json.Number("12.50"), "12.50"},
		{[]any{"a", int64(1)}, `["a",1]`},
		{map[string]any{"k": "v\tw"}, `{"k":"v\\tw"}`},
	}
	for _, tc := range tests {
		if got := Cell(tc.in); got != tc.want {
			t.Errorf("Cell(%#v) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Cell(tc.in); strings.ContainsAny(got, "\t\n\r") {
			t.Errorf("Cell(%#v) = %q keeps a separator", tc.in, got)
		}
	}
}

func TestTSV(t *testing.T) {
	one := Root{Label: "A", Table: abi.Table{Columns: []string{"id", "n"}, Rows: rows(2)}}
	two := Root{Label: "B\nlabel", Table: abi.Table{Columns: []string{"x"}, Rows: [][]any{{"a\tb"}}}}
	tests := []struct {
		name  string
		roots []Root
		want  string
	}{
		{"single root has no separator", []Root{one}, "id\tn\ni1\t1\ni2\t2\n"},
		{"multi root separators", []Root{one, two}, "# A\nid\tn\ni1\t1\ni2\t2\n\n# B label\nx\na\\tb\n"},
		{"no preview limit", []Root{{Label: "L", Table: abi.Table{Columns: []string{"id", "n"}, Rows: rows(30)}}},
			"id\tn\n" + func() string {
				var b strings.Builder
				for i := 1; i <= 30; i++ {
					fmt.Fprintf(&b, "i%d\t%d\n", i, i)
				}
				return b.String()
			}()},
		{"nothing", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := TSV(tc.roots); got != tc.want {
				t.Fatalf("TSV = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestObjects(t *testing.T) {
	tb := abi.Table{
		Columns: []string{"id", "n", "extra"},
		Rows:    [][]any{{"a", int64(1), nil}, {"b"}, {"c", int64(3), "x", "ignored"}},
	}
	want := []map[string]any{
		{"id": "a", "n": int64(1), "extra": nil},
		{"id": "b"},
		{"id": "c", "n": int64(3), "extra": "x"},
	}
	if got := Objects(tb); !reflect.DeepEqual(got, want) {
		t.Fatalf("Objects = %#v", got)
	}
	if got := Objects(abi.Table{Columns: []string{"id"}}); got == nil || len(got) != 0 {
		t.Fatalf("empty table Objects = %#v, want an empty non-nil slice (encodes as [])", got)
	}
}

func TestNDJSON(t *testing.T) {
	roots := []Root{
		{Label: "A", Table: abi.Table{Columns: []string{"id", "body"}, Rows: [][]any{{"a1", "x\ny"}, {"a2", nil}}}},
		{Label: "Empty", Table: abi.Table{Columns: []string{"id"}}},
		{Label: "B", Table: abi.Table{Columns: []string{"n"}, Rows: [][]any{{1.5}}}},
	}
	b, err := NDJSON(roots)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"root":"A","row":{"body":"x\ny","id":"a1"}}`,
		`{"root":"A","row":{"body":null,"id":"a2"}}`,
		`{"root":"B","row":{"n":1.5}}`,
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	var got []string
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("NDJSON lines =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !bytes.HasSuffix(b, []byte("\n")) {
		t.Fatal("NDJSON must end with a newline")
	}
	if _, err := NDJSON([]Root{{Label: "bad", Table: abi.Table{Columns: []string{"f"}, Rows: [][]any{{func() {}}}}}}); err == nil {
		t.Fatal("unencodable cell accepted")
	}
	if b, err := NDJSON(nil); err != nil || len(b) != 0 {
		t.Fatalf("NDJSON(nil) = %q, %v", b, err)
	}
}

// Whatever a backend returns, each row stays one line inside one fenced block
// and the heading stays valid UTF-8.
func FuzzMarkdown(f *testing.F) {
	f.Add("Issue", "plain", "x")
	f.Add("a\nb", "```", "a\tb\\")
	f.Add(strings.Repeat("é", 80), "``````", "\r\n")
	f.Fuzz(func(t *testing.T, label, a, b string) {
		got := Markdown([]Root{{Label: label, Table: abi.Table{Columns: []string{"a", "b"}, Rows: [][]any{{a, b}, {b, a}}}}})
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		// heading, fence, header, two rows, fence.
		if len(lines) != 6 {
			t.Fatalf("%d lines:\n%s", len(lines), got)
		}
		if utf8.ValidString(label) && !utf8.ValidString(lines[0]) {
			t.Fatalf("heading lost UTF-8 validity: %q", lines[0])
		}
		fence := strings.TrimSuffix(lines[1], "tsv")
		if lines[5] != fence {
			t.Fatalf("closing fence %q != opening %q", lines[5], fence)
		}
		for _, row := range lines[2:5] {
			if strings.Count(row, "\t") != 1 {
				t.Fatalf("row %q does not have exactly one tab", row)
			}
			if strings.HasPrefix(row, fence) {
				t.Fatalf("row %q could close the fence %q", row, fence)
			}
		}
	})
}

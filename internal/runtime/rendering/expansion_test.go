package rendering

import (
	"encoding/json"
	"runtime"
	"testing"
)

// renderAlloc is what one Render of n rows, each a list of 100 copies of
// lit, allocates in bytes.
func renderAlloc(t *testing.T, tp *Template, lit string, n int) uint64 {
	t.Helper()
	rows := make([]map[string]any, n)
	for i := range rows {
		list := make([]any, 100)
		for j := range list {
			list[j] = json.Number(lit)
		}
		rows[i] = map[string]any{"a": list, "b": json.Number(lit)}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := tp.Render(rows); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestIntegerExpansionBounded: a decoder cell kept as a short literal of a
// huge integer (1e4095, which the decoder keeps as written) is not written
// out as its 4096 digits for the template: Render converts every row
// before it runs, so 1,000 rows of 100 such numbers took 400 MB before
// MaxOutput could stop anything. Measured in bytes allocated against rows
// of as many small integers, not in time; the value still prints as
// written and compares exactly.
func TestIntegerExpansionBounded(t *testing.T) {
	tp, err := Parse(`{{range .rows}}{{end}}`)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	huge := renderAlloc(t, tp, "1e4095", n)
	small := renderAlloc(t, tp, "1e15", n)
	t.Logf("1e4095 rows: %d bytes; 1e15 rows: %d bytes (%.2f×)", huge, small, float64(huge)/float64(small))
	if huge > 3*small {
		t.Errorf("1e4095 rows allocated %d bytes, %.1f× the %d of as many 1e15 rows", huge, float64(huge)/float64(small), small)
	}
	row := []map[string]any{{"a": json.Number("1e4095"), "b": json.Number("1" + zeros(4095)), "c": json.Number("1e4094")}}
	tp, err = Parse(`{{range .rows}}{{.a}} {{eq .a .b}} {{gt .a .c}} {{lt .a .c}}{{end}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tp.Render(row); err != nil || got != "1e4095 true true false" {
		t.Errorf("got %.80q, %v; want 1e4095 true true false", got, err)
	}
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

package extract

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
)

// retainedBytes is the live heap an Apply of body leaves while its output
// is held, in bytes.
func retainedBytes(t *testing.T, s *Spec, body []byte) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, aerr := Apply(s, &abi.DecodeRequest{Capability: "list", Status: 200}, body, Options{})
	runtime.GC()
	runtime.ReadMemStats(&after)
	if aerr != nil {
		t.Fatal(aerr)
	}
	if len(out.Table.Rows) == 0 {
		t.Fatal("no rows")
	}
	runtime.KeepAlive(out)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// TestNestedExpansionBounded is the review's case: numbers nested in an
// untyped column's lists (1,000 rows of {"a":[1e4095 ×100]}, 708 KB) left
// 412 MB live after Apply when each became its 4096 digits. What Apply
// keeps must stay within a fixed multiple of the body's own size; a
// vendor row's cell (Cell, untyped) keeps the same form.
func TestNestedExpansionBounded(t *testing.T) {
	s := okSpec()
	s.Columns = []Column{{Name: "a", Path: []string{"a"}}}
	list := strings.TrimSuffix(strings.Repeat("1e4095,", 100), ",")
	body := []byte(`{"items":[` + strings.TrimSuffix(strings.Repeat(`{"a":[`+list+`]},`, 1000), ",") + `]}`)
	kept := retainedBytes(t, s, body)
	t.Logf("body %d bytes, %d bytes live after Apply (%.1f×)", len(body), kept, float64(kept)/float64(len(body)))
	if kept > 20*uint64(len(body)) {
		t.Errorf("Apply of a %d-byte body keeps %d bytes live (%.0f×)", len(body), kept, float64(kept)/float64(len(body)))
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(`{"a":[1e4095,{"b":1e4095}]}`))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(Cell(v, ""))
	if string(got) != `{"a":[1e4095,{"b":1e4095}]}` {
		t.Errorf("vendor cell %.80s, want the literals kept", got)
	}
}

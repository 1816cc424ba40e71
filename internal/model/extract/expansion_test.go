package extract

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
)

// allocBytes is what one Apply of body with s allocates, in bytes.
func allocBytes(t *testing.T, s *Spec, body []byte) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, aerr := Apply(s, &abi.DecodeRequest{Capability: "list", Status: 200}, body, Options{})
	runtime.ReadMemStats(&after)
	if aerr != nil {
		t.Fatal(aerr)
	}
	if len(out.Table.Rows) == 0 {
		t.Fatal("no rows")
	}
	return after.TotalAlloc - before.TotalAlloc
}

// rowsOf is a body of n rows whose integer id is lit.
func rowsOf(lit string, n int) []byte {
	return []byte(`{"items":[` + strings.TrimSuffix(strings.Repeat(`{"id":`+lit+`},`, n), ",") + `]}`)
}

// TestIntegerExpansionBounded: a short literal of a huge integer in an
// integer or untyped column (1e4095, 6 bytes) is not expanded into its 4096 digits,
// so a body of many such rows costs about what a body of as many small
// integers costs (20,000 rows allocated 176 MB from a 280 KB body; MaxOutput
// is checked only after every row is built). Measured in bytes allocated
// against a body of the same length and row count, not in time.
func TestIntegerExpansionBounded(t *testing.T) {
	for _, typ := range []string{"integer", ""} { // an integer column, an untyped one
		s := okSpec()
		s.Columns[0].Type = typ
		const n = 20000
		huge := allocBytes(t, s, rowsOf("1e4095", n))
		small := allocBytes(t, s, rowsOf("123456", n))
		t.Logf("type %q: 1e4095 rows: %d bytes; 123456 rows: %d bytes (%.2f×)", typ, huge, small, float64(huge)/float64(small))
		if huge > 3*small {
			t.Errorf("type %q: 1e4095 rows allocated %d bytes, %.1f× the %d of as many 123456 rows", typ, huge, float64(huge)/float64(small), small)
		}
	}
}

// An integer literal is canonicalised only while its digits stay within a
// small margin of the literal's length; past it the cell keeps the literal
// as written (the request compiler writes its digits, or refuses past
// decimal.MaxDigits), and both spellings still compare equal as paging
// values.
func TestAsIntegerExpansionMargin(t *testing.T) {
	for lit, want := range map[string]any{
		"1e30":                     json.Number("1" + strings.Repeat("0", 30)),
		"1e35":                     json.Number("1" + strings.Repeat("0", 35)),
		"1e36":                     json.Number("1e36"),
		"1e4095":                   json.Number("1e4095"),
		"-2.5e100":                 json.Number("-2.5e100"),
		"1.2345678901234567891e19": json.Number("12345678901234567891"),
	} {
		if got := asInteger(json.Number(lit)); got != want {
			t.Errorf("asInteger(%s) = %.60v, want %.60v", lit, got, want)
		}
	}
	if !equal(asInteger(json.Number("1e100")), json.Number("1"+strings.Repeat("0", 100)), 0) {
		t.Error("1e100 kept as written no longer equals its digits")
	}
}

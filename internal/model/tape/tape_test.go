package tape

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func jsonValue(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The tape of a JSON document decodes to exactly what encoding/json (with
// UseNumber) produces.
func TestJSONRoundTrip(t *testing.T) {
	for _, doc := range []string{
		`null`, `true`, `false`, `0`, `-12.5e3`, `123456789012345678901234567890`, `""`, `"héllo \u2603 \"q\""`,
		`[]`, `{}`, `[1, "a", null, [true, {}]]`,
		`{"items": [{"id": "iss-1", "n": 1, "tags": ["a", "b"], "x": {"y": null}}], "total": 60, "has_more": true}`,
		`{"a": 1, "a": 2}`,
	} {
		tp, err := AppendJSON(nil, []byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		got, err := Decode(tp)
		if err != nil {
			t.Fatalf("%s: decode: %v", doc, err)
		}
		if want := jsonValue(t, doc); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, want %#v", doc, got, want)
		}
	}
}

func TestAppendJSONRejects(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	for _, doc := range []string{``, `{`, `[1,]`, `{"a" 1}`, `nul`, `1 2`, `{} x`, deep} {
		prefix := []byte("keep")
		out, err := AppendJSON(prefix, []byte(doc))
		if err == nil {
			t.Errorf("%q accepted", doc)
		}
		if !bytes.Equal(out, []byte("keep")) {
			t.Errorf("%q: dst changed on error: %q", doc, out)
		}
	}
	_, err := AppendJSON(nil, []byte(deep))
	if !errors.Is(err, ErrTooDeep) {
		t.Errorf("deep document: %v", err)
	}
}

func TestAppendValues(t *testing.T) {
	in := map[string]any{
		"nil": nil, "b": true, "f": false, "s": "x", "i": int64(-7), "int": 3, "fl": 2.5,
		"num": json.Number("12"), "list": []any{"a", int64(1)}, "strs": []string{"p", "q"},
		"nested": map[string]any{"k": []any{}}, "other": struct{ A int }{4},
	}
	got, err := Decode(Append(nil, in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"nil": nil, "b": true, "f": false, "s": "x", "i": int64(-7), "int": int64(3), "fl": 2.5,
		"num": json.Number("12"), "list": []any{"a", int64(1)}, "strs": []any{"p", "q"},
		"nested": map[string]any{"k": []any{}}, "other": map[string]any{"A": json.Number("4")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	// Deterministic: map keys are sorted.
	if !bytes.Equal(Append(nil, in), Append(nil, in)) {
		t.Fatal("Append is not deterministic")
	}
}

func TestTableRoundTrip(t *testing.T) {
	cols := []string{"id", "n", "f", "tags", "none"}
	rows := [][]any{
		{"a", int64(1), 1.5, []any{"x", json.Number("2")}, nil},
		{"b", json.Number("9007199254740993"), math.Inf(1), map[string]any{"k": json.Number("1.5")}},
		{"c", json.Number("12345678901234567891"), json.Number("-1e30"), nil, nil},
	}
	c, r, err := DecodeTable(AppendTable(nil, cols, rows))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"a", int64(1), 1.5, []any{"x", int64(2)}, nil},
		{"b", int64(9007199254740993), math.Inf(1), map[string]any{"k": json.Number("1.5")}, nil},
		// Beyond int64 a number keeps its exact text, never a float64.
		{"c", json.Number("12345678901234567891"), json.Number("-1e30"), nil, nil},
	}
	if !reflect.DeepEqual(c, cols) || !reflect.DeepEqual(r, want) {
		t.Fatalf("got %v %#v", c, r)
	}
}

func TestMalformed(t *testing.T) {
	for _, b := range [][]byte{
		nil, {'x'}, {tagString, 5, 'a'}, {tagArray, 0xff, 0xff, 0xff, 0xff, 0x0f}, {tagObject, 1, 1, 'k'},
		{tagFloat, 1, 2}, {tagInt}, {tagNull, tagNull},
	} {
		if _, err := Decode(b); err == nil {
			t.Errorf("%q decoded", b)
		}
	}
	if _, _, err := DecodeTable([]byte{0, 0xff, 0xff, 0xff, 0xff, 0x0f}); err == nil {
		t.Error("a zero-column table with a huge row count decoded")
	}
}

func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null]}`, `[[[]]]`, `"\ud800"`, `1e999`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		tp, err := AppendJSON(nil, body)
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var want any
		jsonErr := dec.Decode(&want)
		if err != nil {
			return // rejections are fine; accepting invalid JSON is not
		}
		if jsonErr != nil {
			t.Fatalf("tape accepted what encoding/json rejects: %q", body)
		}
		got, err := Decode(tp)
		if err != nil {
			t.Fatalf("own tape does not decode: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: got %#v want %#v", body, got, want)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{tagArray, 2, tagInt, 2, tagString, 1, 'x'})
	f.Add([]byte{tagObject, 1, 1, 'k', tagNumber, 1, '1'})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Decode(b)
		_, _, _ = DecodeTable(b)
	})
}

func BenchmarkAppendJSON(b *testing.B) {
	body := []byte(`{"items": [` + strings.Repeat(`{"id": "iss-1", "number": 1, "title": "Add read-only sharing links", "status": "open", "priority": 3, "assignee": {"id": "usr-2", "name": "Bruno"}},`, 19) + `{"id": "x"}], "total": 60}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := AppendJSON(nil, body); err != nil {
			b.Fatal(err)
		}
	}
}

package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/cml"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

func okSpec() *Spec {
	return &Spec{Version: Version, Capability: "list", Read: true,
		Columns:  []Column{{Name: "id", Path: []string{"id"}, Type: "integer"}, {Name: "who", Path: []string{"user", "login"}}},
		Response: &catalog.Response{ItemsPath: []string{"items"}}}
}

func TestValidate(t *testing.T) {
	long := strings.Repeat("x", MaxTextSize+1)
	cases := []struct {
		name string
		edit func(*Spec)
		want string // "" = valid
	}{
		{"valid", func(*Spec) {}, ""},
		{"version", func(s *Spec) { s.Version = 99 }, "version 99"},
		{"columns", func(s *Spec) { s.Columns = make([]Column, MaxColumns+1) }, "columns"},
		{"long name", func(s *Spec) { s.Columns[0].Name = long }, "column of"},
		{"deep path", func(s *Spec) { s.Columns[0].Path = make([]string, MaxPath+1) }, "steps"},
		{"part index", func(s *Spec) { s.Columns[0].Derive = &catalog.Derive{PartIndex: -1} }, "negative"},
		{"alt prefixes", func(s *Spec) { s.Columns[0].Derive = &catalog.Derive{AltPrefixes: make([]string, MaxStrings+1)} }, "strings"},
		{"items path", func(s *Spec) { s.Response.ItemsPath = []string{long} }, "items_path"},
		{"relation", func(s *Spec) { s.Relation = &Relation{Path: make([]catalog.PathStep, MaxPath+1)} }, "relation path"},
		{"params", func(s *Spec) { s.Paging = &Paging{Params: make([]Param, MaxParams+1)} }, "paging parameters"},
		{"stop_when", func(s *Spec) { s.Paging = &Paging{StopWhen: &catalog.StopWhen{Field: long}} }, "stop_when"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := okSpec()
			tc.edit(s)
			err := s.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrSpec mentioning %q", err, tc.want)
			}
		})
	}
	var nilSpec *Spec
	if err := nilSpec.Validate(); !errors.Is(err, ErrSpec) {
		t.Fatalf("nil spec: %v", err)
	}
}

func TestApply(t *testing.T) {
	req := &abi.DecodeRequest{Capability: "list", Status: 200}
	body := []byte(`{"items":[{"id":3.0,"user":{"login":"ann"}},null,{"id":"x","user":7}]}`)
	out, aerr := Apply(okSpec(), req, body, Options{})
	if aerr != nil {
		t.Fatal(aerr)
	}
	want := `{"table":{"columns":["id","who"],"rows":[[3,"ann"],["x",null]]}}`
	if got, _ := json.Marshal(out); string(got) != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if _, aerr := Apply(nil, req, body, Options{}); aerr == nil || aerr.Code != abi.CodeBadRequest {
		t.Fatalf("nil spec: %+v", aerr)
	}
}

// TestApplyStopsWhenInterrupted: the host's deadline hook is consulted
// during the row loop, and its error ends the decode.
func TestApplyStopsWhenInterrupted(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := range 3 * checkEvery {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":1}`)
	}
	b.WriteString(`]}`)
	calls := 0
	stop := errors.New("deadline")
	_, aerr := Apply(okSpec(), &abi.DecodeRequest{Status: 200}, b.Bytes(), Options{Interrupt: func() error {
		calls++
		return stop
	}})
	if aerr == nil || !strings.Contains(aerr.Message, "stopped: deadline") || calls != 1 {
		t.Fatalf("err = %+v after %d checks, want a stop after the first", aerr, calls)
	}
	out, aerr := Apply(okSpec(), &abi.DecodeRequest{Status: 200}, b.Bytes(), Options{Interrupt: func() error { return nil }})
	if aerr != nil || len(out.Table.Rows) != 3*checkEvery {
		t.Fatalf("uninterrupted: %+v", aerr)
	}
}

func TestBodyLimits(t *testing.T) {
	req := &abi.DecodeRequest{Status: 200}
	deep := strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1)
	if _, aerr := Apply(okSpec(), req, []byte(deep), Options{}); aerr == nil || !strings.Contains(aerr.Message, "deeper than") {
		t.Fatalf("deep body: %+v", aerr)
	}
	ok := `{"items":[{"id":` + strings.Repeat("[", maxJSONDepth-3) + strings.Repeat("]", maxJSONDepth-3) + `}]}`
	if _, aerr := Apply(okSpec(), req, []byte(ok), Options{}); aerr != nil {
		t.Fatalf("body at the depth limit: %+v", aerr)
	}
	if _, err := ParseJSON(make([]byte, MaxBodyBytes+1)); !errors.Is(err, errTooLarge) {
		t.Fatalf("large body: %v", err)
	}
}

// depthRef is the byte-at-a-time nesting scan checkDepth replaced.
func depthRef(b []byte) error {
	depth := 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > maxJSONDepth {
				return errTooDeep
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// FuzzCheckDepth: the vectorised string skip finds the same nesting as
// a plain byte scan on any input.
func FuzzCheckDepth(f *testing.F) {
	f.Add([]byte(`{"a\\":"[[["}`))
	f.Add([]byte(`"\\\"[" [[`))
	f.Add([]byte(strings.Repeat(`["\\\\"`, 130)))
	f.Add([]byte(`"unterminated \`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := checkDepth(b), depthRef(b); got != want {
			t.Fatalf("checkDepth(%q) = %v, byte scan says %v", b, got, want)
		}
	})
}

// FuzzEqual: cursor and stop_when comparisons agree with the request
// compiler's Equal, which the guest used before specs moved decoding out.
func FuzzEqual(f *testing.F) {
	f.Add(`1`, `1.0`)
	f.Add(`{"a":[1,"x"]}`, `{"a":[1.0,"x"]}`)
	f.Add(`"1"`, `1`)
	f.Add(`1e400`, `1e400`)
	f.Add(`null`, `false`)
	f.Add(`9007199254740993`, `9007199254740992`)
	f.Add(`12345678901234567892`, `12345678901234567891`)
	f.Add(`12345678901234567891.0`, `1.2345678901234567891e19`)
	f.Add(`18446744073709551616`, `1.8446744073709551616e19`)
	f.Fuzz(func(t *testing.T, a, b string) {
		va, err1 := ParseJSON([]byte(a))
		vb, err2 := ParseJSON([]byte(b))
		if err1 != nil || err2 != nil {
			return
		}
		if got, want := equal(va, vb, 0), cml.Equal(va, vb); got != want {
			t.Fatalf("equal(%s, %s) = %v, cml.Equal = %v", a, b, got, want)
		}
	})
}

// FuzzApply feeds hostile specs and hostile bodies: whatever passes
// Validate must decode to a well-formed table or a typed error, never a
// panic.
func FuzzApply(f *testing.F) {
	seed, _ := json.Marshal(okSpec())
	f.Add(seed, []byte(`{"items":[{"id":1}]}`), 200)
	f.Add([]byte(`{"version":1,"columns":[{"name":"a","derive":{"type":"segments_after_prefix","part_index":3}}],"response":{"wrap_root_scalar":true}}`), []byte(`"x/y"`), 200)
	f.Add([]byte(`{"version":1,"columns":[{"name":"a","path":[]}],"relation":{"name":"r","path":[{"wildcard":true},{"key":"k"}]}}`), []byte(`[[{"k":[1,2]}]]`), 200)
	f.Add([]byte(`{"version":1,"columns":[{"name":"a","path":[]}],"relation":{"name":"r.s","path":[{"key":"r"},{"key":"s"}],"hops":[{"name":"r","steps":1,"one":true},{"name":"s","steps":1}]}}`), []byte(`[{"r":{"s":[1,2]}},{"r":[{"s":1}]}]`), 200)
	f.Add([]byte(`{"version":1,"columns":[],"paging":{"location":"response_next_url","params":[{"name":"c","from_response":"n"}],"stop_when":{"field":"done","eq":{"x":[1]}}}}`), []byte(`{"n":"?p=2","done":{"x":[1.0]}}`), 200)
	f.Add([]byte(`{"version":1,"columns":[{"name":"a"}],"response":{"items_path":["a"],"response_preprocess":{"kind":"array_find_pluck","path":["a"],"id_field":"i","id_var":"v","nested_array":"n"}}}`), []byte(`{"a":[{"i":1,"n":[{"a":1}]}]}`), 200)
	f.Add([]byte(`{"version":1,"capability":"x","auth_env":"T"}`), []byte("denied\xff"), 401)
	f.Add([]byte(`{"version":1,"columns":[{"name":"id","path":["id"],"type":"string"},{"name":"n","path":["n"],"type":"integer"}],"scalar_id":["id"]}`),
		[]byte(`[{"id":12345678901234567891,"n":-9223372036854775809},18446744073709551616,{"id":1e3,"n":1.5e19}]`), 200)
	f.Fuzz(func(t *testing.T, specJSON, body []byte, status int) {
		var s Spec
		if err := abi.Unmarshal(specJSON, &s); err != nil || s.Validate() != nil {
			return
		}
		req := &abi.DecodeRequest{Capability: s.Capability, Status: status,
			Headers: map[string]string{"Link": `<?page=2>; rel="next"`}, RequestURL: "https://api.example.com/a?page=1",
			Page: map[string]any{"c": "c0", "p": json.Number("1")}, Vars: map[string]any{"v": json.Number("1")}}
		out, aerr := Apply(&s, req, body, Options{Interrupt: func() error { return nil }})
		if aerr != nil {
			if aerr.Code == "" || aerr.Message == "" {
				t.Fatalf("empty error %+v", aerr)
			}
			return
		}
		for _, row := range out.Table.Rows {
			if len(row) != len(out.Table.Columns) {
				t.Fatalf("row width %d, %d columns", len(row), len(out.Table.Columns))
			}
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("result does not encode: %v", err)
		}
	})
}

// TestBareListUnderOneKey: Plasm wraps a bare list body under the one key
// its mapping expects the list at, so such a body is the rows; a deeper
// path still refuses a list it cannot walk.
func TestBareListUnderOneKey(t *testing.T) {
	tests := []struct {
		name, body string
		response   *catalog.Response
		want       string // rows as JSON, or "error"
	}{
		{"results default, list", `[{"id":1},{"id":2}]`, &catalog.Response{ItemsPath: []string{"results"}}, `[[1,null],[2,null]]`},
		{"results default, object", `{"count":2,"results":[{"id":1},{"id":2}]}`, &catalog.Response{ItemsPath: []string{"results"}}, `[[1,null],[2,null]]`},
		// A named list key the answer omits, with no error sign, is an
		// empty page (Gmail's {"resultSizeEstimate":0}); beside one it is refused.
		{"results named, no results", `{"count":0}`, &catalog.Response{ItemsPath: []string{"results"}}, `[]`},
		{"results named, error", `{"count":0,"error":"busy"}`, &catalog.Response{ItemsPath: []string{"results"}}, "error"},
		// The loader's default (the mapping named no response): an object
		// without results says nothing of where its rows are (Spotify's
		// {"albums": […]}), so it is refused, not read as no rows.
		{"results default, object", `{"count":1,"results":[{"id":1}]}`, &catalog.Response{ItemsPath: []string{"results"}, Default: true}, `[[1,null]]`},
		{"results default, list", `[{"id":2}]`, &catalog.Response{ItemsPath: []string{"results"}, Default: true}, `[[2,null]]`},
		{"results default, no results", `{"albums":[{"id":1}]}`, &catalog.Response{ItemsPath: []string{"results"}, Default: true}, "error"},
		{"items key, list", `[{"id":5}]`, &catalog.Response{ItemsPath: []string{"tasks"}}, `[[5,null]]`},
		{"inner key, list", `[{"data":{"id":6}}]`, &catalog.Response{ItemsPath: []string{"children"}, ItemInnerKey: "data"}, `[[6,null]]`},
		{"deep path, list", `[{"id":1}]`, &catalog.Response{ItemsPath: []string{"data", "nodes"}}, "error"},
		{"single, list", `[{"id":1}]`, &catalog.Response{Single: true, ItemsPath: []string{"data"}}, "error"},
		// Digit-only segments index a list, as in Plasm (Reddit's comment
		// thread answers [post listing, comment listing]).
		{"index into a list", `[{"data":{"children":[{"data":{"id":1}}]}},{"data":{"children":[{"data":{"id":7}},{"data":{"id":8}}]}}]`,
			&catalog.Response{ItemsPath: []string{"1", "data", "children"}, ItemInnerKey: "data"}, `[[7,null],[8,null]]`},
		{"index past the list", `[{"data":{}}]`, &catalog.Response{ItemsPath: []string{"3", "data"}}, "error"},
		{"index alone", `[[{"id":4}],[{"id":5}]]`, &catalog.Response{ItemsPath: []string{"1"}}, `[[5,null]]`},
		{"index into an object is a key", `{"1":[{"id":6}]}`, &catalog.Response{ItemsPath: []string{"1"}}, `[[6,null]]`},
	}
	for _, tt := range tests {
		s := okSpec()
		s.Response = tt.response
		out, aerr := Apply(s, &abi.DecodeRequest{Capability: "list", Status: 200}, []byte(tt.body), Options{})
		if tt.want == "error" {
			if aerr == nil {
				t.Errorf("%s: decoded %+v, want an error", tt.name, out)
			}
			continue
		}
		if aerr != nil {
			t.Errorf("%s: %v", tt.name, aerr)
			continue
		}
		if got, _ := json.Marshal(out.Table.Rows); string(got) != tt.want {
			t.Errorf("%s: rows %s, want %s", tt.name, got, tt.want)
		}
	}
}

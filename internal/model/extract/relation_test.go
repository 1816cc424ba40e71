package extract

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

func keyStep(k string) catalog.PathStep { return catalog.PathStep{Key: k} }

var wild = catalog.PathStep{Wildcard: true}

// relSpec decodes the embedded relation rel of a get answer's one item,
// rows with columns id and name.
func relSpec(rel *Relation) *Spec {
	return &Spec{Version: Version, Capability: "item_get", Read: true,
		Columns:  []Column{{Name: "id", Path: []string{"id"}}, {Name: "name", Path: []string{"name"}}},
		ScalarID: []string{"id"}, Relation: rel}
}

// TestEmbeddedCardinality: a cardinality-one relation yields at most one
// row per parent (none for null or a missing key, as a hop from a parent
// without its key), and an array where one object was declared is a
// decode error naming the relation and the path; cardinality many keeps
// reading arrays as rows. A spec without hops reads its path as many,
// as every spec did before hops were carried.
func TestEmbeddedCardinality(t *testing.T) {
	author := &Relation{Name: "author", Path: []catalog.PathStep{keyStep("author")},
		Hops: []Hop{{Name: "author", Steps: 1, One: true}}}
	ailment := &Relation{Name: "ailment", Path: []catalog.PathStep{keyStep("meta"), keyStep("ailment")},
		Hops: []Hop{{Name: "ailment", Steps: 2, One: true}}}
	chain := &Relation{Name: "summary.detail", Path: []catalog.PathStep{keyStep("summary"), keyStep("detail")},
		Hops: []Hop{{Name: "summary", Steps: 1, One: true}, {Name: "detail", Steps: 1, One: true}}}
	lines := &Relation{Name: "summary.lines", Path: []catalog.PathStep{keyStep("summary"), keyStep("lines")},
		Hops: []Hop{{Name: "summary", Steps: 1, One: true}, {Name: "lines", Steps: 1}}}
	manyThenOne := &Relation{Name: "lines.owner", Path: []catalog.PathStep{keyStep("lines"), keyStep("owner")},
		Hops: []Hop{{Name: "lines", Steps: 1}, {Name: "owner", Steps: 1, One: true}}}
	oneWild := &Relation{Name: "lead", Path: []catalog.PathStep{keyStep("people"), wild},
		Hops: []Hop{{Name: "lead", Steps: 2, One: true}}}
	many := &Relation{Name: "forms", Path: []catalog.PathStep{keyStep("forms")}, Hops: []Hop{{Name: "forms", Steps: 1}}}
	legacy := &Relation{Name: "author", Path: []catalog.PathStep{keyStep("author")}}

	tests := []struct {
		name string
		rel  *Relation
		body string
		want string // rows as JSON, or the error's text
	}{
		{"one object", author, `{"id":1,"author":{"id":"u1","name":"Ann"}}`, `[["u1","Ann"]]`},
		{"one scalar id", author, `{"id":1,"author":"u1"}`, `[["u1",null]]`},
		{"one null", author, `{"id":1,"author":null}`, `[]`},
		{"one missing", author, `{"id":1}`, `[]`},
		{"one empty object", author, `{"id":1,"author":{}}`, `[[null,null]]`},
		{"one array", author, `{"id":1,"author":[{"id":"u1"},{"id":"u2"}]}`,
			"relation author: author is declared cardinality one, but item 1 of the answer has an array of 2 at author where one object belongs"},
		{"one array of one", author, `{"id":1,"author":[{"id":"u1"}]}`, "has an array of 1 at author"},
		{"one empty array", author, `{"id":1,"author":[]}`, "has an array of 0 at author"},
		{"one nested", ailment, `{"meta":{"ailment":{"id":"a","name":"burn"}}}`, `[["a","burn"]]`},
		{"one nested parent null", ailment, `{"meta":null}`, `[]`},
		{"one nested array", ailment, `{"meta":{"ailment":[1,2,3]}}`, "has an array of 3 at meta.ailment"},
		{"one under a list", ailment, `{"meta":[{"ailment":{}}]}`, `step 2 (key "ailment") expected an object, got an array`},
		{"chain one.one", chain, `{"summary":{"detail":{"id":"d","name":"x"}}}`, `[["d","x"]]`},
		{"chain first missing", chain, `{"id":1}`, `[]`},
		{"chain second null", chain, `{"summary":{"detail":null}}`, `[]`},
		{"chain first array", chain, `{"summary":[{"detail":{"id":"d"}}]}`, "summary is declared cardinality one, but item 1 of the answer has an array of 1 at summary"},
		{"chain second array", chain, `{"summary":{"detail":[{"id":"d"}]}}`, "detail is declared cardinality one, but item 1 of the answer has an array of 1 at summary.detail"},
		{"chain one.many", lines, `{"summary":{"lines":[{"id":"l1"},{"id":"l2"}]}}`, `[["l1",null],["l2",null]]`},
		{"chain many.one", manyThenOne, `{"lines":[{"owner":{"id":"o1"}},{"owner":null},{},{"owner":{"id":"o2"}}]}`, `[["o1",null],["o2",null]]`},
		{"chain many.one array", manyThenOne, `{"lines":[{"owner":{"id":"o1"}},{"owner":[{"id":"o2"}]}]}`, "owner is declared cardinality one, but item 1 of the answer has an array of 1 at lines.owner"},
		{"one wildcard reaching one", oneWild, `{"people":[{"id":"p"}]}`, `[["p",null]]`},
		{"one wildcard reaching two", oneWild, `{"people":[{"id":"p"},{"id":"q"}]}`, "lead is declared cardinality one, but its path people.* reaches 2 values in item 1 of the answer"},
		{"many array", many, `{"forms":[{"id":"f1"},{"id":"f2"}]}`, `[["f1",null],["f2",null]]`},
		{"many object", many, `{"forms":{"id":"f1"}}`, `[["f1",null]]`},
		{"many null", many, `{"forms":null}`, `[]`},
		{"legacy spec reads an array as rows", legacy, `{"author":[{"id":"u1"},{"id":"u2"}]}`, `[["u1",null],["u2",null]]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := relSpec(tt.rel)
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			out, aerr := Apply(s, &abi.DecodeRequest{Capability: "item_get", Status: 200}, []byte(tt.body), Options{})
			if !strings.HasPrefix(tt.want, "[") {
				if aerr == nil {
					t.Fatalf("rows %v, want error %q", out.Table.Rows, tt.want)
				}
				if aerr.Code != abi.CodeDecode || !strings.Contains(aerr.Message, tt.want) || aerr.Hint == "" {
					t.Fatalf("error %+v, want a decode error with a hint containing %q", aerr, tt.want)
				}
				if strings.Contains(aerr.Message, "cardinality one") != (aerr.Hint == hintNotOne) {
					t.Fatalf("hint %q for %q", aerr.Hint, aerr.Message)
				}
				return
			}
			if aerr != nil {
				t.Fatalf("error %v, want rows %s", aerr, tt.want)
			}
			if got, _ := json.Marshal(out.Table.Rows); string(got) != tt.want {
				t.Fatalf("rows %s, want %s", got, tt.want)
			}
		})
	}
}

// TestEmbeddedItemNumber: the error names the item of a list answer whose
// one-relation is an array.
func TestEmbeddedItemNumber(t *testing.T) {
	s := relSpec(&Relation{Name: "author", Path: []catalog.PathStep{keyStep("author")}, Hops: []Hop{{Name: "author", Steps: 1, One: true}}})
	_, aerr := Apply(s, &abi.DecodeRequest{Capability: "item_get", Status: 200},
		[]byte(`[{"author":{"id":"a"}},{"author":null},{"author":[]}]`), Options{})
	if aerr == nil || !strings.Contains(aerr.Message, "item 3 of the answer") {
		t.Fatalf("error %+v, want one naming item 3", aerr)
	}
}

// TestValidateHops: hops must cover the relation's path exactly.
func TestValidateHops(t *testing.T) {
	path := []catalog.PathStep{keyStep("a"), keyStep("b")}
	for _, tc := range []struct {
		name string
		hops []Hop
		want string
	}{
		{"none", nil, ""},
		{"exact", []Hop{{Name: "a", Steps: 1}, {Name: "b", Steps: 1, One: true}}, ""},
		{"short", []Hop{{Name: "a", Steps: 1}}, "cover 1 path steps, the path has 2"},
		{"long", []Hop{{Name: "a", Steps: 3}}, "cover 3"},
		{"negative", []Hop{{Name: "a", Steps: -1}, {Name: "b", Steps: 3}}, "of -1 steps"},
		{"huge", []Hop{{Name: "a", Steps: 1 << 40}}, "steps"},
		{"too many", make([]Hop, MaxPath+1), "hops, limit"},
		{"long name", []Hop{{Name: strings.Repeat("x", MaxTextSize+1), Steps: 2}}, "relation hop of"},
	} {
		s := relSpec(&Relation{Name: "r", Path: path, Hops: tc.hops})
		err := s.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrSpec mentioning %q", tc.name, err, tc.want)
		}
	}
}

// FuzzEmbeddedCardinality decodes arbitrary bodies through an embedded
// relation whose path and hops come from the fuzzer: never a panic, a
// typed error or rows, and a chain of cardinality-one hops never yields
// more rows than the answer has items.
func FuzzEmbeddedCardinality(f *testing.F) {
	f.Add([]byte("a.b"), uint8(0b11), []byte(`{"a":{"b":{"id":1}}}`))
	f.Add([]byte("a*b"), uint8(0b01), []byte(`[{"a":[{"b":[1,2]}]},{"a":null}]`))
	f.Add([]byte("a"), uint8(0), []byte(`{"a":[{"id":1},{"id":2}]}`))
	f.Add([]byte("a"), uint8(1), []byte(`{"a":[{"id":1},{"id":2}]}`))
	f.Add([]byte("*.a"), uint8(0b10), []byte(`[[{"a":{}}],[{"a":[]}]]`))
	f.Fuzz(func(t *testing.T, shape []byte, ones uint8, body []byte) {
		// shape: letters are keys, '*' a wildcard, '.' ends a hop.
		rel := &Relation{Name: "r"}
		steps, allOne := 0, true
		closeHop := func() {
			one := ones&(1<<(len(rel.Hops)%8)) != 0
			allOne = allOne && one
			rel.Hops = append(rel.Hops, Hop{Name: "h", Steps: steps, One: one})
			steps = 0
		}
		for _, c := range shape {
			switch {
			case c == '*':
				rel.Path = append(rel.Path, wild)
				steps++
			case c == '.':
				closeHop()
			default:
				rel.Path = append(rel.Path, keyStep(string(rune('a'+c%4))))
				steps++
			}
		}
		closeHop()
		s := relSpec(rel)
		if s.Validate() != nil {
			return
		}
		out, aerr := Apply(s, &abi.DecodeRequest{Capability: "item_get", Status: 200}, body, Options{})
		if aerr != nil {
			if aerr.Code == "" || aerr.Message == "" {
				t.Fatalf("empty error %+v", aerr)
			}
			return
		}
		if !allOne {
			return
		}
		doc, err := ParseJSON(body)
		if err != nil {
			return // an empty body decodes to no rows
		}
		items := 1
		if l, ok := doc.([]any); ok {
			items = len(l)
		}
		if len(out.Table.Rows) > items {
			t.Fatalf("cardinality-one hops gave %d rows from %d items", len(out.Table.Rows), items)
		}
	})
}

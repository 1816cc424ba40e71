package extract

import (
	"fmt"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestCounterMax: a page counter's max ends the list only on a page that
// is the last by the usual rules (empty, shorter than the fixed page size,
// stop_when); a page at max that may have more after it yields a state
// marked past max, which the executor refuses to read on from, never the
// end of the list (before: 7 rows over pages of 3 with max 2 answered 6).
func TestCounterMax(t *testing.T) {
	one := int64(1)
	sized := &Paging{Location: "query", Params: []Param{{Name: "page", Counter: &one, Max: 2}, {Name: "per_page", Fixed: int64(3)}}}
	unsized := &Paging{Location: "query", Params: []Param{{Name: "page", Counter: &one, Max: 2}}}
	stop := &Paging{Location: "query", StopWhen: &catalog.StopWhen{Field: "more", Eq: false, HasEq: true}, Params: []Param{{Name: "page", Counter: &one, Max: 2}}}
	tests := []struct {
		name   string
		paging *Paging
		page   int64
		body   string
		want   string // next state, "end", or "past max: …"
	}{
		{"below max", sized, 1, `{"items":[{"id":1},{"id":2},{"id":3}]}`, "map[page:2 per_page:3]"},
		{"full page at max", sized, 2, `{"items":[{"id":4},{"id":5},{"id":6}]}`, "past max: page 2 (full)"},
		{"short page at max", sized, 2, `{"items":[{"id":4},{"id":5}]}`, "end"},
		{"empty page at max", sized, 2, `{"items":[]}`, "end"},
		{"unsized page at max", unsized, 2, `{"items":[{"id":4}]}`, "past max: page 2"},
		{"stop_when says more at max", stop, 2, `{"items":[{"id":4}],"more":true}`, "past max: page 2"},
		{"stop_when says end at max", stop, 2, `{"items":[{"id":4}],"more":false}`, "end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := okSpec()
			s.Paging = tt.paging
			req := &abi.DecodeRequest{Capability: "list", Status: 200, Page: map[string]any{"page": tt.page}}
			out, aerr := Apply(s, req, []byte(tt.body), Options{})
			if aerr != nil {
				t.Fatal(aerr)
			}
			got := "end"
			if at, full, ok := PastMax(out.Next); ok {
				markers := 1
				got = "past max: " + at
				if full {
					markers, got = 2, got+" (full)"
				}
				if len(out.Next) != markers {
					t.Errorf("a past-max state holds more than its markers: %v", out.Next)
				}
			} else if out.Next != nil {
				got = fmt.Sprint(out.Next)
			}
			if !strings.EqualFold(got, tt.want) {
				t.Errorf("next %s, want %s", got, tt.want)
			}
		})
	}
}

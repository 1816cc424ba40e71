package extract

import (
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestCounter404EndsBegunList: a 404 on a page after the first of a
// counter list with no stop_when or cursor (Django REST's "Invalid page"),
// with a page size or without, is the end of the list: an empty last page. On the first
// page, or for a list that says itself where it ends, a 404 stays an
// error.
func TestCounter404EndsBegunList(t *testing.T) {
	one, zero := int64(1), int64(0)
	unsized := &Paging{Location: "query", Params: []Param{{Name: "page", Counter: &one}}}
	offset := &Paging{Location: "query", Params: []Param{{Name: "offset", Counter: &zero, Step: 20}}}
	sized := &Paging{Location: "query", Params: []Param{{Name: "page", Counter: &one}, {Name: "per_page", Fixed: int64(3)}}}
	stop := &Paging{Location: "query", StopWhen: &catalog.StopWhen{Field: "more", Eq: false, HasEq: true}, Params: []Param{{Name: "page", Counter: &one}}}
	cursor := &Paging{Location: "query", Params: []Param{{Name: "page", Counter: &one}, {Name: "after", FromResponse: "next"}}}
	nextURL := &Paging{Location: LocResponseNextURL, NextURLField: "next"}
	tests := []struct {
		name   string
		paging *Paging
		read   bool
		status int
		page   map[string]any
		ends   bool // an empty last page; else an error
	}{
		{"unsized, page 3", unsized, true, 404, map[string]any{"page": float64(3)}, true},
		{"unsized, page 2 as int", unsized, true, 404, map[string]any{"page": int64(2)}, true},
		{"offset, second page", offset, true, 404, map[string]any{"offset": float64(20)}, true},
		{"unsized, first page (no state)", unsized, true, 404, nil, false},
		{"unsized, first page", unsized, true, 404, map[string]any{"page": float64(1)}, false},
		{"offset, first page", offset, true, 404, map[string]any{"offset": float64(0)}, false},
		{"unsized, 500", unsized, true, 500, map[string]any{"page": float64(3)}, false},
		{"unsized, 410", unsized, true, 410, map[string]any{"page": float64(3)}, false},
		// A sized list asks for page n+1 only after page n was full: its
		// rows were a multiple of the page size.
		{"sized", sized, true, 404, map[string]any{"page": float64(3), "per_page": int64(3)}, true},
		{"sized, first page", sized, true, 404, map[string]any{"page": float64(1), "per_page": int64(3)}, false},
		{"stop_when", stop, true, 404, map[string]any{"page": float64(3)}, false},
		{"cursor", cursor, true, 404, map[string]any{"page": float64(3), "after": "x"}, false},
		{"next url", nextURL, true, 404, map[string]any{NextURLKey: "https://x/2"}, false},
		{"not a read", unsized, false, 404, map[string]any{"page": float64(3)}, false},
		{"no paging", nil, true, 404, map[string]any{"page": float64(3)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := okSpec()
			s.Read, s.Paging = tt.read, tt.paging
			body := []byte(`{"detail":"Invalid page."}`)
			out, aerr := Apply(s, &abi.DecodeRequest{Capability: "list", Status: tt.status, Page: tt.page}, body, Options{})
			if !tt.ends {
				if aerr == nil {
					t.Fatalf("decoded %+v (next %v), want an error", out.Table.Rows, out.Next)
				}
				if !strings.Contains(aerr.Message, "Invalid page") {
					t.Errorf("error %q does not quote the backend", aerr.Message)
				}
				return
			}
			if aerr != nil {
				t.Fatal(aerr)
			}
			if len(out.Table.Rows) != 0 || out.Next != nil {
				t.Errorf("rows %v, next %v; want an empty last page", out.Table.Rows, out.Next)
			}
		})
	}
}

package extract

import (
	"fmt"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestDottedPagingField: a paging field named with dots is read as a path
// when no key is spelt so (Slack's from_response:
// response_metadata.next_cursor, in six of its list mappings); before, the
// cursor was never found and every such list ended after its first page. A
// key that has dots itself (@odata.nextLink) is read as written.
func TestDottedPagingField(t *testing.T) {
	limit := int64(2)
	for _, tc := range []struct {
		name   string
		paging *Paging
		body   string
		want   string // the next page's state, or "end"
	}{
		{"dotted cursor", &Paging{Location: "query", Params: []Param{{Name: "cursor", FromResponse: "response_metadata.next_cursor"}, {Name: "limit", Fixed: limit}}},
			`{"items":[{"id":1},{"id":2}],"response_metadata":{"next_cursor":"c2"}}`, "map[cursor:c2 limit:2]"},
		{"dotted cursor, empty", &Paging{Location: "query", Params: []Param{{Name: "cursor", FromResponse: "response_metadata.next_cursor"}}},
			`{"items":[{"id":1}],"response_metadata":{"next_cursor":""}}`, "end"},
		{"key spelt with a dot wins", &Paging{Location: "query", Params: []Param{{Name: "cursor", FromResponse: "meta.next"}}},
			`{"items":[{"id":1}],"meta.next":"k","meta":{"next":"p"}}`, "map[cursor:k]"},
		{"dotted cursor under a prefix", &Paging{Location: "query", ResponsePrefix: []string{"data"}, Params: []Param{{Name: "after", FromResponse: "page.end"}}},
			`{"items":[{"id":1}],"data":{"page":{"end":"e9"}}}`, "map[after:e9]"},
		{"odata next link", &Paging{Location: LocResponseNextURL, NextURLField: "@odata.nextLink"},
			`{"items":[{"id":1}],"@odata.nextLink":"https://api.example.com/items?skip=1"}`, "map[next_url:https://api.example.com/items?skip=1]"},
		{"prefix indexing a list", &Paging{Location: "query", ResponsePrefix: []string{"1", "data"}, Params: []Param{{Name: "after", FromResponse: "after"}}},
			`[{"data":{"after":"x"}},{"data":{"children":[],"after":"t3_9"}}]`, "map[after:t3_9]"},
		{"dotted stop_when", &Paging{Location: "query", StopWhen: &catalog.StopWhen{Field: "meta.last", Eq: true, HasEq: true}, Params: []Param{{Name: "page", Counter: new(int64)}}},
			`{"items":[{"id":1}],"meta":{"last":true}}`, "end"},
	} {
		s := okSpec()
		s.Paging = tc.paging
		out, aerr := Apply(s, &abi.DecodeRequest{Capability: "list", Status: 200}, []byte(tc.body), Options{})
		if aerr != nil {
			t.Errorf("%s: %v", tc.name, aerr)
			continue
		}
		got := "end"
		if out.Next != nil {
			got = fmt.Sprint(out.Next)
		}
		if got != tc.want {
			t.Errorf("%s: next %s, want %s", tc.name, got, tc.want)
		}
	}
}

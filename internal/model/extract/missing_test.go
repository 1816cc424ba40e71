package extract

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestListPageWithoutItsList: a read's page whose 200 answer lacks the key
// its list is declared under, or a null there, beside an error sign
// (error, errors, fault, ok: false) is refused, naming the expected path,
// the keys present and the backend's error text, on the first page as on
// later ones. Without an error sign, on a first page (these requests carry
// no paging state), a missing key (Gmail's {"resultSizeEstimate":0}), an
// empty list or a null in its place or on the way to it is an empty page
// (laterpage_test.go has later pages); a
// mutation's answer and a single object read a missing key as nothing.
func TestListPageWithoutItsList(t *testing.T) {
	data := &catalog.Response{ItemsPath: []string{"data"}}
	nested := &catalog.Response{ItemsPath: []string{"data", "list"}}
	paging := &Paging{Location: LocResponseNextURL, NextURLField: "next"}
	tests := []struct {
		name     string
		response *catalog.Response
		read     bool
		body     string
		want     string // rows as JSON, or the error's expected fragments joined by |
	}{
		{"rows", data, true, `{"data":[{"id":1}],"next":"https://x/2"}`, `[[1,null]]`},
		{"empty list", data, true, `{"data":[]}`, `[]`},
		{"null list", data, true, `{"data":null}`, `[]`},
		{"null on the way", nested, true, `{"data":null}`, `[]`},
		{"empty nested", nested, true, `{"data":{"list":[]}}`, `[]`},
		{"slack error", data, true, `{"ok":false,"error":"invalid_cursor"}`, `error|expected at data|no "data"|its keys: error, ok`},
		{"rate limited", data, true, `{"error":"rate limited"}`, `error|no "data"|its keys: error`},
		{"empty object", data, true, `{}`, `[]`},
		{"gmail empty search", &catalog.Response{ItemsPath: []string{"messages"}}, true, `{"resultSizeEstimate":0}`, `[]`},
		{"slack ok false, null list", data, true, `{"ok":false,"error":"ratelimited","data":null}`, `error|expected at data|has null at data|ratelimited|its keys: data, error, ok`},
		{"ok false alone", data, true, `{"ok":false}`, `error|no "data"|ok: false`},
		{"null beside errors", data, true, `{"data":null,"errors":[{"status":"429","detail":"rate limited"}]}`, `error|has null at data|errors: [{"detail":"rate limited"`},
		{"null beside empty errors", data, true, `{"data":null,"errors":[],"error":null,"ok":true}`, `[]`},
		{"fault", data, true, `{"fault":{"faultstring":"quota"}}`, `error|fault: {"faultstring":"quota"}`},
		{"null on the way beside error", nested, true, `{"data":null,"error":"x"}`, `error|has null at data|error: "x"`},
		{"null list beside inner error", nested, true, `{"data":{"list":null,"error":"busy"}}`, `error|has null at data.list|busy`},
		{"long error truncated", data, true, `{"error":"` + strings.Repeat("é", 300) + `"}`, `error|…|no "data"`},
		{"nested, outer missing", nested, true, `{"error":"x"}`, `error|expected at data.list|no "data" at the top level`},
		{"nested, inner missing", nested, true, `{"data":{"error":"x","next":null}}`, `error|expected at data.list|no "list" at data|its keys: error, next`},
		{"index past a list", &catalog.Response{ItemsPath: []string{"1", "data"}}, true, `[{"data":[]}]`, `error|expected at 1.data|no index 1`},
		{"mutation answer", data, false, `{"ok":true}`, `[]`},
		{"single object", &catalog.Response{Single: true, ItemsPath: []string{"data"}}, true, `{"errors":[]}`, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := okSpec()
			s.Response, s.Read, s.Paging = tt.response, tt.read, paging
			out, aerr := Apply(s, &abi.DecodeRequest{Capability: "list", Status: 200}, []byte(tt.body), Options{})
			if want, ok := strings.CutPrefix(tt.want, "error|"); ok {
				if aerr == nil {
					t.Fatalf("decoded %+v (next %v), want an error", out.Table.Rows, out.Next)
				}
				if !strings.Contains(aerr.Hint, "error with status 200") {
					t.Errorf("hint %q does not say the backend may have answered an error", aerr.Hint)
				}
				for _, frag := range strings.Split(want, "|") {
					if !strings.Contains(aerr.Message, frag) {
						t.Errorf("error %q lacks %q", aerr.Message, frag)
					}
				}
				return
			}
			if aerr != nil {
				t.Fatal(aerr)
			}
			if got, _ := json.Marshal(out.Table.Rows); string(got) != tt.want {
				t.Errorf("rows %s, want %s", got, tt.want)
			}
		})
	}
}

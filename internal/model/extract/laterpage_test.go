package extract

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestLaterPageWithoutItsList: a page after the first whose 200 answer
// lacks the key its list is declared under is refused, error sign or not
// (read as empty, it would end the list and answer the pages before it as
// the whole list); a first page keeps the Gmail rule (a missing list is an
// empty answer). The decoder tells a later page from its paging state: a
// counter moved from its start, a from_response cursor or a next URL.
// Rate-limit answers without one of the first four signs (success: false,
// JSend's status, WeChat's errcode, AWS's Error) are error signs too, so
// they are refused on a first page as well; an error sign beside an empty
// list refuses the page too; a zero, "0", false, null or "" error is no
// sign.
func TestLaterPageWithoutItsList(t *testing.T) {
	one := int64(1)
	nextURL := &Paging{Location: LocResponseNextURL, NextURLField: "next"}
	counter := &Paging{Location: "query", Params: []Param{{Name: "page", Counter: &one}}}
	cursor := &Paging{Location: "query", Params: []Param{{Name: "after", FromResponse: "next"}}}
	later := map[string]any{NextURLKey: "https://x/list?page=2"}
	items := &catalog.Response{ItemsPath: []string{"items"}}
	nested := &catalog.Response{ItemsPath: []string{"data", "items"}}
	runSteps := &catalog.Response{ItemsPath: []string{"run", "steps"}}
	jobResults := &catalog.Response{ItemsPath: []string{"job", "results"}}
	gmailCursor := &Paging{Location: "query", Params: []Param{{Name: "pageToken", FromResponse: "nextPageToken"}}}
	zero := int64(0)
	offset := &Paging{Location: "query", Params: []Param{{Name: "offset", Counter: &zero, Step: 50}, {Name: "limit", Fixed: int64(50)}}}
	tests := []struct {
		name     string
		response *catalog.Response
		paging   *Paging
		page     map[string]any
		body     string
		want     string // rows as JSON, or "error|" and the error's expected fragments joined by |
	}{
		// Later pages: a missing list is refused with or without a sign.
		{"success false, later", items, nextURL, later, `{"success":false,"message":"Too many requests"}`,
			`error|expected at items|no "items"|its keys: message, success|Too many requests`},
		{"jsend, later", items, nextURL, later, `{"status":"error","message":"quota"}`, `error|no "items"|its keys: message, status`},
		{"wechat, later", items, nextURL, later, `{"errcode":45009,"errmsg":"reach max api daily quota limit"}`,
			`error|no "items"|its keys: errcode, errmsg|reach max api daily quota limit`},
		{"aws, later", items, nextURL, later, `{"Error":{"Code":"Throttling"}}`, `error|no "items"|its keys: Error|Throttling`},
		{"no sign, later", items, nextURL, later, `{"message":"Too many requests"}`, `error|later page|no "items"|its keys: message`},
		// proto3 / Google-style backends omit an empty list, so a later
		// page without its list and without a sign is an empty page
		// unless every key it has is a message.
		{"gmail shape, later", items, gmailCursor, map[string]any{"pageToken": "t2"}, `{"resultSizeEstimate":0}`, `[]`},
		{"offset total, later", items, offset, map[string]any{"offset": int64(100)}, `{"total":"100"}`, `[]`},
		{"nested missing, later", nested, nextURL, later, `{"data":{"total":3}}`, `[]`},
		{"nested message only, later", nested, nextURL, later, `{"data":{"Message":"slow down"}}`, `error|later page|no "items" at data|its keys: Message|slow down`},
		{"messages only, later", items, nextURL, later, `{"msg":"busy","Detail":"retry","error_description":"later"}`, `error|later page|its keys: Detail, error_description, msg`},
		{"counter moved", items, counter, map[string]any{"page": int64(2)}, `{"message":"slow down"}`, `error|later page|no "items"`},
		{"counter moved, json number", items, counter, map[string]any{"page": json.Number("3")}, `{}`, `[]`},
		{"counter moved, errmsg", items, counter, map[string]any{"page": int64(3)}, `{"ERRMSG":"quota"}`, `error|later page|quota`},
		{"cursor present", items, cursor, map[string]any{"after": "c2"}, `{"message":"slow down"}`, `error|later page`},
		// First pages: a missing list without a sign is an empty answer.
		{"no sign, first (no state)", items, nextURL, nil, `{"message":"nothing"}`, `[]`},
		{"counter at start", items, counter, map[string]any{"page": int64(1)}, `{"resultSizeEstimate":0}`, `[]`},
		{"cursor empty", items, cursor, map[string]any{"after": ""}, `{}`, `[]`},
		{"no paging", items, nil, map[string]any{"page": int64(2)}, `{}`, `[]`},
		// The new signs refuse a first page too.
		{"success false, first", items, nextURL, nil, `{"success":false,"message":"Too many requests"}`, `error|success: false|Too many requests`},
		{"jsend error, first", items, nextURL, nil, `{"status":"error","message":"quota"}`, `error|status: "error"|quota`},
		{"jsend fail, first", items, nextURL, nil, `{"status":"Fail","data":{"title":"required"}}`, `error|status: "Fail"`},
		{"wechat, first", items, nextURL, nil, `{"errcode":45009,"errmsg":"quota"}`, `error|errcode: 45009|quota`},
		{"aws, first", items, nextURL, nil, `{"Error":{"Code":"Throttling"}}`, `error|Error: {"Code":"Throttling"}`},
		{"jira, first", items, nextURL, nil, `{"errorMessages":["Field 'x' does not exist"]}`, `error|errorMessages|does not exist`},
		// An error sign beside an empty list.
		{"slack ok false, empty list", items, nextURL, nil, `{"ok":false,"error":"ratelimited","items":[]}`,
			`error|list at items is empty|ratelimited|its keys: error, items, ok`},
		{"errors beside nested empty list", nested, nextURL, later, `{"data":{"items":[]},"errors":[{"message":"rate limited"}]}`,
			`error|list at data.items is empty|rate limited`},
		// A resource's own status or error beside its empty nested list is
		// data, not the envelope's error sign.
		{"inner error beside empty list", nested, nextURL, nil, `{"data":{"items":[],"error":"busy"}}`, `[]`},
		{"run status beside empty steps", runSteps, nextURL, nil, `{"run":{"id":7,"status":"failed","steps":[]}}`, `[]`},
		{"job error beside empty results", jobResults, nextURL, later, `{"job":{"error":"timeout","results":[]}}`, `[]`},
		{"top sign beside nested empty list", runSteps, nextURL, nil, `{"run":{"steps":[]},"ok":false,"error":"ratelimited"}`, `error|list at run.steps is empty|ratelimited|its keys: error, ok, run`},
		// A missing or null nested list is still judged beside its object.
		{"inner error beside null list", nested, nextURL, nil, `{"data":{"items":null,"error":"busy"}}`, `error|null at data.items|busy`},
		{"inner error, missing list", nested, nextURL, nil, `{"data":{"error":"busy"}}`, `error|no "items" at data|busy`},
		{"empty list, no sign", items, nextURL, later, `{"items":[],"ok":true,"errors":[]}`, `[]`},
		{"empty list, zero errcode", items, nextURL, nil, `{"items":[],"errcode":0,"errmsg":"ok"}`, `[]`},
		{"empty list, success", items, nextURL, nil, `{"items":[],"success":true,"status":"success"}`, `[]`},
		// Zero, "0", false, null and "" say nothing.
		{"error 0, null list", items, nextURL, nil, `{"error":0,"items":null}`, `[]`},
		{"error \"0\", missing list", items, nextURL, nil, `{"error":"0"}`, `[]`},
		{"error \"0000\", missing list", items, nextURL, nil, `{"error":"0000"}`, `[]`},
		{"errcode \"0.0\", empty list", items, nextURL, nil, `{"errcode":"0.0","items":[]}`, `[]`},
		{"error \"0x\", missing list", items, nextURL, nil, `{"error":"0x"}`, `error|error: "0x"`},
		{"error false, empty", items, nextURL, nil, `{"error":false,"items":[]}`, `[]`},
		{"error 0.0, null", items, nextURL, later, `{"error":0.0,"items":null}`, `[]`},
		{"error true", items, nextURL, nil, `{"error":true}`, `error|error: true`},
		// A null list on a later page is an explicit empty list (a Go
		// backend's nil slice), not a missing one.
		{"null list, later", items, nextURL, later, `{"items":null}`, `[]`},
		// A present list is read whatever sits beside it.
		{"rows beside an error", items, nextURL, later, `{"items":[{"id":1}],"error":"partial"}`, `[[1,null]]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := okSpec()
			s.Response, s.Paging = tt.response, tt.paging
			out, aerr := Apply(s, &abi.DecodeRequest{Capability: "list", Status: 200, Page: tt.page}, []byte(tt.body), Options{})
			if want, ok := strings.CutPrefix(tt.want, "error|"); ok {
				if aerr == nil {
					t.Fatalf("decoded %+v (next %v), want an error", out.Table.Rows, out.Next)
				}
				for _, frag := range strings.Split(want, "|") {
					if !strings.Contains(aerr.Message, frag) {
						t.Errorf("error %q lacks %q", aerr.Message, frag)
					}
				}
				if strings.Count(aerr.Message, "decode list:") != 1 {
					t.Errorf("error %q does not start with one decode prefix", aerr.Message)
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

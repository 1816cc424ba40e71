package server

import (
	"strings"
	"testing"
)

// A key encoding/json would take for a field only by ignoring case, or
// by Unicode folding, is refused by name: it repeated a field duplicateKey
// could not see (review of the duplicate-key work). Exact names, map keys
// and nested structs in lists pass.
func TestDecodeJSONBodyExactFieldNames(t *testing.T) {
	type seed struct {
		Entity string `json:"entity"`
	}
	var v struct {
		EntryID string            `json:"entry_id"`
		Seeds   []seed            `json:"seeds"`
		Secrets map[string]string `json:"secrets"`
	}
	for _, tc := range []struct{ body, want string }{
		{`{"entry_id":"tracker","ENTRY_ID":"kanban"}`, `"ENTRY_ID"`},
		{`{"Entry_Id":"kanban"}`, `"Entry_Id"`},
		{`{"seeds":[{"entity":"A"},{"ENTITY":"B"}]}`, `"seeds[].ENTITY"`},
		{"{\"entry_id\":\"t\",\"secret\u017f\":{\"a\":\"b\"}}", "secret\u017f"},
	} {
		err := decodeJSONBody([]byte(tc.body), &v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("decodeJSONBody(%s) = %v, want a refusal naming %s", tc.body, err, tc.want)
		}
	}
	ok := `{"entry_id":"t","seeds":[{"entity":"A"}],"secrets":{"API_KEY":"x","api_key":"y"}}`
	if err := decodeJSONBody([]byte(ok), &v); err != nil || v.Secrets["API_KEY"] != "x" || v.Secrets["api_key"] != "y" {
		t.Errorf("exact names and free-form map keys: %v %+v", err, v)
	}
}

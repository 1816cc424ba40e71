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

// ownJSON reads any object itself: its keys are its own, not fields.
type ownJSON struct{ raw []byte }

func (o *ownJSON) UnmarshalJSON(b []byte) error { o.raw = append(o.raw[:0], b...); return nil }

// A type that reads its own JSON is not looked into: {"u":{"Free":1}}
// names no field of it (review: it was refused as a case variant).
func TestDecodeJSONBodyOwnUnmarshaler(t *testing.T) {
	var v struct {
		U ownJSON `json:"u"`
	}
	if err := decodeJSONBody([]byte(`{"u":{"Free":1}}`), &v); err != nil {
		t.Errorf("refused a type's own keys: %v", err)
	}
}

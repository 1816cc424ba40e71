package server

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDuplicateKey(t *testing.T) {
	for _, tc := range []struct {
		body string
		want string // "" for none
	}{
		{`{"entry_id":"tracker","entities":["Issue"]}`, ""},
		{`{"entry_id":"tracker","entry_id":"kanban","entities":["Issue"]}`, "entry_id"},
		{`{"a":{"b":1,"c":{"b":2}},"b":3}`, ""}, // same name at other levels
		{`{"a":{"b":1,"b":2}}`, "a.b"},
		{`{"l":[{"x":1},{"x":2,"x":3}]}`, "l[].x"},
		{`{"l":[{"x":1}],"l":[]}`, "l"},
		{`{"k":"v","v":"k"}`, ""}, // a value equal to a key is not a key
		{`{"a":[1,"a",{"a":1}],"b":"a"}`, ""},
		{`[{"a":1,"a":2}]`, "[].a"},
		{`{"a\u0062":1,"ab":2}`, "ab"}, // the same key spelled two ways
		{`"str"`, ""},
		{`{"a":1,`, ""}, // malformed: the decoder's to explain
	} {
		got, dup := duplicateKey([]byte(tc.body))
		if got != tc.want || dup != (tc.want != "") {
			t.Errorf("duplicateKey(%s) = %q %v, want %q", tc.body, got, dup, tc.want)
		}
	}
}

// TestDecodeJSONBodyRefuses: repeated keys and invalid UTF-8 are refused
// with a message naming them (decoding kept the last key and replaced the
// byte by U+FFFD).
func TestDecodeJSONBodyRefuses(t *testing.T) {
	var v struct {
		EntryID  string   `json:"entry_id"`
		Entities []string `json:"entities"`
		Program  string   `json:"program"`
	}
	for _, tc := range []struct{ body, want string }{
		{`{"entry_id":"tracker","entry_id":"kanban","entities":["Issue"]}`, `repeats the key "entry_id"`},
		{"{\"program\":\"Issue(\\\"iss-\xff1\\\")\"}", "not UTF-8 at byte 24 (line 1, column 25): invalid UTF-8: byte 0xff"},
		// Valid UTF-8, but the decoder would turn the lone half into U+FFFD.
		{`{"program":"Issue(\"iss-\ud8001\")"}`, `escapes half a UTF-16 surrogate pair at byte 24 (\ud800)`},
	} {
		err := decodeJSONBody([]byte(tc.body), &v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("decodeJSONBody(%q) = %v, want %q", tc.body, err, tc.want)
		}
	}
	if err := decodeJSONBody([]byte(`{"entry_id":"tracker","entities":["Issue"]}`), &v); err != nil || v.EntryID != "tracker" {
		t.Errorf("a plain body: %v %+v", err, v)
	}
	if err := decodeJSONBody([]byte(`{"program":"Issue(\"\ud83d\ude00\")"}`), &v); err != nil || v.Program != "Issue(\"😀\")" {
		t.Errorf("an escaped surrogate pair: %v %q", err, v.Program)
	}
}

// FuzzDuplicateKey: never panics; a reported key occurs at least twice in
// the body (as written or escaped: checked on the decoded keys), and a body
// encoding/json writes from a map never reports one.
func FuzzDuplicateKey(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":2}]}}`, `[1,{"x":{}}]`, `{"k":"v","v":"k"}`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		key, dup := duplicateKey(body)
		if dup && !json.Valid(body) && !strings.Contains(string(body), "{") {
			t.Fatalf("duplicate %q reported in %q, which has no object", key, body)
		}
		var m any
		if json.Unmarshal(body, &m) != nil {
			return
		}
		clean, err := json.Marshal(m) // maps: every key once
		if err != nil {
			return
		}
		if k, d := duplicateKey(clean); d {
			t.Fatalf("duplicate %q reported in %s, written from a map", k, clean)
		}
	})
}

package server

import (
	"bytes"
	"strings"
	"testing"
)

// A stdio line with invalid UTF-8 or an escaped lone surrogate is refused
// with a parse error and never reaches the SDK, whose decoding would turn
// either into U+FFFD and run the program with text the client never wrote
// (review: only HTTP bodies were checked).
func TestStdioRefusesReplacedText(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plasm","arguments":{"program":"Issue(\"\ud800\")"}}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"plasm\",\"arguments\":{\"program\":\"Issue(\\\"\xff\\\")\"}}}",
	} {
		var sdk, out bytes.Buffer
		if err := filterFrames(strings.NewReader(line+"\n"), &sdk, &out, &pendingCalls{}); err != nil {
			t.Fatal(err)
		}
		if sdk.Len() != 0 {
			t.Errorf("passed to the SDK: %q", sdk.String())
		}
		if !strings.Contains(out.String(), "parse error") {
			t.Errorf("answer %q, want a parse error", out.String())
		}
	}
	var sdk, out bytes.Buffer
	ok := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plasm","arguments":{"program":"Issue(\"\ud83d\ude00\")"}}}`
	if err := filterFrames(strings.NewReader(ok+"\n"), &sdk, &out, &pendingCalls{}); err != nil || sdk.Len() == 0 || out.Len() != 0 {
		t.Errorf("an escaped surrogate pair: to SDK %q, answered %q, %v", sdk.String(), out.String(), err)
	}
}

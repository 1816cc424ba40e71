package abi_test

import (
	"fmt"

	"github.com/plasmd/plasmd/guest/abi"
)

// A frame carries a JSON header and an opaque payload (a response body, a
// symbol map) without escaping the payload into JSON.
func ExampleSplitFrame() {
	frame, err := abi.AppendFrame(nil, abi.DecodeRequest{EntryID: "tracker", Capability: "issue_get", Status: 200}, []byte(`{"id":"iss-1"}`))
	if err != nil {
		panic(err)
	}
	header, payload, err := abi.SplitFrame(frame)
	if err != nil {
		panic(err)
	}
	var req abi.DecodeRequest
	if err := abi.Unmarshal(header, &req); err != nil {
		panic(err)
	}
	fmt.Println(req.Capability, req.Status, string(payload))
	// Output: issue_get 200 {"id":"iss-1"}
}

// An op export returns its output's pointer and length packed in one u64.
func ExamplePackResult() {
	v := abi.PackResult(0x1000, 42)
	ptr, n := abi.UnpackResult(v)
	fmt.Printf("%#x %d\n", ptr, n)
	// Output: 0x1000 42
}

package extract

import (
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Gmail users.messages.list on an empty mailbox/query answers 200
// {"resultSizeEstimate":0} with no "messages" key (proto3 JSON omits empty
// repeated fields). Plasm's gmail catalog declares items: messages.
func TestGmailEmptyListAnswered(t *testing.T) {
	s := okSpec()
	s.Response = &catalog.Response{ItemsPath: []string{"messages"}}
	s.Read = true
	s.Paging = &Paging{Location: LocResponseNextURL, NextURLField: "nextPageToken"}
	out, aerr := Apply(s, &abi.DecodeRequest{Capability: "list", Status: 200}, []byte(`{"resultSizeEstimate":0}`), Options{})
	if aerr != nil {
		t.Fatalf("legitimate empty Gmail list refused: %s", aerr.Message)
	}
	if len(out.Table.Rows) != 0 || out.Next != nil {
		t.Errorf("rows %v, next %v; want an empty last page", out.Table.Rows, out.Next)
	}
}

// A 200 answer carrying an error beside a null list must be refused: read
// as an empty page, a later page would end the list there, a prefix
// answered as whole (reviewer's regression test).
func TestNullListBesideErrorRefused(t *testing.T) {
	for _, body := range []string{
		`{"data":null,"errors":[{"status":"429","detail":"rate limited"}]}`,
		`{"ok":false,"error":"ratelimited","data":null}`,
	} {
		s := okSpec()
		s.Response = &catalog.Response{ItemsPath: []string{"data"}}
		s.Read = true
		s.Paging = &Paging{Location: LocResponseNextURL, NextURLField: "next"}
		out, aerr := Apply(s, &abi.DecodeRequest{Capability: "list", Status: 200}, []byte(body), Options{})
		if aerr == nil {
			t.Errorf("%s: read as %d rows, next %v (silent end of list)", body, len(out.Table.Rows), out.Next)
		}
	}
}

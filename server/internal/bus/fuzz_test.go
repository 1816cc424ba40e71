package bus

import (
	"encoding/json"
	"testing"
)

// FuzzRelayPayload feeds arbitrary bytes where a relayed event is decoded:
// decoding never panics, and an event that does decode reaches only the
// subscribers of the tenant it names, as one message whatever its fields.
func FuzzRelayPayload(f *testing.F) {
	f.Add([]byte(`{"kind":"rows","reason":"x","tenant_id":"a","ts_ms":1,"ids":["1"],"origin":"o"}`))
	f.Add([]byte(`{"kind":"zzz","tenant_id":"b","count":-3}`))
	f.Add([]byte(`{"tenant_id":""}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		var ev Event
		if json.Unmarshal(payload, &ev) != nil {
			return
		}
		b := New(nil)
		a, other := b.Subscribe("a"), b.Subscribe("b")
		b.Deliver(ev)
		want := 0
		if ev.Tenant == "a" {
			want = 1
		}
		if len(a.C()) != want {
			t.Fatalf("tenant a got %d events for tenant %q", len(a.C()), ev.Tenant)
		}
		if ev.Tenant != "b" && len(other.C()) != 0 {
			t.Fatalf("tenant b got tenant %q's event", ev.Tenant)
		}
		msgs := Coalesce([]Event{ev})
		if len(msgs) != 1 {
			t.Fatalf("one event became %d messages", len(msgs))
		}
		m := MessageFor(&msgs[0])
		if m.Level != Level || m.Logger != Logger || m.Data["event"] != Data(ev.Kind) {
			t.Fatalf("message %+v", m)
		}
	})
}

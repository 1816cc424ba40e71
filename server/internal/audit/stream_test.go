package audit_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/plasmd/plasmd/internal/redistest"
	"github.com/plasmd/plasmd/server/internal/audit"
)

// Two replicas (two clients) append to one tenant's trail on one Redis;
// each reads the whole trail, oldest first, and never another tenant's.
func TestStreamSharedAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	clients := make([]*audit.Stream, 2)
	for i := range clients {
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
		t.Cleanup(func() { _ = rdb.Close() })
		clients[i] = audit.NewStream(rdb)
	}
	recs := []audit.Record{
		{Tenant: "a", Principal: "alice", Action: "run", Program: "Issue(1).delete()", Outcome: "ok"},
		{Tenant: "b", Principal: "bob", Action: "run", Program: "secret of b", Outcome: "ok"},
		{Tenant: "a", Principal: "carol", Action: "run", Program: "Issue(2).delete()", Outcome: "error"},
		{Tenant: "a", Principal: "alice", Action: "credential.stored", Outcome: "ok"},
	}
	for i, r := range recs {
		if err := clients[i%2].Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range clients {
		got, err := c.List(ctx, "a", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].Program != "Issue(1).delete()" || got[2].Action != "credential.stored" || got[0].Seq != 1 || got[2].Seq != 3 {
			t.Fatalf("tenant a's trail: %+v", got)
		}
		for _, r := range got {
			if r.Tenant != "a" || r.Time.IsZero() {
				t.Fatalf("record %+v", r)
			}
		}
	}
	mine, err := clients[0].List(ctx, "a", "alice", 1)
	if err != nil || len(mine) != 1 || mine[0].Action != "credential.stored" {
		t.Fatalf("alice's latest: %+v, %v", mine, err)
	}
}

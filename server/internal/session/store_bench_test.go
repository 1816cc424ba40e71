package session

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/redistest"
)

// BenchmarkStoreRun makes the store calls one MCP run makes (resolve the
// ref, read the logical and execute sessions, two counters, a page and a
// 20-row run artifact) against the in-memory store and against a local
// Redis, in the same run: the per-run cost of sharing session state.
func BenchmarkStoreRun(b *testing.B) {
	for _, name := range []string{"memory", "redis"} {
		b.Run(name, func(b *testing.B) {
			var s Store = NewMemory(time.Hour)
			if name == "redis" {
				srv := redistest.Start(b)
				rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr()}})
				b.Cleanup(func() { _ = rdb.Close() })
				s = NewRedis(rdb, time.Hour)
			}
			ctx := context.Background()
			l := must(s.OpenLogical(ctx, "A", "bench"))
			ex := execute("A", "h", "s", "k")
			if err := s.PutExecute(ctx, ex); err != nil {
				b.Fatal(err)
			}
			if err := s.BindLogical(ctx, "A", l.ID, ex.Key()); err != nil {
				b.Fatal(err)
			}
			ref := must(s.RefFor(ctx, "t", "A", l.ID))
			rows := make([][]any, 20)
			for i := range rows {
				rows[i] = []any{"iss-" + strconv.Itoa(i), "a title of some length", 3.0}
			}
			b.ReportAllocs()
			for b.Loop() {
				id := must(s.ResolveRef(ctx, "t", "A", ref))
				lg := must(s.GetLogical(ctx, "A", id))
				must(s.GetExecute(ctx, "A", lg.Binding.PromptHash, lg.Binding.SessionID))
				n := must(s.NextSeq(ctx, "A", id, "run"))
				pn := must(s.NextSeq(ctx, "A", id, "page"))
				if err := s.PutPage(ctx, Page{Tenant: "A", Scope: id, N: pn}); err != nil {
					b.Fatal(err)
				}
				r := Run{Tenant: "A", LogicalID: id, PromptHash: "h", SessionID: "s", RunID: "r" + strconv.Itoa(n), N: n,
					Roots: []RunRoot{{Label: "e1", Table: abi.Table{Columns: []string{"id", "title", "priority"}, Rows: rows}}}}
				if err := s.PutRun(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package server_test

import (
	"net/http"
	"testing"

	"github.com/plasmd/plasmd/internal/redistest"
)

// BenchmarkRunStore measures run throughput (an HTTP run of a kanban list
// against the demo backend, the run stored with its paging handle) with
// the in-memory store and with Redis, in the same run: the difference is
// what sharing session state across replicas costs per run.
func BenchmarkRunStore(b *testing.B) {
	for _, tc := range []struct {
		name  string
		redis bool
	}{{"memory", false}, {"redis", true}} {
		b.Run(tc.name, func(b *testing.B) {
			url := ""
			if tc.redis {
				url = redistest.Start(b).URL()
			}
			f := replicas(b, url, 1)[0]
			path := openAs(b, f, tokenA, "kanban", "Issue")
			hdr := append(bearerHeader(tokenA), "Accept", "application/json")
			b.ReportAllocs()
			for b.Loop() {
				if r := f.do(b, http.MethodPost, path, "text/plain", "Issue[id]", hdr...); r.status != http.StatusOK {
					b.Fatalf("run: %d %s", r.status, r.body)
				}
			}
		})
	}
}

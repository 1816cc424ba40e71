package core_test

import (
	"context"
	"testing"

	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/core"
)

// BenchmarkSymbolsEncode is what every plan request paid before encoded
// symbol maps were cached per (session, revision): marshal the session's
// whole map and hash it. With the cache a plan request pays it once per
// revision; BenchmarkPlanUncached in the same run is the guest call it was
// added to.
func BenchmarkSymbolsEncode(b *testing.B) {
	ctx := context.Background()
	f := newCoreFixture(b)
	seeds := []core.Seed{{Entry: "tracker", Entity: "Issue"}, {Entry: "tracker", Entity: "Project"}, {Entry: "tracker", Entity: "Comment"}}
	res, err := f.svc.Context(ctx, f.tenant, "bench", "read tracker issues", seeds, nil)
	if err != nil {
		b.Fatal(err)
	}
	sym, err := sandbox.EncodeSymbols(&res.Execute.Symbols)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(sym.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sandbox.EncodeSymbols(&res.Execute.Symbols); err != nil {
			b.Fatal(err)
		}
	}
}

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

// TestPlanAfterExpandUsesNewSymbols: a session's encoded symbol map is
// cached per revision, so after a wave (here a federate wave) a program may
// use the new symbols at once, and the old revision still refuses them.
func TestPlanAfterExpandUsesNewSymbols(t *testing.T) {
	ctx := context.Background()
	f := newCoreFixture(t)
	first, err := f.svc.Context(ctx, f.tenant, "expand", "triage tracker issues", []core.Seed{{Entry: "tracker", Entity: "Issue"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	issue := first.Execute.Symbols.EntitySym("tracker", "Issue")
	if issue == "" || first.Execute.Symbols.EntitySym("kanban", "Team") != "" {
		t.Fatalf("first wave symbols: Issue %q, Team taught too early", issue)
	}
	if _, err := f.svc.Plan(ctx, f.tenant, &first.Execute, issue+`("iss-1")`); err != nil {
		t.Fatal(err)
	}
	second, err := f.svc.Context(ctx, f.tenant, "expand", "triage tracker issues", []core.Seed{{Entry: "kanban", Entity: "Team"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.Execute.DomainRevision <= first.Execute.DomainRevision {
		t.Fatalf("revision %d after a wave, was %d", second.Execute.DomainRevision, first.Execute.DomainRevision)
	}
	team := second.Execute.Symbols.EntitySym("kanban", "Team")
	if team == "" {
		t.Fatal("federate wave taught no Team symbol")
	}
	p, err := f.svc.Plan(ctx, f.tenant, &second.Execute, team+`("team-1")`)
	if err != nil {
		t.Fatalf("plan with the new wave's symbol %s: %v", team, err)
	}
	if len(p.Nodes) == 0 || p.Nodes[0].Entity != "Team" {
		t.Fatalf("plan: %+v", p.Nodes)
	}
	if _, err := f.svc.Plan(ctx, f.tenant, &first.Execute, team+`("team-1")`); err == nil {
		t.Fatalf("revision %d planned %s, a symbol it was never taught", first.Execute.DomainRevision, team)
	}
}

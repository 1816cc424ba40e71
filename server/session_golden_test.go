package server_test

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/teaching"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files under testdata/")

func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from golden (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestSessionGoldenWaves pins the exact text plasm_context answers for the
// demo: each catalog's first wave, then an expand and a federate wave of one
// session, rendered through the real MCP path.
func TestSessionGoldenWaves(t *testing.T) {
	f := newFixture(t, server.Config{})
	cs := f.mcpClient(t)
	const intent = "triage tracker issues and comment on them"
	steps := []struct {
		golden, intent string
		seeds          []string
	}{
		{"context_first_tracker_issue.md", intent, []string{"tracker:Issue"}},
		{"context_expand_tracker_comment.md", intent, []string{"tracker:Comment"}},
		{"context_federate_kanban_issue.md", intent, []string{"kanban:Issue"}},
		{"context_first_kanban_issue.md", "move kanban cards", []string{"kanban:Issue"}},
	}
	for _, st := range steps {
		goldenFile(t, st.golden, contextCall(t, cs, st.intent, st.seeds...).text)
	}
}

// TestTeachingFigures measures what agents pay in context for the session
// paths (numbers for the README; no thresholds): the first wave for one
// seed entity against a full two-hop dump of the same catalog, a
// duplicate-seed open, and an expand wave.
func TestTeachingFigures(t *testing.T) {
	f := newFixture(t, server.Config{})
	cs := f.mcpClient(t)
	cats, err := demo.LoadCatalogs(f.backend.URL())
	if err != nil {
		t.Fatal(err)
	}
	tracker := cats[slices.IndexFunc(cats, func(c *catalog.Catalog) bool { return c.EntryID == "tracker" })]

	// Every entity within two relation hops of Issue, all capabilities
	// ranked: the "dump everything nearby" alternative to waves.
	near := map[string]bool{"Issue": true}
	frontier := []string{"Issue"}
	for range 2 {
		var next []string
		for _, name := range frontier {
			for _, rel := range tracker.Entities[name].Relations {
				if !near[rel.Target] && !tracker.Entities[rel.Target].Abstract {
					near[rel.Target] = true
					next = append(next, rel.Target)
				}
			}
		}
		frontier = next
	}
	var dumpSeeds []any
	for name := range near {
		dumpSeeds = append(dumpSeeds, map[string]any{"api": "tracker", "entity": name})
	}
	var ranked []string
	for _, cp := range tracker.Capabilities {
		ranked = append(ranked, cp.Name)
	}

	first := contextCall(t, cs, "triage tracker issues", "tracker:Issue")
	dup := contextCall(t, cs, "triage tracker issues", "tracker:Issue")
	expand := contextCall(t, cs, "triage tracker issues", "tracker:Comment")
	dump := mustOK(t, call(t, cs, "plasm_context", map[string]any{"intent": "everything about tracker issues", "seeds": dumpSeeds, "ranked_capabilities": ranked}))

	for _, m := range []struct {
		name, text string
	}{
		{"first wave, one seed (tracker:Issue)", first.text},
		{"two-hop dump of tracker (" + strconv.Itoa(len(near)) + " entities seeded, all capabilities ranked)", dump.text},
		{"duplicate-seed open", dup.text},
		{"expand wave (tracker:Comment)", expand.text},
	} {
		b, tok := teaching.Size(m.text)
		t.Logf("%-75s %6d bytes  ~%5d tokens", m.name, b, tok)
	}
}

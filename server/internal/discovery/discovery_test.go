package discovery_test

import (
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/fixture"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/server/internal/discovery"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// catalogs are the shared tracker and kanban fixtures, fresh on every call.
func catalogs(tb testing.TB) []*catalog.Catalog {
	tb.Helper()
	return []*catalog.Catalog{fixture.Catalog(tb, fixture.Tracker), fixture.Catalog(tb, fixture.Kanban)}
}

func TestRankFirst(t *testing.T) {
	tests := []struct {
		intent string
		want   string // entry:Entity expected first
	}{
		{"post a comment", "tracker:Comment"},
		{"triage bug reports", "tracker:Issue"},
		{"list all projects", "tracker:Project"},
		{"move kanban cards to done", "kanban:Issue"},
		{"find the email address of a workspace member", "kanban:User"},
		{"which labels and colours exist", "tracker:Label"},
		{"teams and their boards", "kanban:Team"},
		{"close stale issues in the tracker", "tracker:Issue"},
	}
	for _, tt := range tests {
		t.Run(tt.intent, func(t *testing.T) {
			got := discovery.Rank(catalogs(t), tt.intent, 0, nil)
			if len(got) == 0 {
				t.Fatal("no options")
			}
			if first := got[0].EntryID + ":" + got[0].Entity; first != tt.want {
				t.Errorf("first = %s, want %s (all: %v)", first, tt.want, got)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Score > got[i-1].Score {
					t.Fatalf("not sorted by score: %v", got)
				}
			}
		})
	}
}

func TestRankLimitsAndFilters(t *testing.T) {
	const intent = "issues users teams projects comments labels"
	all := discovery.Rank(catalogs(t), intent, 100, nil)
	if len(all) != 8 {
		t.Fatalf("want all 8 entities, got %d: %v", len(all), all)
	}
	if got := discovery.Rank(catalogs(t), intent, 3, nil); !reflect.DeepEqual(got, all[:3]) {
		t.Errorf("max 3 = %v, want the top 3 of %v", got, all)
	}
	if got := discovery.Rank(catalogs(t), intent, 0, nil); len(got) != min(discovery.DefaultMax, 8) {
		t.Errorf("default max gave %d options", len(got))
	}
	for _, o := range discovery.Rank(catalogs(t), intent, 100, []string{"kanban"}) {
		if o.EntryID != "kanban" {
			t.Errorf("allowed=[kanban] returned %s:%s", o.EntryID, o.Entity)
		}
	}
	if got := discovery.Rank(catalogs(t), intent, 100, []string{"nope"}); len(got) != 0 {
		t.Errorf("unknown allowed entry returned %v", got)
	}
}

func TestRankNoMatch(t *testing.T) {
	for _, intent := range []string{"", "the of and", "quantum chromodynamics"} {
		if got := discovery.Rank(catalogs(t), intent, 5, nil); len(got) != 0 {
			t.Errorf("Rank(%q) = %v, want none", intent, got)
		}
	}
	if got := discovery.Rank(nil, "issues", 5, nil); len(got) != 0 {
		t.Errorf("no catalogs gave %v", got)
	}
}

func TestRankOmitsZeroScores(t *testing.T) {
	for _, o := range discovery.Rank(catalogs(t), "labels", 100, nil) {
		if o.Score <= 0 {
			t.Errorf("zero-score option %v", o)
		}
	}
}

func TestRankDeterministic(t *testing.T) {
	const intent = "issue user"
	want := discovery.Rank(catalogs(t), intent, 100, nil)
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		cs := catalogs(t)
		// Input order and duplicates must not change the answer.
		cs = append(cs, fixture.Catalog(t, fixture.Kanban), nil)
		r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		if got := discovery.Rank(cs, intent, 100, nil); !reflect.DeepEqual(got, want) {
			t.Fatalf("order-dependent result:\n%v\n%v", got, want)
		}
	}
	// tracker:Issue and kanban:Issue, tracker:User and kanban:User may tie;
	// ties must come out by (entry, entity).
	for i := 1; i < len(want); i++ {
		a, b := want[i-1], want[i]
		if a.Score == b.Score && a.EntryID+":"+a.Entity > b.EntryID+":"+b.Entity {
			t.Errorf("tie out of order: %v before %v", a, b)
		}
	}
}

func TestRenderTSV(t *testing.T) {
	opts := discovery.Rank(catalogs(t), "add a comment to a bug report", 4, nil)
	opts = append(opts, discovery.Option{EntryID: "x", Entity: "Odd", Description: "tab\there\nnew line ``` fence"})
	got := discovery.RenderTSV(opts)
	path := filepath.Join("testdata", "discover.tsv")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Errorf("differs from golden (run with -update to accept):\n%s", got)
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if lines[0] != "```tsv" || lines[1] != "api\tentity\tdescription" || lines[len(lines)-1] != "```" {
		t.Errorf("bad framing:\n%s", got)
	}
	for _, l := range lines[1 : len(lines)-1] {
		if strings.Count(l, "\t") != 2 {
			t.Errorf("line %q does not have three cells", l)
		}
	}
}

func FuzzRank(f *testing.F) {
	for _, s := range []string{"", "close stale issues", "Kanban CARDS done!!", "\xff\x00 issue", strings.Repeat("issue ", 500)} {
		f.Add(s, 3)
	}
	cs := catalogs(f)
	f.Fuzz(func(t *testing.T, intent string, max int) {
		got := discovery.Rank(cs, intent, max, nil)
		limit := max
		if limit <= 0 {
			limit = discovery.DefaultMax
		}
		if len(got) > limit {
			t.Fatalf("%d options for max %d", len(got), max)
		}
		for i, o := range got {
			if !(o.Score > 0) {
				t.Fatalf("option %v has score %v", o, o.Score)
			}
			if i > 0 && o.Score > got[i-1].Score {
				t.Fatalf("unsorted: %v", got)
			}
		}
		out := discovery.RenderTSV(got)
		if strings.Count(out, "\n") != len(got)+3 {
			t.Fatalf("rendered %d lines for %d options", strings.Count(out, "\n"), len(got))
		}
	})
}

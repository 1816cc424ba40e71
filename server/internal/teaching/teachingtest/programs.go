// Package teachingtest holds helpers for tests of the teaching, discovery
// and planner packages: it turns taught rows into programs an agent could
// send and draws random plasm_context requests over the shared tracker and
// kanban fixtures (testdata/catalogs at the repository root, loaded with
// internal/fixture).
package teachingtest

import (
	"math/rand/v2"
	"regexp"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/server/internal/teaching"
)

var (
	slotFill  = regexp.MustCompile(`\b(p[1-9][0-9]*)=\$`)
	omitted   = regexp.MustCompile(`,\s*\.\.`)
	bareDots  = regexp.MustCompile(`\(\s*\.\.\s*\)`)
	quoted    = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	identRe   = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	symbolTok = regexp.MustCompile(`^[emprv][1-9][0-9]*$`)
)

// Runnable turns a taught plasm_expr into a program an agent could send:
// each "pN=$" gets a literal that fits the slot's value domain, any other
// "$" becomes "x", and ".." with its preceding comma is removed. ~"text"
// is kept: it is a real search phrase.
func Runnable(expr string, m *symbol.Map, cats map[string]*catalog.Catalog) string {
	expr = slotFill.ReplaceAllStringFunc(expr, func(s string) string {
		sym := strings.TrimSuffix(s, "=$")
		return sym + "=" + literalFor(sym, m, cats)
	})
	expr = omitted.ReplaceAllString(expr, "")
	expr = bareDots.ReplaceAllString(expr, "()")
	return strings.ReplaceAll(expr, "$", `"x"`)
}

func literalFor(sym string, m *symbol.Map, cats map[string]*catalog.Catalog) string {
	_, n := symbol.Parse(sym)
	s, ok := m.Slot(n)
	if !ok || cats[s.EntryID] == nil {
		return `"x"`
	}
	return literalOf(cats[s.EntryID], cats[s.EntryID].Values[s.ValueRef], 0)
}

// literalOf is a literal of value domain v; a reference takes its target's
// id type, and a compound one the "a/b" form of its key.
func literalOf(cat *catalog.Catalog, v *catalog.Value, depth int) string {
	if v == nil {
		return `"x"`
	}
	switch v.Type {
	case "entity_ref":
		t := cat.Entities[v.Target]
		switch {
		case t == nil || depth > 4:
		case len(t.KeyVars) == 2:
			return `"x/y"`
		case t.Fields[t.IDField] != nil:
			return literalOf(cat, cat.Values[t.Fields[t.IDField].ValueRef], depth+1)
		}
	case "integer":
		return "1"
	case "number":
		return "1.5"
	case "boolean":
		return "true"
	case "uuid":
		return `"00000000-0000-4000-8000-000000000001"`
	case "date":
		return `"2024-01-02T03:04:05Z"`
	case "select":
		if len(v.AllowedValues) > 0 {
			return `"` + v.AllowedValues[0] + `"`
		}
	case "multi_select":
		if len(v.AllowedValues) > 0 {
			return `["` + v.AllowedValues[0] + `"]`
		}
	case "array":
		return `["x"]`
	}
	return `"x"`
}

// NonSymbols returns the identifiers of expr outside quoted strings that are
// not session symbols. Taught rows must use symbols only, so that colliding
// wire names can never be ambiguous.
func NonSymbols(expr string) []string {
	var out []string
	for _, id := range identRe.FindAllString(quoted.ReplaceAllString(expr, `""`), -1) {
		if !symbolTok.MatchString(id) {
			out = append(out, id)
		}
	}
	return out
}

// Symbols returns the session symbols used in expr.
func Symbols(expr string) []string {
	var out []string
	for _, id := range identRe.FindAllString(quoted.ReplaceAllString(expr, `""`), -1) {
		if symbolTok.MatchString(id) {
			out = append(out, id)
		}
	}
	return out
}

var (
	allSeeds = []teaching.Seed{
		{EntryID: "tracker", Entity: "Project"}, {EntryID: "tracker", Entity: "Issue"},
		{EntryID: "tracker", Entity: "User"}, {EntryID: "tracker", Entity: "Comment"},
		{EntryID: "tracker", Entity: "Label"}, {EntryID: "kanban", Entity: "Team"},
		{EntryID: "kanban", Entity: "Issue"}, {EntryID: "kanban", Entity: "User"},
		{EntryID: "tracker", Entity: "Repo"}, {EntryID: "tracker", Entity: "Member"},
	}
	intents = []string{
		"", "close stale issues and add a comment explaining why", "archive finished cards",
		"edit titles and move cards", "delete spam comments", "file new bugs in a project",
		"who is assigned what",
	}
	rankable = []string{"issue_delete", "comment_delete", "issue_update", "issue_archive", "comment_create", "repo_star", "member_rename", "member_suspend"}
)

// RandomRequests returns a session's worth of plasm_context calls over
// cats (the shared tracker and kanban fixtures): random seed sets, one intent for the whole session (as a host
// would send), and occasionally ranked capabilities.
func RandomRequests(r *rand.Rand, cats map[string]*catalog.Catalog, waves int) []teaching.Request {
	intent := intents[r.IntN(len(intents))]
	out := make([]teaching.Request, waves)
	for i := range out {
		n := 1 + r.IntN(3)
		req := teaching.Request{Catalogs: cats, Intent: intent}
		for range n {
			req.Seeds = append(req.Seeds, allSeeds[r.IntN(len(allSeeds))])
		}
		if r.IntN(3) == 0 {
			req.Ranked = append(req.Ranked, rankable[r.IntN(len(rankable))])
		}
		out[i] = req
	}
	return out
}

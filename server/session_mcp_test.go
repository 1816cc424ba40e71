package server_test

import (
	"context"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/teaching/teachingtest"
)

// checkContextMeta asserts the _meta.plasm every plasm_context answer
// carries, and that structuredContent mirrors it exactly.
func checkContextMeta(t testing.TB, o toolOut, ref string, rev int, entries ...string) {
	t.Helper()
	m := o.meta
	for _, k := range []string{"logical_session_ref", "logical_session_id", "continuity", "domain_revision", "catalog_entry_ids"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("_meta.plasm lacks %s: %v", k, m)
		}
	}
	if m["logical_session_ref"] != ref {
		t.Fatalf("logical_session_ref = %v, want %s", m["logical_session_ref"], ref)
	}
	if id, _ := m["logical_session_id"].(string); len(id) != 36 {
		t.Fatalf("logical_session_id %q is not a UUID", id)
	}
	if m["domain_revision"] != float64(rev) {
		t.Fatalf("domain_revision = %v, want %d", m["domain_revision"], rev)
	}
	var got []string
	for _, e := range m["catalog_entry_ids"].([]any) {
		got = append(got, e.(string))
	}
	if !slices.Equal(got, entries) {
		t.Fatalf("catalog_entry_ids = %v, want %v", got, entries)
	}
	cont := m["continuity"].(map[string]any)
	for _, k := range []string{"stale_binding_recovered", "new_symbol_space"} {
		if _, ok := cont[k].(bool); !ok {
			t.Fatalf("continuity.%s missing: %v", k, cont)
		}
	}
	if cont["new_symbol_space"] == true && cont["discard_cached_plasm_symbols"] != true {
		t.Fatalf("new_symbol_space without discard_cached_plasm_symbols: %v", cont)
	}
	mirror, _ := o.structured["_meta"].(map[string]any)
	if mirror == nil || !reflect.DeepEqual(mirror["plasm"], m) {
		t.Fatalf("structuredContent does not mirror _meta.plasm:\n%v\n%v", o.structured, m)
	}
}

func continuity(o toolOut) map[string]any { return o.meta["continuity"].(map[string]any) }

func logicalID(o toolOut) string { return o.meta["logical_session_id"].(string) }

// teachingRows returns the (expr, meaning) rows of a fenced teaching text,
// skipping # lines and the header.
func teachingRows(t testing.TB, text string) [][2]string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "```tsv\n")
	if !ok {
		t.Fatalf("no fenced TSV in %q", text)
	}
	body, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("unterminated fence in %q", text)
	}
	var out [][2]string
	for _, l := range strings.Split(body, "\n") {
		if l == "" || strings.HasPrefix(l, "#") || l == "plasm_expr\tMeaning" {
			continue
		}
		expr, meaning, ok := strings.Cut(l, "\t")
		if !ok {
			t.Fatalf("row without a tab: %q", l)
		}
		out = append(out, [2]string{expr, meaning})
	}
	return out
}

// isDelta reports a wave body with rows only: no preamble, no header.
func checkDelta(t testing.TB, o toolOut, ref string) {
	t.Helper()
	if !strings.HasPrefix(o.text, "`"+ref+"`\n\n```tsv\n") || !strings.HasSuffix(o.text, "```\n") {
		t.Fatalf("delta wave is not `%s` + a fenced TSV:\n%s", ref, o.text)
	}
	for _, l := range strings.Split(o.text, "\n") {
		if strings.HasPrefix(l, "#") || l == "plasm_expr\tMeaning" {
			t.Fatalf("delta wave replays preamble or header line %q:\n%s", l, o.text)
		}
	}
	if len(teachingRows(t, o.text)) == 0 {
		t.Fatalf("delta wave without rows:\n%s", o.text)
	}
}

func checkFirst(t testing.TB, o toolOut, ref string) {
	t.Helper()
	if !strings.HasPrefix(o.text, "`"+ref+"`\n\n```tsv\n# ") || !strings.Contains(o.text, "\n\nplasm_expr\tMeaning\n") || !strings.HasSuffix(o.text, "```\n") {
		t.Fatalf("first open is not `%s` + fenced preamble and table:\n%.400s", ref, o.text)
	}
}

// dryRunRows plans every program row of a wave through the plasm tool on
// the session that taught it: the map that rendered the rows must be the
// map that expands them.
func dryRunRows(t testing.TB, cs *mcp.ClientSession, ref, text string) {
	t.Helper()
	for _, row := range teachingRows(t, text) {
		if k, _ := symbol.Parse(row[0]); k == symbol.KindValue || k == symbol.KindSlot {
			continue
		}
		program := teachingtest.Runnable(row[0], &symbol.Map{}, nil)
		out := call(t, cs, "plasm", map[string]any{"logical_session_ref": ref, "program": program})
		if out.isError {
			t.Errorf("taught row %q (as %q) does not plan: %s", row[0], program, out.text)
		}
	}
}

var blockRe = regexp.MustCompile(`(?m)^(e\d+)\t(\w+:\w+) `)

// entityCount is the number of distinct e# blocks taught across texts.
func entityCount(texts ...string) int {
	seen := map[string]bool{}
	for _, tx := range texts {
		for _, m := range blockRe.FindAllStringSubmatch(tx, -1) {
			seen[m[1]] = true
		}
	}
	return len(seen)
}

func canonicalSession(t testing.TB, o toolOut) string {
	t.Helper()
	u, _ := o.meta["canonical_uri"].(string)
	i := strings.Index(u, "/run/")
	if !strings.HasPrefix(u, "plasm://execute/") || i < 0 {
		t.Fatalf("canonical_uri %q", u)
	}
	return strings.TrimPrefix(u[:i], "plasm://execute/")
}

func TestSessionLogicalRefsAcrossTransports(t *testing.T) {
	f := newFixture(t, server.Config{})
	c1, c2, c3 := f.mcpClient(t), f.mcpClient(t), f.mcpClient(t)

	a1 := contextCall(t, c1, "intent alpha", "tracker:Issue")
	b1 := contextCall(t, c1, "intent beta", "tracker:Issue")
	steps := []struct {
		name    string
		cs      *mcp.ClientSession
		intent  string
		wantRef string
		sameAs  toolOut
		first   bool
	}{
		{"c1 alpha again", c1, "intent alpha", "s0", a1, false},
		{"c1 beta again", c1, "intent beta", "s1", b1, false},
		// Connection 2 meets beta first: its own s0, beta's logical id.
		{"c2 beta", c2, "intent beta", "s0", b1, false},
		{"c2 alpha", c2, "intent alpha", "s1", a1, false},
		{"c2 beta again", c2, "intent beta", "s0", b1, false},
	}
	checkFirst(t, a1, "s0")
	checkFirst(t, b1, "s1")
	if logicalID(a1) == logicalID(b1) {
		t.Fatal("two intents share a logical session")
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			o := contextCall(t, st.cs, st.intent, "tracker:Issue")
			checkContextMeta(t, o, st.wantRef, 1, "tracker")
			if logicalID(o) != logicalID(st.sameAs) {
				t.Fatalf("logical id %s, want %s", logicalID(o), logicalID(st.sameAs))
			}
			// The logical session already has this exposure: one line.
			if o.text != unchangedText(refOf(o), entityCount(a1.text)) {
				t.Fatalf("reopen text %q", o.text)
			}
			if continuity(o)["new_symbol_space"] != false {
				t.Fatalf("reopen claims a new symbol space: %v", continuity(o))
			}
		})
	}

	// Shared symbols: connection 2 federates kanban into beta; connection 1
	// runs the e# it taught on its own ref for beta.
	fed := contextCall(t, c2, "intent beta", "kanban:Issue")
	checkDelta(t, fed, "s0")
	checkContextMeta(t, fed, "s0", 2, "tracker", "kanban")
	ki := symbolFor(t, fed.text, "kanban:Issue")
	ti := symbolFor(t, b1.text, "tracker:Issue")
	if ki == ti {
		t.Fatalf("kanban:Issue and tracker:Issue share %s", ki)
	}
	r := mustOK(t, runCall(t, c1, "s1", ki+`("kiss-1")[id]`))
	if tsvRows(t, r.text)[0]["id"] != "kiss-1" {
		t.Fatalf("connection 1 cannot use the e# connection 2 was taught: %s", r.text)
	}
	r2 := mustOK(t, runCall(t, c2, "s0", ti+`("iss-2")[id]`))
	if canonicalSession(t, r) != canonicalSession(t, r2) {
		t.Fatal("the two transports' refs for one intent reach different execute sessions")
	}
	again := contextCall(t, c1, "intent beta", "kanban:Issue", "tracker:Issue")
	checkContextMeta(t, again, "s1", 2, "tracker", "kanban")
	if again.text != unchangedText(refOf(again), entityCount(b1.text, fed.text)) {
		t.Fatalf("connection 1 re-applying the federated seeds: %q", again.text)
	}

	// Refs are per transport: c3 has none, c2 has no s2.
	for _, tc := range []struct {
		cs  *mcp.ClientSession
		ref string
	}{{c3, "s0"}, {c2, "s2"}} {
		o := runCall(t, tc.cs, tc.ref, ti+`("iss-1")`)
		if !o.isError || !strings.Contains(o.text, "plasm_context") {
			t.Fatalf("unknown ref %s: %+v", tc.ref, o)
		}
	}
}

func TestSessionWaves(t *testing.T) {
	f := newFixture(t, server.Config{})
	cs := f.mcpClient(t)
	const intent = "triage tracker issues"

	first := contextCall(t, cs, intent, "tracker:Issue")
	checkFirst(t, first, "s0")
	checkContextMeta(t, first, "s0", 1, "tracker")
	if c := continuity(first); c["new_symbol_space"] != true || c["stale_binding_recovered"] != false || c["previous_execute"] != nil {
		t.Fatalf("first open continuity: %v", c)
	}
	issue := symbolFor(t, first.text, "tracker:Issue")
	before := canonicalSession(t, mustOK(t, runCall(t, cs, "s0", issue+`("iss-1")[id]`)))

	expand := contextCall(t, cs, intent, "tracker:Comment")
	checkDelta(t, expand, "s0")
	checkContextMeta(t, expand, "s0", 2, "tracker")
	if continuity(expand)["new_symbol_space"] != false {
		t.Fatalf("expand opened a new symbol space: %v", continuity(expand))
	}
	dryRunRows(t, cs, "s0", expand.text)

	fed := contextCall(t, cs, intent, "kanban:Issue")
	checkDelta(t, fed, "s0")
	checkContextMeta(t, fed, "s0", 3, "tracker", "kanban")
	dryRunRows(t, cs, "s0", fed.text)
	ki := symbolFor(t, fed.text, "kanban:Issue")
	if ki == issue {
		t.Fatalf("kanban:Issue reuses tracker:Issue's %s", ki)
	}
	// Earlier symbols keep their meaning after both waves.
	after := mustOK(t, runCall(t, cs, "s0", "a = "+issue+`("iss-1")[id]`+"\nb = "+ki+`("kiss-1")[id]`+"\na, b"))
	if !strings.Contains(after.text, "iss-1") || !strings.Contains(after.text, "kiss-1") {
		t.Fatalf("symbols after federate: %s", after.text)
	}
	if canonicalSession(t, after) != before {
		t.Fatal("federate moved the logical session to another execute session")
	}

	n := entityCount(first.text, expand.text, fed.text)
	for _, tc := range []struct {
		name  string
		seeds []string
	}{
		{"duplicate seed", []string{"tracker:Issue"}},
		{"expanded seed", []string{"tracker:Comment"}},
		{"multi-catalog set again", []string{"kanban:Issue", "tracker:Comment", "tracker:Issue"}},
		{"multi-catalog set reordered", []string{"tracker:Issue", "kanban:Issue"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := contextCall(t, cs, intent, tc.seeds...)
			if o.text != unchangedText(refOf(o), n) {
				t.Fatalf("want exactly the unchanged line, got %q", o.text)
			}
			checkContextMeta(t, o, "s0", 3, "tracker", "kanban")
		})
	}
}

func TestSessionMultiCatalogOpen(t *testing.T) {
	f := newFixture(t, server.Config{})
	cs := f.mcpClient(t)
	// The same catalog set in either order opens the same table: the
	// primary is the lexicographically first catalog, the rest federate in
	// order.
	x := contextCall(t, cs, "compare boards", "tracker:Issue", "kanban:Issue")
	y := contextCall(t, cs, "compare boards today", "kanban:Issue", "tracker:Issue")
	checkFirst(t, x, "s0")
	checkFirst(t, y, "s1")
	checkContextMeta(t, x, "s0", 1, "kanban", "tracker")
	if strings.TrimPrefix(x.text, "`s0`") != strings.TrimPrefix(y.text, "`s1`") {
		t.Fatalf("seed order changed the table:\n%s\n---\n%s", x.text, y.text)
	}
	if symbolFor(t, x.text, "kanban:Issue") != "e1" {
		t.Fatal("the primary (kanban) does not teach first")
	}
	again := contextCall(t, cs, "compare boards", "tracker:Issue", "kanban:Issue")
	if again.text != unchangedText(refOf(again), entityCount(x.text)) {
		t.Fatalf("multi-catalog seed set applied again: %q", again.text)
	}
}

func TestSessionIdleTTL(t *testing.T) {
	tests := []struct {
		name        string
		ttl         time.Duration // Config.SessionIdleTTL; 0 = the 30m default
		alive, dead time.Duration
	}{
		{"default 30m", 0, 29 * time.Minute, 31 * time.Minute},
		{"configured 5m", 5 * time.Minute, 4 * time.Minute, 6 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			f := newFixture(t, server.Config{SessionIdleTTL: tc.ttl, Clock: clk.Now})
			cs := f.mcpClient(t)
			const intent = "watch issues"
			first := contextCall(t, cs, intent, "tracker:Issue")
			issue := symbolFor(t, first.text, "tracker:Issue")
			clk.Advance(tc.alive)
			old := canonicalSession(t, mustOK(t, runCall(t, cs, "s0", issue+`("iss-1")[id]`)))

			clk.Advance(tc.dead)
			for _, tool := range []string{"plasm_run", "plasm"} {
				o := call(t, cs, tool, map[string]any{"logical_session_ref": "s0", "program": issue + `("iss-1")`})
				if !o.isError || !strings.Contains(o.text, "call plasm_context again with the same intent") {
					t.Fatalf("%s on a stale ref: %+v", tool, o)
				}
			}

			re := contextCall(t, cs, intent, "tracker:Issue")
			checkContextMeta(t, re, "s0", 1, "tracker")
			if logicalID(re) != logicalID(first) {
				t.Fatal("recovery changed the logical session id")
			}
			c := continuity(re)
			if c["stale_binding_recovered"] != true || c["new_symbol_space"] != true || c["discard_cached_plasm_symbols"] != true {
				t.Fatalf("continuity after expiry: %v", c)
			}
			prev, _ := c["previous_execute"].(map[string]any)
			if prev == nil || prev["prompt_hash"].(string)+"/"+prev["session_id"].(string) != old {
				t.Fatalf("previous_execute %v, want %s", c["previous_execute"], old)
			}
			notice := strings.Index(re.text, "Session replaced")
			table := strings.Index(re.text, "```tsv")
			if !strings.HasPrefix(re.text, "`s0`\n\n> **") || notice < 0 || table < notice {
				t.Fatalf("the stale notice must come before the table:\n%.600s", re.text)
			}
			checkFirst(t, toolOut{text: strings.Replace(re.text, re.text[len("`s0`\n\n"):table], "", 1)}, "s0")
			issue = symbolFor(t, re.text, "tracker:Issue")
			now := canonicalSession(t, mustOK(t, runCall(t, cs, "s0", issue+`("iss-1")[id]`)))
			if now == old {
				t.Fatal("recovery rebound the expired execute session")
			}
			// Recovered once; the next open is ordinary again.
			next := contextCall(t, cs, intent, "tracker:Issue")
			if c := continuity(next); c["stale_binding_recovered"] != false || c["new_symbol_space"] != false {
				t.Fatalf("continuity after recovery: %v", c)
			}
		})
	}
}

func TestSessionIntentScopedExposure(t *testing.T) {
	f := newFixture(t, server.Config{})
	cs := f.mcpClient(t)
	kinds := func(t *testing.T, text, qualified string) map[string]bool {
		sym := symbolFor(t, text, qualified)
		out := map[string]bool{}
		recv := regexp.MustCompile(`^` + sym + `\b`)
		for _, row := range teachingRows(t, text) {
			if !recv.MatchString(row[0]) {
				continue
			}
			for _, fr := range strings.Split(row[1], " · ") {
				for _, k := range []string{"create", "update", "delete", "get by id", "search", "query all", "relation"} {
					if fr == k || strings.HasPrefix(fr, k+" ") {
						out[k] = true
					}
				}
				if strings.HasPrefix(fr, "action ") {
					out["action"] = true
				}
			}
		}
		return out
	}
	tests := []struct {
		name, intent string
		ranked       []string
		want, absent []string
	}{
		{"read intent teaches reads only", "look at issues", nil,
			[]string{"get by id", "search", "query all"}, []string{"create", "update", "delete", "action"}},
		{"intent overlap exposes the mutator", "close stale issues", nil,
			[]string{"get by id", "search", "query all", "action"}, []string{"delete"}},
		{"ranked capability exposes it", "look at issues please", []string{"issue_create"},
			[]string{"get by id", "create"}, []string{"update", "delete", "action"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"intent": tc.intent, "seeds": seedList("tracker:Issue")}
			if tc.ranked != nil {
				args["ranked_capabilities"] = tc.ranked // optional: omitted, never null
			}
			o := mustOK(t, call(t, cs, "plasm_context", args))
			checkContextMeta(t, o, "s"+strconvItoa(i), 1, "tracker")
			got := kinds(t, o.text, "tracker:Issue")
			for _, k := range tc.want {
				if !got[k] {
					t.Errorf("seeded Issue lacks %s rows (has %v)", k, got)
				}
			}
			for _, k := range tc.absent {
				if got[k] {
					t.Errorf("seeded Issue teaches %s (has %v)", k, got)
				}
			}
			// SeedsExact: relation targets get no block and no e#, whatever
			// the intent says; their relations name them by wire name.
			for _, target := range []string{"Comment", "User", "Project", "Label"} {
				if regexp.MustCompile(`(?m)^e\d+\S*\ttracker:` + target + ` · `).MatchString(o.text) {
					t.Errorf("relation target %s was exposed: %s", target, o.text)
				}
				if !regexp.MustCompile(`(?m)\.r\d+\trelation e\d+ → \[?` + target + `\]? · `).MatchString(o.text) {
					t.Errorf("no relation row naming %s by wire name", target)
				}
			}
		})
	}
}

func TestSessionDiscoverCapabilities(t *testing.T) {
	f := newFixture(t, server.Config{})
	cs := f.mcpClient(t)
	discover := func(t *testing.T, intent string, max int, allowed []string) []string {
		t.Helper()
		args := map[string]any{"intent": intent, "max_options": max}
		if allowed != nil {
			args["allowed_entry_ids"] = allowed
		}
		o := mustOK(t, call(t, cs, "discover_capabilities", args))
		rows := teachingLines(o.text)
		if len(rows) == 0 || rows[0] != "api\tentity\tdescription" {
			t.Fatalf("discover output: %s", o.text)
		}
		for _, r := range rows[1:] {
			if strings.Count(r, "\t") != 2 {
				t.Fatalf("row %q is not api/entity/description", r)
			}
		}
		return rows[1:]
	}
	tests := []struct {
		intent  string
		allowed []string
		wantTop string   // prefix of the best row
		apis    []string // catalogs the full ranking must span
	}{
		{"move cards across the board columns", nil, "kanban\t", []string{"kanban"}},
		{"file an issue and comment on it", nil, "tracker\t", []string{"tracker", "kanban"}},
		{"cards and issues", []string{"kanban"}, "kanban\t", []string{"kanban"}},
	}
	for _, tc := range tests {
		t.Run(tc.intent, func(t *testing.T) {
			full := discover(t, tc.intent, 20, tc.allowed)
			if len(full) < 3 || !strings.HasPrefix(full[0], tc.wantTop) {
				t.Fatalf("ranking for %q:\n%s", tc.intent, strings.Join(full, "\n"))
			}
			seen := map[string]bool{}
			for _, r := range full {
				api, _, _ := strings.Cut(r, "\t")
				seen[api] = true
				if tc.allowed != nil && !slices.Contains(tc.allowed, api) {
					t.Fatalf("row %q outside allowed_entry_ids", r)
				}
			}
			for _, api := range tc.apis {
				if !seen[api] {
					t.Fatalf("ranking misses catalog %s:\n%s", api, strings.Join(full, "\n"))
				}
			}
			// max_options cuts the same ranking, never reorders it.
			for _, max := range []int{1, 2, 3} {
				if got := discover(t, tc.intent, max, tc.allowed); !slices.Equal(got, full[:max]) {
					t.Fatalf("max_options %d: %v, want %v", max, got, full[:max])
				}
			}
		})
	}
}

// teachingLines returns the lines inside the first fence.
func teachingLines(text string) []string {
	_, rest, ok := strings.Cut(text, "```tsv\n")
	if !ok {
		return nil
	}
	body, _, _ := strings.Cut(rest, "```")
	return strings.Split(strings.TrimSuffix(body, "\n"), "\n")
}

func TestSessionRunArtifactsAndPaging(t *testing.T) {
	f := newTenantsFixture(t)
	a1, a2, b := f.mcpClientAs(t, tokenA), f.mcpClientAs(t, tokenA), f.mcpClientAs(t, tokenB)
	ctx := context.Background()
	first := contextCall(t, a1, "read the boards", "tracker:Issue", "kanban:Issue")
	contextCall(t, a1, "another goal", "kanban:Issue")
	contextCall(t, b, "read the boards", "tracker:Issue", "kanban:Issue")
	ti, ki := symbolFor(t, first.text, "tracker:Issue"), symbolFor(t, first.text, "kanban:Issue")

	// Over 25 rows: a preview and the artifact URI.
	big := mustOK(t, runCall(t, a1, "s0", ti+`{status="open"}.comments[id]`))
	short, _ := big.meta["run_uri"].(string)
	canonical, _ := big.meta["canonical_uri"].(string)
	if !regexp.MustCompile(`^plasm://session/s0/r/\d+$`).MatchString(short) {
		t.Fatalf("run_uri %q", short)
	}
	total := len(big.structured["results"].([]any)[0].(map[string]any)["rows"].([]any))
	if total <= 25 || len(tsvRows(t, big.text)) != 25 || !strings.Contains(big.text, "_Showing 25 of "+strconvItoa(total)+" rows. Full result: "+short+"_") {
		t.Fatalf("large result preview (%d rows):\n%s", total, big.text)
	}
	for _, uri := range []string{short, canonical} {
		res, err := a1.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, `"count":`+strconvItoa(total)) {
			t.Fatalf("resources/read %s: %v %v", uri, err, res)
		}
	}
	// Another transport of the same tenant has no s0 → not found; the
	// canonical URI is the tenant's and still resolves there. Another
	// tenant finds neither.
	if _, err := a2.ReadResource(ctx, &mcp.ReadResourceParams{URI: short}); err == nil {
		t.Fatal("another transport read the short URI")
	}
	if _, err := a2.ReadResource(ctx, &mcp.ReadResourceParams{URI: canonical}); err != nil {
		t.Fatalf("same tenant, canonical URI: %v", err)
	}
	for _, uri := range []string{short, canonical} {
		if _, err := b.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Fatalf("another tenant read %s", uri)
		}
	}

	// Paging.
	list := mustOK(t, runCall(t, a1, "s0", ki+`[id]`))
	var handle string
	for _, p := range list.meta["paging"].([]any) {
		handle = p.(map[string]any)["handle"].(string)
	}
	if !regexp.MustCompile(`^s0_pg\d+$`).MatchString(handle) || !strings.Contains(list.text, "page("+handle+")") {
		t.Fatalf("paging handle %q in %s", handle, list.text)
	}
	firstPage := tsvRows(t, list.text)
	next := tsvRows(t, mustOK(t, runCall(t, a1, "s0", "page("+handle+")")).text)
	if len(next) == 0 || next[0]["id"] == firstPage[0]["id"] {
		t.Fatalf("page(%s) did not continue: %v", handle, next)
	}
	limited := tsvRows(t, mustOK(t, runCall(t, a1, "s0", "page("+handle+", limit=3)")).text)
	if len(limited) != 3 || limited[0]["id"] != next[0]["id"] {
		t.Fatalf("page(%s, limit=3): %v", handle, limited)
	}
	for _, tc := range []struct {
		name string
		cs   *mcp.ClientSession
		ref  string
	}{{"handle of s0 used in s1", a1, "s1"}, {"another tenant", b, "s0"}, {"another transport", a2, "s0"}} {
		o := runCall(t, tc.cs, tc.ref, "page("+handle+")")
		if !o.isError {
			t.Fatalf("%s: page(%s) accepted: %s", tc.name, handle, o.text)
		}
	}
}

func strconvItoa(n int) string { return strconv.Itoa(n) }

package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestTaughtRowsRun proves that what plasm_context teaches can be run: for
// every demo entity as the only seed (every capability ranked, so mutators
// are taught too), every program row of the teaching table is filled with
// real demo values the way an agent would fill it and sent to plasm_run.
// Reads must return the columns and the entity the row promises; mutations
// must succeed against the per-fixture demo backend.
func TestTaughtRowsRun(t *testing.T) {
	probe := newVendorFixture(t, "", nil)
	cats, err := demo.LoadCatalogs(probe.backend.URL())
	if err != nil {
		t.Fatal(err)
	}
	byEntry := map[string]*catalog.Catalog{}
	for _, c := range cats {
		byEntry[c.EntryID] = c
	}
	total := map[string]int{}
	for _, entry := range []string{"tracker", "kanban", "ledger"} {
		c := byEntry[entry]
		if c == nil {
			t.Fatalf("demo catalog %s missing", entry)
		}
		var ranked []string
		for name := range c.Capabilities {
			ranked = append(ranked, name)
		}
		sort.Strings(ranked)
		var entities []string
		for name, e := range c.Entities {
			if !e.Abstract {
				entities = append(entities, name)
			}
		}
		sort.Strings(entities)
		for _, name := range entities {
			t.Run(entry+":"+name, func(t *testing.T) {
				// A fixture per seed: the logical session is keyed by
				// intent, and mutations must not leak into the next seed.
				f := newVendorFixture(t, "", nil)
				cs := f.mcpClient(t)
				ctxOut := mustOK(t, call(t, cs, "plasm_context", map[string]any{
					"intent":              "create update delete close and edit everything",
					"seeds":               seedList(entry + ":" + name),
					"ranked_capabilities": ranked,
				}))
				ref, _ := ctxOut.meta["logical_session_ref"].(string)
				tb := parseTaught(t, ctxOut.text)
				r := &taughtRunner{t: t, cs: cs, ref: ref, tb: tb, cats: byEntry, created: map[string]string{}}
				total[entry] += r.runAll()
			})
		}
	}
	t.Logf("programs run per catalog: %v", total)
}

// taughtTable is the parsed teaching table of one session.
type taughtTable struct {
	rows     []taughtRow
	entities map[string]string // e# → "api:Entity"
	slots    map[string]taughtSlot
	domains  map[string]string // v# → its Meaning
}

type taughtRow struct{ expr, meaning string }

type taughtSlot struct{ domain, name string }

var (
	metaRowRe     = regexp.MustCompile(`^[vp]\d+$`)
	qualifiedRe   = regexp.MustCompile(`^[a-z][a-z0-9_]*:[A-Za-z][A-Za-z0-9_]*$`)
	leadingEntRe  = regexp.MustCompile(`^e\d+`)
	receiverRe    = regexp.MustCompile(`\b(e\d+)\((p\d+)=\$\)`)
	slotFillRe    = regexp.MustCompile(`\b(p\d+)=\$`)
	searchRe      = regexp.MustCompile(`^(e\d+)~"text"`)
	dotsRe        = regexp.MustCompile(`,\s*\.\.`)
	bareDotsRe    = regexp.MustCompile(`\(\s*\.\.\s*\)`)
	projectionRe  = regexp.MustCompile(`\[((?:p\d+,)*p\d+)\]$`)
	relationRe    = regexp.MustCompile(`relation (e\d+) → \[?(e\d+|[A-Z]\w*)\]?`)
	returnsRe     = regexp.MustCompile(`returns \[?(e\d+)\]?`)
	optionalRe    = regexp.MustCompile(`optional params: ((?:p\d+, )*p\d+)`)
	methodCallRe  = regexp.MustCompile(`\.m\d+\(`)
	createShapeRe = regexp.MustCompile(`^e\d+\.m\d+\(`)
	methodArgRe   = regexp.MustCompile(`\b(p\d+)=("(?:[^"\\]|\\.)*"|-?\d+|true|false)`)
)

func parseTaught(t *testing.T, text string) *taughtTable {
	t.Helper()
	_, rest, ok := strings.Cut(text, "plasm_expr\tMeaning\n")
	if !ok {
		t.Fatalf("no teaching table in:\n%s", text)
	}
	body, _, _ := strings.Cut(rest, "```")
	tb := &taughtTable{entities: map[string]string{}, slots: map[string]taughtSlot{}, domains: map[string]string{}}
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		expr, meaning, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("teaching row without a tab: %q", line)
		}
		switch {
		case strings.HasPrefix(expr, "v") && metaRowRe.MatchString(expr):
			tb.domains[expr] = meaning
		case strings.HasPrefix(expr, "p") && metaRowRe.MatchString(expr):
			dom, name, _ := strings.Cut(meaning, " · ")
			tb.slots[expr] = taughtSlot{domain: dom, name: name}
		default:
			if first, _, _ := strings.Cut(meaning, " · "); qualifiedRe.MatchString(first) {
				tb.entities[leadingEntRe.FindString(expr)] = first
			}
			tb.rows = append(tb.rows, taughtRow{expr: expr, meaning: meaning})
		}
	}
	return tb
}

// knownIDs are seeded demo rows whose relations all have data (iss-2 has
// an assignee, comments and labels; kiss-1 an assignee).
var knownIDs = map[string]string{
	"tracker:Project": "prj-1", "tracker:User": "usr-1", "tracker:Label": "lbl-1",
	"tracker:Issue": "iss-2", "tracker:Comment": "cmt-1", "tracker:IssueTriage": "iss-2",
	"kanban:Team": "team-1", "kanban:User": "kusr-1", "kanban:Issue": "kiss-1",
	"ledger:Account": "acc-1", "ledger:Transaction": "txn-1",
}

// searchWords are words that occur in the demo data of searchable entities.
var searchWords = map[string]string{"tracker:Issue": "login"}

// taughtFailures lists filled programs that legitimately fail (the
// program's fault, clearly explained), with why. Empty: every row runs.
var taughtFailures = map[string]string{}

type taughtRunner struct {
	t       *testing.T
	cs      *mcp.ClientSession
	ref     string
	tb      *taughtTable
	cats    map[string]*catalog.Catalog
	created map[string]string // api:Entity → id of a row this session created
	log     []string
}

// program is one filled row ready to send.
type program struct {
	row      taughtRow
	variant  string // "" for the row as taught; otherwise what was added
	text     string
	filter   map[string]string // wire field → value every row must carry
	wantID   string            // a get by id must return exactly this row
	deletion bool
}

func (r *taughtRunner) runAll() int {
	// Deletions last, and filled only then: they remove a row this session
	// created, so earlier rows still find the rows they read.
	var deletes []taughtRow
	n := 0
	for _, row := range r.tb.rows {
		if strings.Contains(row.meaning, "· delete") {
			deletes = append(deletes, row)
			continue
		}
		for _, p := range r.programsFor(row) {
			r.run(p)
			n++
		}
	}
	for _, row := range deletes {
		for _, p := range r.programsFor(row) {
			r.run(p)
			n++
		}
	}
	r.t.Logf("%d programs:\n%s", n, strings.Join(r.log, "\n"))
	return n
}

func (r *taughtRunner) programsFor(row taughtRow) []program {
	t := r.t
	base := program{row: row, deletion: strings.Contains(row.meaning, "· delete")}
	text, wantID := r.fill(row.expr, base.deletion)
	base.text, base.wantID = text, wantID
	out := []program{base}
	opts := optionalParams(row.meaning)
	if len(opts) == 0 {
		return out
	}
	switch {
	case strings.Contains(row.expr, ".."):
		// The agent adds the optional parameters it needs in place of "..".
		var adds []string
		for _, p := range opts {
			adds = append(adds, p+"="+r.valueFor(p))
		}
		with := strings.Replace(row.expr, "..", strings.Join(adds, ", "), 1)
		filled, _ := r.fill(with, base.deletion)
		out = append(out, program{row: row, variant: "with " + strings.Join(opts, ","), text: filled, deletion: base.deletion})
	case leadingEntRe.FindString(row.expr) == row.expr && strings.Contains(row.meaning, "query all"):
		// Optional query parameters narrow "all rows": one program per filter.
		for _, p := range opts {
			v := r.valueFor(p)
			ent := r.entity(row.expr)
			if r.tb.slots[p].name == ent.IDField {
				v = strconv.Quote(knownIDs[r.tb.entities[row.expr]])
			}
			prog := program{row: row, variant: "filter " + p, text: row.expr + "{" + p + "=" + v + "}"}
			if f := ent.Fields[r.tb.slots[p].name]; f != nil {
				prog.filter = map[string]string{f.Name: unquote(v)}
			}
			out = append(out, prog)
		}
	default:
		t.Errorf("row %q lists optional params but has no place for them", row.expr)
	}
	return out
}

// fill replaces every placeholder of expr with a real demo value.
func (r *taughtRunner) fill(expr string, deletion bool) (string, string) {
	var wantID string
	expr = receiverRe.ReplaceAllStringFunc(expr, func(s string) string {
		m := receiverRe.FindStringSubmatch(s)
		q := r.tb.entities[m[1]]
		id := knownIDs[q]
		if deletion && r.created[q] != "" {
			id = r.created[q]
		}
		if id == "" {
			r.t.Fatalf("no known id for %s (%s)", m[1], q)
		}
		wantID = id
		return m[1] + "(" + m[2] + "=" + strconv.Quote(id) + ")"
	})
	expr = slotFillRe.ReplaceAllStringFunc(expr, func(s string) string {
		p := strings.TrimSuffix(s, "=$")
		return p + "=" + r.valueFor(p)
	})
	expr = searchRe.ReplaceAllStringFunc(expr, func(s string) string {
		e := searchRe.FindStringSubmatch(s)[1]
		w := searchWords[r.tb.entities[e]]
		if w == "" {
			r.t.Fatalf("no search word for %s", r.tb.entities[e])
		}
		return e + "~" + strconv.Quote(w)
	})
	expr = dotsRe.ReplaceAllString(expr, "")
	expr = bareDotsRe.ReplaceAllString(expr, "()")
	if strings.Contains(expr, "$") || strings.Contains(expr, "..") {
		r.t.Fatalf("unfilled placeholder left in %q", expr)
	}
	if wantID != "" && (strings.Contains(expr, ")[") || strings.HasSuffix(expr, ")")) && !methodCallRe.MatchString(expr) && !strings.Contains(expr, ").r") {
		return expr, wantID
	}
	return expr, ""
}

// valueFor is a real value for slot p, from its taught value domain.
func (r *taughtRunner) valueFor(p string) string {
	s, ok := r.tb.slots[p]
	if !ok {
		r.t.Fatalf("slot %s has no slot row", p)
	}
	return r.valueOf(s.name, r.tb.domains[s.domain])
}

func (r *taughtRunner) valueOf(name, domain string) string {
	kind, rest, _ := strings.Cut(domain, " · ")
	switch {
	case strings.HasPrefix(kind, "ref "):
		target := strings.TrimPrefix(kind, "ref ")
		if q, ok := r.tb.entities[target]; ok {
			target = q
		}
		id := knownIDs[target]
		if id == "" {
			r.t.Fatalf("no known id for ref %s", target)
		}
		return strconv.Quote(id)
	case kind == "select":
		allowed, _, _ := strings.Cut(rest, " · ")
		first, _, _ := strings.Cut(allowed, ", ")
		return strconv.Quote(first)
	case strings.HasPrefix(kind, "array of "):
		return "[" + r.valueOf(name, r.tb.domains[strings.TrimPrefix(kind, "array of ")]) + "]"
	case kind == "int":
		switch name {
		case "amount_cents":
			return "-1250"
		case "priority":
			return "2"
		case "estimate":
			return "3"
		}
		return "1"
	case strings.HasPrefix(kind, "date"):
		return `"2025-03-03T09:00:00Z"`
	case kind == "bool":
		return "true"
	case strings.HasPrefix(kind, "str"):
		switch name {
		case "label", "labels":
			return `"bug"`
		case "title":
			return `"Checked by the taught-rows test"`
		}
		return `"written by the taught-rows test"`
	}
	r.t.Fatalf("no value for %s of domain %q", name, domain)
	return ""
}

func optionalParams(meaning string) []string {
	m := optionalRe.FindStringSubmatch(meaning)
	if m == nil {
		return nil
	}
	return strings.Split(m[1], ", ")
}

func unquote(v string) string {
	if s, err := strconv.Unquote(v); err == nil {
		return s
	}
	return v
}

func (r *taughtRunner) entity(sym string) *catalog.Entity {
	api, name, _ := strings.Cut(r.tb.entities[sym], ":")
	c := r.cats[api]
	if c == nil || c.Entities[name] == nil {
		r.t.Fatalf("%s names no catalog entity (%q)", sym, r.tb.entities[sym])
	}
	return c.Entities[name]
}

// expected is the e# a row's result rows belong to ("" for none).
func expected(meaning string) string {
	if m := relationRe.FindStringSubmatch(meaning); m != nil {
		return m[2]
	}
	if m := returnsRe.FindStringSubmatch(meaning); m != nil {
		return m[1]
	}
	return ""
}

func (r *taughtRunner) run(p program) {
	t := r.t
	name := p.row.expr
	if p.variant != "" {
		name += " (" + p.variant + ")"
	}
	out := call(t, r.cs, "plasm_run", map[string]any{"logical_session_ref": r.ref, "program": p.text})
	if out.isError {
		if why, ok := taughtFailures[p.text]; ok {
			r.log = append(r.log, fmt.Sprintf("  %-60s %-70s expected failure: %s", name, p.text, why))
			return
		}
		t.Errorf("taught row %q ran as %q: tool error: %s", name, p.text, out.text)
		r.log = append(r.log, fmt.Sprintf("  %-60s %-70s ERROR %s", name, p.text, firstLine(out.text)))
		return
	}
	roots := resultRoots(t, out)
	if len(roots) != 1 {
		t.Errorf("%q: %d result roots, want 1", p.text, len(roots))
		return
	}
	root := roots[0]
	want := expected(p.row.meaning)
	if strings.Contains(p.row.meaning, "returns nothing") {
		r.log = append(r.log, fmt.Sprintf("  %-60s %-70s ok (%d rows)", name, p.text, len(root.Rows)))
		return
	}
	if want == "" {
		t.Errorf("row %q promises no result entity: %q", p.row.expr, p.row.meaning)
		return
	}
	if m := relationRe.FindStringSubmatch(p.row.meaning); m != nil && !leadingEntRe.MatchString(want) {
		// A relation to an unexposed entity names it by wire name
		// (SeedsExact); it lives in the source entity's catalog, and its
		// rows must still come back with wire column names.
		api, _, _ := strings.Cut(r.tb.entities[m[1]], ":")
		r.tb.entities[want] = api + ":" + want
	}
	ent := r.entity(want)
	entry, _, _ := strings.Cut(r.tb.entities[want], ":")
	if len(root.Rows) == 0 {
		t.Errorf("%q returned no rows", p.text)
	}
	// The run artifact names the entity of the rows.
	art := r.artifact(out)
	if art.Entity != ent.Name || art.EntryID != entry {
		t.Errorf("%q returned %s:%s rows, the row promises %s", p.text, art.EntryID, art.Entity, r.tb.entities[want])
	}
	if m := projectionRe.FindStringSubmatch(p.row.expr); m != nil {
		var cols []string
		for _, ps := range strings.Split(m[1], ",") {
			cols = append(cols, r.tb.slots[ps].name)
		}
		if !slices.Equal(cols, root.Columns) {
			t.Errorf("%q: columns %v, the projection promises %v", p.text, root.Columns, cols)
		}
	} else {
		for _, c := range root.Columns {
			if ent.Fields[c] == nil {
				t.Errorf("%q: column %q is not a field of %s", p.text, c, ent.Name)
			}
		}
		if !slices.Contains(root.Columns, ent.IDField) {
			t.Errorf("%q: no %s column in %v", p.text, ent.IDField, root.Columns)
		}
	}
	for _, row := range root.Rows {
		for _, f := range ent.FieldOrder {
			if v, ok := row[f]; ok && ent.Fields[f].Required && (v == nil || v == "") {
				t.Errorf("%q: required %s.%s is empty in %v", p.text, ent.Name, f, row)
			}
		}
		for f, v := range p.filter {
			if fmt.Sprint(row[f]) != v {
				t.Errorf("%q: row %v does not carry %s=%s", p.text, row, f, v)
			}
		}
	}
	// A create or update returns the row as written: every parameter that
	// is a field of the entity carries the value sent.
	if loc := methodCallRe.FindStringIndex(p.text); loc != nil && len(root.Rows) == 1 {
		for _, a := range methodArgRe.FindAllStringSubmatch(p.text[loc[1]:], -1) {
			f := ent.Fields[r.tb.slots[a[1]].name]
			if f == nil {
				continue
			}
			if got := fmt.Sprint(root.Rows[0][f.Name]); got != unquote(a[2]) {
				t.Errorf("%q: %s is %q after the write, want %s", p.text, f.Name, got, a[2])
			}
		}
		if strings.Contains(p.row.meaning, "action close") && root.Rows[0]["status"] != "closed" {
			t.Errorf("%q: status %v after close", p.text, root.Rows[0]["status"])
		}
	}
	if relationRe.MatchString(p.row.meaning) && len(root.Rows) > 0 {
		r.sameAsDirect(p.text, want, ent, root.Rows[0])
	}
	if p.wantID != "" && (len(root.Rows) != 1 || fmt.Sprint(root.Rows[0][ent.IDField]) != p.wantID) {
		t.Errorf("%q: want exactly row %s, got %v", p.text, p.wantID, root.Rows)
	}
	if createShapeRe.MatchString(p.row.expr) && strings.Contains(p.row.meaning, "· create") && len(root.Rows) == 1 {
		r.created[r.tb.entities[want]] = fmt.Sprint(root.Rows[0][ent.IDField])
	}
	r.log = append(r.log, fmt.Sprintf("  %-60s %-70s ok (%d %s rows, %d cols)", name, p.text, len(root.Rows), ent.Name, len(root.Columns)))
}

type taughtRoot struct {
	Columns []string         `json:"columns"`
	Rows    []map[string]any `json:"rows"`
}

func resultRoots(t *testing.T, out toolOut) []taughtRoot {
	t.Helper()
	b, _ := json.Marshal(out.structured["results"])
	var roots []taughtRoot
	if err := json.Unmarshal(b, &roots); err != nil {
		t.Fatalf("structured results: %v", err)
	}
	return roots
}

type taughtArtifact struct {
	EntryID string `json:"entry_id"`
	Entity  string `json:"entity"`
}

func (r *taughtRunner) artifact(out toolOut) taughtArtifact {
	uri, _ := out.meta["run_uri"].(string)
	res, err := r.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(res.Contents) != 1 {
		r.t.Fatalf("resources/read %q: %v", uri, err)
	}
	var a struct {
		Results []taughtArtifact `json:"results"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &a); err != nil || len(a.Results) != 1 {
		r.t.Fatalf("run artifact %q: %v %s", uri, err, res.Contents[0].Text)
	}
	return a.Results[0]
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// sameAsDirect checks that a row reached through a relation is the row a
// direct read of the same id returns: a relation must not hand back a thin
// copy (say, only the id and name embedded in the parent) as if it were the
// whole row.
func (r *taughtRunner) sameAsDirect(prog, sym string, ent *catalog.Entity, got map[string]any) {
	id := fmt.Sprint(got[ent.IDField])
	var direct string
	for _, row := range r.tb.rows {
		if m := receiverRe.FindStringSubmatch(row.expr); m != nil && m[0] == row.expr && m[1] == sym {
			direct = sym + "(" + m[2] + "=" + strconv.Quote(id) + ")"
		}
	}
	if direct == "" {
		direct = sym // no get: find the row in the listing
	}
	out := call(r.t, r.cs, "plasm_run", map[string]any{"logical_session_ref": r.ref, "program": direct})
	if out.isError {
		r.t.Errorf("%q: direct read %q of the related row failed: %s", prog, direct, out.text)
		return
	}
	for _, want := range resultRoots(r.t, out)[0].Rows {
		if fmt.Sprint(want[ent.IDField]) != id {
			continue
		}
		for c, v := range want {
			// A value the relation does not carry (a list capability that
			// does not provide it, a parent that embeds only part of the
			// row) is absent, not wrong; a value it does carry must agree.
			if v == nil && direct == sym {
				continue // the listing does not carry it (a view's get step does)
			}
			if g, ok := got[c]; ok && g != nil && fmt.Sprint(g) != fmt.Sprint(v) {
				r.t.Errorf("%q: related %s %s has %s=%q, a direct read %q says %q", prog, ent.Name, id, c, fmt.Sprint(got[c]), direct, fmt.Sprint(v))
			}
		}
		return
	}
}

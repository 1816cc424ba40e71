package server_test

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/session"
)

// mcpClient connects a go-sdk client to the fixture's /mcp endpoint.
func (f *fixture) mcpClient(t testing.TB) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.srv.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type toolOut struct {
	text       string
	isError    bool
	meta       map[string]any
	structured map[string]any
}

func call(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) toolOut {
	t.Helper()
	if tool == "plasm_run" && args["force"] == nil && args["plan_commit_ref"] == nil {
		// Tests of results force review plans through; review gating has
		// its own tests (gate_test.go), which always say "force" or
		// "plan_commit_ref" explicitly.
		args = maps.Clone(args)
		args["force"] = true
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var out toolOut
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out.text += tc.Text
		}
	}
	out.isError = res.IsError
	if p, ok := res.Meta["plasm"].(map[string]any); ok {
		out.meta = p
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out.structured)
	}
	return out
}

func mustOK(t testing.TB, o toolOut) toolOut {
	t.Helper()
	if o.isError {
		t.Fatalf("tool error: %s", o.text)
	}
	return o
}

// symbolFor finds the e# whose block the teaching table labels api:Entity.
func symbolFor(t testing.TB, table, qualified string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^(e\d+)\S*\t` + regexp.QuoteMeta(qualified) + ` `)
	m := re.FindStringSubmatch(table)
	if m == nil {
		t.Fatalf("no block for %s in:\n%s", qualified, table)
	}
	return m[1]
}

// tsvRows parses the fenced TSV of the first "## label (n rows)" block.
func tsvRows(t testing.TB, text string) []map[string]string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "```tsv\n")
	if !ok {
		t.Fatalf("no TSV block in:\n%s", text)
	}
	block, _, _ := strings.Cut(rest, "```")
	lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	cols := strings.Split(lines[0], "\t")
	var out []map[string]string
	for _, l := range lines[1:] {
		cells := strings.Split(l, "\t")
		row := map[string]string{}
		for i, c := range cols {
			if i < len(cells) {
				row[c] = cells[i]
			}
		}
		out = append(out, row)
	}
	return out
}

func TestMCPStreamable(t *testing.T) {
	f := newFixture(t, server.Config{})
	cs := f.mcpClient(t)
	exerciseMCP(t, cs)
}

// exerciseMCP runs the agent flow every MCP transport must support.
func exerciseMCP(t *testing.T, cs *mcp.ClientSession) {
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"discover_capabilities", "plasm_context", "plasm", "plasm_run"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Fatalf("tool %s missing from %v", want, names)
		}
	}

	disc := mustOK(t, call(t, cs, "discover_capabilities", map[string]any{"intent": "triage open bugs and read their comments", "max_options": 3}))
	if !strings.Contains(disc.text, "api\tentity\tdescription") || !strings.Contains(disc.text, "tracker\t") {
		t.Fatalf("discover: %s", disc.text)
	}

	ctx1 := mustOK(t, call(t, cs, "plasm_context", map[string]any{
		"intent": "triage tracker issues", "seeds": []any{map[string]any{"api": "tracker", "entity": "Issue"}},
	}))
	if !strings.HasPrefix(ctx1.text, "`s0`\n") || !strings.Contains(ctx1.text, "plasm_expr\tMeaning") {
		t.Fatalf("first open: %q", ctx1.text[:min(200, len(ctx1.text))])
	}
	if ctx1.meta["logical_session_ref"] != "s0" || ctx1.meta["logical_session_id"] == "" {
		t.Fatalf("_meta.plasm: %v", ctx1.meta)
	}
	mirror, _ := ctx1.structured["_meta"].(map[string]any)
	if mirror == nil || mirror["plasm"].(map[string]any)["logical_session_ref"] != "s0" {
		t.Fatalf("_meta.plasm not mirrored in structuredContent: %v", ctx1.structured)
	}
	cont := ctx1.meta["continuity"].(map[string]any)
	if cont["new_symbol_space"] != true || cont["stale_binding_recovered"] != false {
		t.Fatalf("continuity: %v", cont)
	}
	issue := symbolFor(t, ctx1.text, "tracker:Issue")

	// Same intent, same seeds: one line, no table replay.
	again := mustOK(t, call(t, cs, "plasm_context", map[string]any{
		"intent": "triage tracker issues", "seeds": []any{map[string]any{"api": "tracker", "entity": "Issue"}},
	}))
	if again.text != unchangedText("s0", 1) {
		t.Fatalf("duplicate seeds: %q", again.text)
	}

	run := func(program string) toolOut {
		t.Helper()
		return mustOK(t, call(t, cs, "plasm_run", map[string]any{"logical_session_ref": "s0", "program": program}))
	}
	get := run(issue + `("iss-3")`)
	if !strings.HasPrefix(get.text, "## "+issue+`("iss-3") (1 row)`) || tsvRows(t, get.text)[0]["id"] != "iss-3" {
		t.Fatalf("get: %s", get.text)
	}
	if get.meta["run_uri"] == nil || get.structured["results"] == nil {
		t.Fatalf("run meta: %v", get.meta)
	}
	for _, r := range tsvRows(t, run(`Issue{status="closed"}.limit(4)[id,status]`).text) {
		if r["status"] != "closed" {
			t.Fatalf("filtered query row %v", r)
		}
	}
	if rs := tsvRows(t, run(`Issue~"latency"[id,title]`).text); len(rs) == 0 {
		t.Fatal("search found nothing")
	}
	if rs := tsvRows(t, run(`Issue("iss-1").comments[id,issue_id]`).text); len(rs) == 0 || rs[0]["issue_id"] != "iss-1" {
		t.Fatalf("hop: %v", rs)
	}
	created := tsvRows(t, run(`Issue.create(title="Filed over MCP", priority=1)`).text)
	if len(created) != 1 || created[0]["id"] == "" {
		t.Fatalf("create: %v", created)
	}
	if rs := tsvRows(t, run(`Issue("`+created[0]["id"]+`")[title]`).text); rs[0]["title"] != "Filed over MCP" {
		t.Fatalf("read after create: %v", rs)
	}

	// Dry run: a plan and a verdict, no backend call.
	dry := mustOK(t, call(t, cs, "plasm", map[string]any{"logical_session_ref": "s0", "program": `Issue("iss-3").close()`}))
	if dry.meta["verdict"] != "review" || !strings.Contains(dry.text, "plan review") {
		t.Fatalf("dry run: %s %v", dry.text, dry.meta)
	}

	// Errors are tool errors the model can read.
	syn := call(t, cs, "plasm_run", map[string]any{"logical_session_ref": "s0", "program": "Issue{status=}"})
	if !syn.isError || !strings.Contains(syn.text, "1:") {
		t.Fatalf("syntax error: %+v", syn)
	}
	unk := call(t, cs, "plasm_run", map[string]any{"logical_session_ref": "s0", "program": `Isue("x")`})
	if !unk.isError || !strings.Contains(unk.text, "Issue") {
		t.Fatalf("unknown entity: %+v", unk)
	}
	stale := call(t, cs, "plasm_run", map[string]any{"logical_session_ref": "s9", "program": `Issue("iss-1")`})
	if !stale.isError || !strings.Contains(stale.text, "plasm_context") {
		t.Fatalf("unknown ref: %+v", stale)
	}

	// Federation: both Issue entities in one session, told apart by e#.
	fed := mustOK(t, call(t, cs, "plasm_context", map[string]any{
		"intent": "compare tracker issues with kanban cards",
		"seeds":  []any{map[string]any{"api": "kanban", "entity": "Issue"}, map[string]any{"api": "tracker", "entity": "Issue"}},
	}))
	if !strings.HasPrefix(fed.text, "`s1`\n") {
		t.Fatalf("federated open: %q", fed.text[:min(80, len(fed.text))])
	}
	ti, ki := symbolFor(t, fed.text, "tracker:Issue"), symbolFor(t, fed.text, "kanban:Issue")
	if ti == ki {
		t.Fatalf("colliding entities share %s", ti)
	}
	both := mustOK(t, call(t, cs, "plasm_run", map[string]any{"logical_session_ref": "s1",
		"program": "t = " + ti + "(\"iss-1\")[id,title]\nk = " + ki + "{team_id=\"team-1\"}.limit(2)[id,title]\nt, k"}))
	if !strings.Contains(both.text, "## t (1 row)") || !strings.Contains(both.text, "## k (2 rows)") || !strings.Contains(both.text, "kiss-") {
		t.Fatalf("federated run: %s", both.text)
	}
	q := mustOK(t, call(t, cs, "plasm_run", map[string]any{"logical_session_ref": "s1", "program": `kanban:Issue{team_id="team-2"}.limit(1)[id]`}))
	if !strings.Contains(q.text, "kiss-") {
		t.Fatalf("qualified wire name: %s", q.text)
	}
	amb := call(t, cs, "plasm_run", map[string]any{"logical_session_ref": "s1", "program": `Issue("iss-1")`})
	if !amb.isError || !strings.Contains(amb.text, "tracker:Issue") {
		t.Fatalf("ambiguous bare name: %+v", amb)
	}

	// The run artifact is readable as a resource.
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: get.meta["run_uri"].(string)})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, `"iss-3"`) {
		t.Fatalf("resources/read %v: %v %v", get.meta["run_uri"], err, res)
	}
}

// recordingStore notes which transports were forgotten.
type recordingStore struct {
	session.Store
	forgot chan string
}

func (r *recordingStore) ForgetTransport(ctx context.Context, transport string) error {
	r.forgot <- transport
	return r.Store.ForgetTransport(ctx, transport)
}

// Closing an MCP connection releases its refs in the session store.
func TestMCPCloseForgetsTransport(t *testing.T) {
	store := &recordingStore{Store: session.NewMemory(time.Hour), forgot: make(chan string, 4)}
	f := newFixture(t, server.Config{SessionStore: store})
	c := mcp.NewClient(&mcp.Implementation{Name: "closer", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.srv.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, cs, "plasm_context", map[string]any{"intent": "close me", "seeds": []any{map[string]any{"api": "tracker", "entity": "Issue"}}}))
	id := cs.ID()
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-store.forgot:
		if got != "mcp:"+id {
			t.Fatalf("forgot %q, want mcp:%s", got, id)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("closing the MCP session never released its transport")
	}
}

package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/server"
)

// gatedRun calls plasm_run saying explicitly how it means to pass review
// gating (call() forces review plans through otherwise).
func gatedRun(t *testing.T, cs *mcp.ClientSession, ref, program, commit string) toolOut {
	t.Helper()
	args := map[string]any{"logical_session_ref": ref, "program": program, "force": false}
	if commit != "" {
		args["plan_commit_ref"] = commit
	}
	return call(t, cs, "plasm_run", args)
}

func dryRun(t *testing.T, cs *mcp.ClientSession, ref, program string) string {
	t.Helper()
	o := mustOK(t, call(t, cs, "plasm", map[string]any{"logical_session_ref": ref, "program": program}))
	pc, _ := o.meta["plan_commit_ref"].(string)
	if o.meta["verdict"] == "review" && (pc == "" || !strings.Contains(o.text, "plan_commit_ref: "+pc)) {
		t.Fatalf("review dry run minted no plan_commit_ref: %s %v", o.text, o.meta)
	}
	return pc
}

func wantRefused(t *testing.T, o toolOut, why string) {
	t.Helper()
	if !o.isError || !strings.Contains(o.text, why) || !strings.Contains(o.text, "plan review ·") ||
		!strings.Contains(o.text, "review: ") || !strings.Contains(o.text, "force: true") {
		t.Fatalf("want a refusal (%s) with the dry-run summary and how to proceed, got: %s", why, o.text)
	}
}

// TestReviewGatingMCP: a review plan runs live only with force or with the
// pcN a dry run of the same semantic plan minted in the same session, once,
// within 10 minutes; ok plans are never gated.
func TestReviewGatingMCP(t *testing.T) {
	clk := newFakeClock()
	f := newFixture(t, server.Config{Clock: clk.Now})
	cs := f.mcpClient(t)
	contextCall(t, cs, "read open issues", "tracker:Issue")
	contextCall(t, cs, "another goal", "tracker:Issue")
	const review = `Issue{status="open"}`

	wantRefused(t, gatedRun(t, cs, "s0", review, ""), "needs review")
	if o := gatedRun(t, cs, "s0", `Issue("iss-1")[id]`, ""); o.isError {
		t.Fatalf("ok plan gated: %s", o.text)
	}
	if pc := dryRun(t, cs, "s0", `Issue("iss-1")[id]`); pc != "" {
		t.Fatalf("ok plan minted %s", pc)
	}

	pc := dryRun(t, cs, "s0", review)
	if pc != "pc1" {
		t.Fatalf("first commit %q, want pc1", pc)
	}
	wantRefused(t, gatedRun(t, cs, "s0", `Issue{status="closed"}`, pc), "different plan")
	wantRefused(t, gatedRun(t, cs, "s1", review, pc), "unknown in this session")
	// The same semantic plan, written differently, may use the commit once.
	if o := gatedRun(t, cs, "s0", "  Issue{ status = \"open\" }", pc); o.isError {
		t.Fatalf("matching commit refused: %s", o.text)
	}
	wantRefused(t, gatedRun(t, cs, "s0", review, pc), "already used")
	if o := gatedRun(t, cs, "s0", "open = Issue{status=\"open\"}\nopen", dryRun(t, cs, "s0", review)); o.isError {
		t.Fatalf("a binding name is not semantics: %s", o.text)
	}
	if o := gatedRun(t, cs, "s0", review, "nope"); !o.isError || !strings.Contains(o.text, "is not a plan_commit_ref") {
		t.Fatalf("malformed ref: %s", o.text)
	}
	if o := call(t, cs, "plasm_run", map[string]any{"logical_session_ref": "s0", "program": review, "force": true}); o.isError {
		t.Fatalf("force refused: %s", o.text)
	}

	// Valid 10 minutes by the store's clock.
	pc = dryRun(t, cs, "s0", review)
	clk.Advance(9 * time.Minute)
	pc2 := dryRun(t, cs, "s0", review)
	if o := gatedRun(t, cs, "s0", review, pc); o.isError {
		t.Fatalf("9-minute-old commit refused: %s", o.text)
	}
	clk.Advance(2 * time.Minute)
	if o := gatedRun(t, cs, "s0", review, pc2); o.isError {
		t.Fatalf("2-minute-old commit refused: %s", o.text)
	}
	pc3 := dryRun(t, cs, "s0", review)
	clk.Advance(10*time.Minute + time.Second)
	wantRefused(t, gatedRun(t, cs, "s0", review, pc3), "expired")
}

// TestReviewGatingHTTP: ?mode=plan mints the commit; ?plan_commit_ref= and
// ?force=true pass the gate; otherwise 428 with the summary.
func TestReviewGatingHTTP(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "tracker", "Issue")
	const review = `Issue{status="open"}`

	r := f.do(t, "POST", path+"?force=false", "text/plain", review)
	p := problemOf(t, r)
	if r.status != http.StatusPreconditionRequired || !strings.HasSuffix(p["type"].(string), "/review-required") ||
		!strings.Contains(p["detail"].(string), "plan review ·") || !strings.Contains(p["hint"].(string), "?force=true") {
		t.Fatalf("ungated review run: %d %s", r.status, r.body)
	}
	plan := f.do(t, "POST", path+"?mode=plan", "text/plain", review).json(t)
	pc, _ := plan["plan_commit_ref"].(string)
	if pc != "pc1" {
		t.Fatalf("dry run: %v", plan)
	}
	if r := f.do(t, "POST", path+"?plan_commit_ref="+pc, "text/plain", review); r.status != http.StatusOK {
		t.Fatalf("with %s: %d %s", pc, r.status, r.body)
	}
	if r := f.do(t, "POST", path+"?plan_commit_ref="+pc, "text/plain", review); r.status != http.StatusPreconditionRequired ||
		!strings.Contains(r.body, "already used") {
		t.Fatalf("reused %s: %d %s", pc, r.status, r.body)
	}
	if r := f.do(t, "POST", path+"?force=true", "text/plain", review); r.status != http.StatusOK {
		t.Fatalf("force: %d %s", r.status, r.body)
	}
	if r := f.do(t, "POST", path+"?force=false", "text/plain", `Issue("iss-1")[id]`); r.status != http.StatusOK {
		t.Fatalf("ok plan gated: %d %s", r.status, r.body)
	}
}

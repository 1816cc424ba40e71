package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/redistest"
	"github.com/plasmd/plasmd/server"
)

// clientDeadline bounds one run of the client script, so a hang fails
// the test instead of stalling it; a healthy run (15 plasmd processes for
// the one-shot stdio case) is far below it. requestTimeout is the SDK's
// per-request timeout inside the script, as generous for the same reason.
const (
	clientDeadline = 10 * time.Minute
	requestTimeout = 3 * time.Minute
)

// The programs the client runs; the oracle answers the same questions
// from the demo backend itself.
const (
	getProgram   = `tracker:Issue("iss-7")[id,title,status,priority]`
	queryProgram = `tracker:Issue{status="open", priority>=3}[id,title,priority]`
	// badProgram misspells an entity on line 2, column 5.
	badProgram = "a = tracker:Issue(\"iss-1\")[id]\nb = tracker:Isue(\"iss-2\")\na, b"
)

var listPrograms = []string{`tracker:Issue[id,title]`, `kanban:Issue[id,title]`}

// scenario is what client.mjs reads on stdin.
type scenario struct {
	Transport string   `json:"transport"`
	Command   string   `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	URL       string   `json:"url,omitempty"`
	OneShot   bool     `json:"one_shot"`
	Intent    string   `json:"intent"`
	Seeds     []seed   `json:"seeds"`
	Get       string   `json:"get"`
	Query     string   `json:"query"`
	Lists     []string `json:"lists"`
	Bad       string   `json:"bad"`
	TimeoutMS int64    `json:"timeout_ms"`
}

type seed struct {
	API    string `json:"api"`
	Entity string `json:"entity"`
}

type rows = []map[string]any

// toolResult is one tools/call answer as client.mjs reduces it.
type toolResult struct {
	IsError bool   `json:"is_error"`
	Text    string `json:"text"`
	Plasm   struct {
		Ref           string `json:"logical_session_ref"`
		SessionHandle string `json:"session_handle"`
		PlanCommitRef string `json:"plan_commit_ref"`
		Verdict       string `json:"verdict"`
	} `json:"plasm"`
	Results []struct {
		Rows rows `json:"rows"`
	} `json:"results"`
	Error *struct {
		Type   string `json:"type"`
		Line   int    `json:"line"`
		Column int    `json:"column"`
	} `json:"error"`
}

// clientReport is client.mjs's output.
type clientReport struct {
	Connections int `json:"connections"`
	Server      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	Tools []struct {
		Name         string         `json:"name"`
		Annotations  map[string]any `json:"annotations"`
		OutputSchema bool           `json:"output_schema"`
	} `json:"tools"`
	ResourceTemplates []string   `json:"resource_templates"`
	Context           toolResult `json:"context"`
	Teaching          string     `json:"teaching"`
	Get               toolResult `json:"get"`
	GetResource       struct {
		Results []struct {
			Rows rows `json:"rows"`
		} `json:"results"`
	} `json:"get_resource"`
	Query toolResult `json:"query"`
	Lists []struct {
		Program string       `json:"program"`
		Plan    toolResult   `json:"plan"`
		Pages   []toolResult `json:"pages"`
	} `json:"lists"`
	Bad      toolResult `json:"bad"`
	AfterBad toolResult `json:"after_bad"`
}

// TestTypeScriptSDKClient runs the TypeScript MCP SDK's Client (pinned in
// testdata/mcpclient/package-lock.json) against the plasmd binary over
// stdio and Streamable HTTP (with transport sessions and --mcp-stateless),
// connected once and one-shot (a new connection, over stdio a new process
// on a shared Redis, per request), and checks every answer against the
// demo backend's own.
func TestTypeScriptSDKClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node and the plasmd binary; skipped with -short")
	}
	node, dir := nodeClient(t)
	bin := buildBinary(t)
	want := askDemoBackend(t)
	rs := redistest.Start(t)
	demoArgs := []string{"--demo", "--cache-dir", testCacheDir(), "--log-level", "warn"}
	srv := startReplica(t, bin, demoArgs)
	stateless := startReplica(t, bin, append([]string{"--mcp-stateless"}, demoArgs...))
	stdioArgs := append([]string{"stdio"}, demoArgs...)
	cases := []struct {
		name string
		sc   scenario
	}{
		{"stdio", scenario{Transport: "stdio", Command: bin, Args: stdioArgs}},
		{"http", scenario{Transport: "http", URL: srv.url() + "/mcp"}},
		{"stdio one-shot", scenario{Transport: "stdio", Command: bin, Args: append(stdioArgs, "--store", rs.URL()), OneShot: true}},
		{"http one-shot", scenario{Transport: "http", URL: srv.url() + "/mcp", OneShot: true}},
		{"http stateless", scenario{Transport: "http", URL: stateless.url() + "/mcp"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := c.sc
			sc.Intent = "TypeScript SDK trial over " + c.name
			sc.Seeds = []seed{{"tracker", "Issue"}, {"kanban", "Issue"}}
			sc.Get, sc.Query, sc.Lists, sc.Bad = getProgram, queryProgram, listPrograms, badProgram
			sc.TimeoutMS = requestTimeout.Milliseconds()
			rep := runClient(t, node, dir, sc)
			checkClientReport(t, rep, want, sc.OneShot)
		})
	}
	// Each one-shot stdio process forgot its transport before it exited
	// (the regression TestEndTransportWaitsForRelease pins).
	if keys := redisKeys(t, rs.Addr(), "plasmd:transport:*"); len(keys) != 0 {
		t.Errorf("one-shot stdio processes left transports in Redis: %v", keys)
	}
}

// nodeClient finds node and the installed npm packages, or skips; under
// make test (PLASMD_REQUIRE_NODE) or in CI a missing one fails instead.
func nodeClient(t *testing.T) (node, dir string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "mcpclient"))
	if err != nil {
		t.Fatal(err)
	}
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") != "" || os.Getenv("PLASMD_REQUIRE_NODE") != "" {
			t.Fatalf(format+" (make test installs it)", args...)
		}
		t.Skipf(format+"; run make mcpclient to include this test", args...)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		missing("node is not installed: %v", err)
	}
	var pinned, installed struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON(t, filepath.Join(dir, "package.json"), &pinned)
	sdk := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	if _, err := os.Stat(sdk); err != nil {
		missing("the MCP SDK's npm packages are not installed in %s", dir)
	}
	readJSON(t, sdk, &installed)
	if want := pinned.Dependencies["@modelcontextprotocol/sdk"]; installed.Version != want {
		t.Fatalf("node_modules holds @modelcontextprotocol/sdk %s, package.json pins %s: run make mcpclient", installed.Version, want)
	}
	return node, dir
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func runClient(t *testing.T, node, dir string, sc scenario) clientReport {
	t.Helper()
	in, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clientDeadline)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = dir, bytes.NewReader(in), &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\nstderr (client and plasmd):\n%s", err, stderr.String())
	}
	var rep clientReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("client.mjs output: %v\n%.2000s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return rep
}

// checkClientReport compares what the client saw with the demo backend's
// answers.
func checkClientReport(t *testing.T, rep clientReport, want oracle, oneShot bool) {
	t.Helper()
	if oneShot && rep.Connections < 10 || !oneShot && rep.Connections != 1 {
		t.Errorf("client made %d connections (one-shot %v)", rep.Connections, oneShot)
	}
	if rep.Server.Name != "plasmd" || rep.Server.Version != server.Version {
		t.Errorf("server info %+v", rep.Server)
	}
	tools := map[string]map[string]any{}
	for _, tool := range rep.Tools {
		if !tool.OutputSchema {
			t.Errorf("tool %s has no output schema", tool.Name)
		}
		tools[tool.Name] = tool.Annotations
	}
	for _, name := range []string{"discover_capabilities", "plasm_context", "plasm"} {
		if a, ok := tools[name]; !ok || a["readOnlyHint"] != true {
			t.Errorf("tool %s: listed %v, annotations %v", name, ok, a)
		}
	}
	if a := tools["plasm_run"]; a["destructiveHint"] != true || a["openWorldHint"] != true {
		t.Errorf("tool plasm_run annotations %v", a)
	}
	templates := strings.Join(rep.ResourceTemplates, " ")
	if !strings.Contains(templates, "plasm://session/{ref}/teaching") || !strings.Contains(templates, "plasm://session/{ref}/r/{n}") {
		t.Errorf("resource templates %v", rep.ResourceTemplates)
	}
	c := rep.Context
	if c.IsError || c.Plasm.Ref == "" || !strings.HasPrefix(c.Text, "`"+c.Plasm.Ref+"`\n") || !strings.HasPrefix(c.Plasm.SessionHandle, "plasm_ls_") {
		t.Errorf("plasm_context: %+v", rep.Context)
	}
	if !strings.Contains(rep.Teaching, "tracker:Issue") || !strings.Contains(rep.Teaching, "kanban:Issue") {
		t.Errorf("teaching resource does not teach both Issue entities:\n%s", rep.Teaching)
	}
	sameRows(t, "get", oneRoot(t, "get", rep.Get), want.get)
	if len(rep.GetResource.Results) != 1 {
		t.Errorf("run resource of the get: %+v", rep.GetResource)
	} else {
		sameRows(t, "run resource of the get", rep.GetResource.Results[0].Rows, want.get)
	}
	sameRows(t, "query", oneRoot(t, "query", rep.Query), want.query)
	if len(rep.Lists) != len(want.lists) {
		t.Fatalf("client paged %d lists, want %d", len(rep.Lists), len(want.lists))
	}
	for i, l := range rep.Lists {
		if l.Plan.IsError || l.Plan.Plasm.Verdict != "review" || l.Plan.Plasm.PlanCommitRef == "" {
			t.Errorf("plasm %s: %+v", l.Program, l.Plan)
		}
		var all rows
		for p, page := range l.Pages {
			all = append(all, oneRoot(t, fmt.Sprintf("%s page %d", l.Program, p+1), page)...)
		}
		// Both lists are longer than the backends' default page of 20.
		if len(l.Pages) < 2 {
			t.Errorf("%s answered in %d page(s), want paging", l.Program, len(l.Pages))
		}
		sameRows(t, l.Program+" paged to the end", all, want.lists[i])
	}
	if e := rep.Bad.Error; !rep.Bad.IsError || e == nil || e.Line != 2 || e.Column != 5 || !strings.Contains(rep.Bad.Text, "2:5") {
		t.Errorf("bad program: want a tool error at 2:5, got %+v", rep.Bad)
	}
	sameRows(t, "get after the tool error", oneRoot(t, "get after the tool error", rep.AfterBad), want.get)
}

func oneRoot(t *testing.T, what string, r toolResult) rows {
	t.Helper()
	if r.IsError || len(r.Results) != 1 {
		t.Errorf("%s: want one result, got error %v, %d results: %s", what, r.IsError, len(r.Results), r.Text)
		return nil
	}
	return r.Results[0].Rows
}

func sameRows(t *testing.T, what string, got, want rows) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the oracle has no rows; the test would prove nothing", what)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: client saw %d rows, the backend holds %d\n got: %v\nwant: %v", what, len(got), len(want), got, want)
	}
}

// oracle is what the demo backend answers to the client's questions.
type oracle struct {
	get, query rows
	lists      []rows
}

// askDemoBackend asks a demo backend through its own HTTP API, in process,
// never through plasmd. Its data comes from the default seed, so it holds
// exactly the rows of the backend each plasmd --demo process starts (the
// client only reads).
func askDemoBackend(t *testing.T) oracle {
	t.Helper()
	b := demo.NewBackend(demo.Options{})
	call := func(method, path, body string) map[string]any {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+b.TrackerToken())
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		b.ServeHTTP(w, req)
		var v map[string]any
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &v) != nil {
			t.Fatalf("demo backend %s %s: %d %s", method, path, w.Code, w.Body.String())
		}
		return v
	}
	// wholeList is every item of a tracker list (one page of up to 100).
	wholeList := func(path string) []any {
		page := call(http.MethodGet, demo.TrackerPrefix+path, "")
		if page["has_more"] != false {
			t.Fatalf("demo backend %s has more than one page", path)
		}
		return page["items"].([]any)
	}
	var o oracle
	o.get = project([]any{call(http.MethodGet, demo.TrackerPrefix+"/issues/iss-7", "")}, "id", "title", "status", "priority")
	for _, it := range wholeList("/issues?status=open&limit=100") {
		if it.(map[string]any)["priority"].(float64) >= 3 {
			o.query = append(o.query, project([]any{it}, "id", "title", "priority")...)
		}
	}
	o.lists = append(o.lists, project(wholeList("/issues?limit=100"), "id", "title"))
	gql := call(http.MethodPost, demo.KanbanPath, `{"query":"{ issues(first: 100) { nodes { id title } pageInfo { hasNextPage } } }"}`)
	issues := gql["data"].(map[string]any)["issues"].(map[string]any)
	if issues["pageInfo"].(map[string]any)["hasNextPage"] != false {
		t.Fatal("demo backend has more than 100 kanban issues")
	}
	o.lists = append(o.lists, project(issues["nodes"].([]any), "id", "title"))
	return o
}

// project keeps fields of each item, as a program's [f, …] does.
func project(items []any, fields ...string) rows {
	out := make(rows, 0, len(items))
	for _, it := range items {
		m := it.(map[string]any)
		row := map[string]any{}
		for _, f := range fields {
			row[f] = m[f]
		}
		out = append(out, row)
	}
	return out
}

// redisKeys lists the keys matching pattern on the test's Redis.
func redisKeys(t *testing.T, addr, pattern string) []string {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	keys, err := rdb.Keys(ctx, pattern).Result()
	if err != nil {
		t.Fatalf("redis KEYS %s: %v", pattern, err)
	}
	return keys
}

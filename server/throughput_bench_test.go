package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// The mixed workload of issue 15's throughput target: 64 tenants, each
// with its own token and logical session, cycling a get, a filtered query
// over several pages and a relation hop. BenchmarkThroughputMixed runs it
// through plasmd over MCP; BenchmarkThroughputMixedDirect sends the same
// backend calls straight to the demo backend. Both check every answer and
// report runs/s/core, so their ratio is what plasmd costs per run.
const (
	mixTenants  = 64
	mixProject  = "prj-1"
	mixRows     = 100 // open issues in mixProject after mixSeed
	mixPageSize = 20  // the tracker catalog's fixed page size
	mixHopIssue = "iss-1"
)

// mixGets are the issues the get step cycles through.
var mixGets = []string{"iss-1", "iss-2", "iss-3", "iss-4", "iss-5", "iss-6", "iss-7", "iss-8"}

func mixToken(i int) string { return fmt.Sprintf("bench-token-%02d", i) }

// mixWant is what every answer is checked against, read from the backend
// before the benchmark starts.
type mixWant struct {
	titles   map[string]string // get: id → title
	open     map[string]bool   // query: the ids of open issues in mixProject
	comments []string          // hop: comment ids of mixHopIssue, in order
	calls    [3]int            // backend calls of get, query, hop
}

// direct is a tracker client straight to the demo backend.
type direct struct {
	base, token string
	client      *http.Client
}

func (d direct) getJSON(path string, v any) error {
	req, err := http.NewRequest(http.MethodGet, d.base+"/tracker/api/"+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return json.Unmarshal(body, v)
}

type trackerRow struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Status  string `json:"status"`
	IssueID string `json:"issue_id"`
}

type trackerPage struct {
	Items   []trackerRow `json:"items"`
	HasMore bool         `json:"has_more"`
}

// list reads every page of a tracker list the way the catalog paginates it
// (offset step 20, stop when has_more is false) and returns rows and calls.
func (d direct) list(path string) ([]trackerRow, int, error) {
	var rows []trackerRow
	for calls := 1; ; calls++ {
		var p trackerPage
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		if err := d.getJSON(fmt.Sprintf("%s%soffset=%d&limit=%d", path, sep, (calls-1)*mixPageSize, mixPageSize), &p); err != nil {
			return nil, calls, err
		}
		rows = append(rows, p.Items...)
		if !p.HasMore {
			return rows, calls, nil
		}
	}
}

// mixSeed tops the project up to mixRows open issues and reads the answers.
func mixSeed(tb testing.TB, d direct) *mixWant {
	tb.Helper()
	query := "issues?project_id=" + mixProject + "&status=open"
	rows, _, err := d.list(query)
	if err != nil {
		tb.Fatal(err)
	}
	for i := len(rows); i < mixRows; i++ {
		body := fmt.Sprintf(`{"title":"Throughput bench issue %d","project_id":%q,"priority":3}`, i, mixProject)
		req, _ := http.NewRequest(http.MethodPost, d.base+"/tracker/api/issues", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+d.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := d.client.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
			tb.Fatalf("create issue: %d", resp.StatusCode)
		}
	}
	w := &mixWant{titles: map[string]string{}, open: map[string]bool{}}
	if rows, w.calls[1], err = d.list(query); err != nil || len(rows) != mixRows {
		tb.Fatalf("query: %d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		w.open[r.ID] = true
	}
	for _, id := range mixGets {
		var r trackerRow
		if err := d.getJSON("issues/"+id, &r); err != nil {
			tb.Fatal(err)
		}
		w.titles[id] = r.Title
	}
	w.calls[0] = 1
	cs, n, err := d.list("comments?issue_id=" + mixHopIssue)
	if err != nil || len(cs) == 0 {
		tb.Fatalf("comments of %s: %d, %v", mixHopIssue, len(cs), err)
	}
	// plasmd reads the issue before its comments (the hop starts from a
	// get); the direct workload makes the same two reads.
	w.calls[2] = 1 + n
	for _, c := range cs {
		w.comments = append(w.comments, c.ID)
	}
	return w
}

// mixDirect is one step of the workload sent straight to the backend.
func mixDirect(d direct, w *mixWant, step int) error {
	switch step % 3 {
	case 0:
		id := mixGets[(step/3)%len(mixGets)]
		var r trackerRow
		if err := d.getJSON("issues/"+id, &r); err != nil {
			return err
		}
		if r.Title != w.titles[id] {
			return fmt.Errorf("get %s: title %q", id, r.Title)
		}
	case 1:
		rows, _, err := d.list("issues?project_id=" + mixProject + "&status=open")
		if err != nil {
			return err
		}
		if err := checkOpen(w, len(rows), func(i int) (string, string) { return rows[i].ID, rows[i].Status }); err != nil {
			return err
		}
	default:
		var from trackerRow
		if err := d.getJSON("issues/"+mixHopIssue, &from); err != nil {
			return err
		}
		rows, _, err := d.list("comments?issue_id=" + from.ID)
		if err != nil {
			return err
		}
		if err := checkComments(w, len(rows), func(i int) (string, string) { return rows[i].ID, rows[i].IssueID }); err != nil {
			return err
		}
	}
	return nil
}

func checkOpen(w *mixWant, n int, row func(int) (id, status string)) error {
	if n != mixRows {
		return fmt.Errorf("query: %d rows, want %d", n, mixRows)
	}
	for i := range n {
		if id, st := row(i); !w.open[id] || st != "open" {
			return fmt.Errorf("query row %d: %s %s", i, id, st)
		}
	}
	return nil
}

func checkComments(w *mixWant, n int, row func(int) (id, issue string)) error {
	if n != len(w.comments) {
		return fmt.Errorf("hop: %d comments, want %d", n, len(w.comments))
	}
	for i := range n {
		if id, iss := row(i); id != w.comments[i] || iss != mixHopIssue {
			return fmt.Errorf("hop row %d: %s of %s, want %s", i, id, iss, w.comments[i])
		}
	}
	return nil
}

// mixPrograms are the workload's runs, in the order mixDirect's steps.
func mixProgram(step int) string {
	switch step % 3 {
	case 0:
		return `Issue("` + mixGets[(step/3)%len(mixGets)] + `")[id,title]`
	case 1:
		return `Issue{project_id="` + mixProject + `", status="open"}.limit(` + strconv.Itoa(mixRows) + `)[id,status]`
	default:
		return `Issue("` + mixHopIssue + `").comments[id,issue_id]`
	}
}

// mixRoot is the one result root of a run, as structuredContent carries it.
type mixRoot struct {
	Rows []map[string]any `json:"rows"`
}

// mixRun runs one step through plasmd and checks the answer; calls is the
// number of backend calls the run reported.
func mixRun(ctx context.Context, cs *mcp.ClientSession, w *mixWant, step int) (calls int, err error) {
	// force: the hop's unbounded read would otherwise stop at the plan
	// review gate, which is not what this benchmark measures.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "plasm_run", Arguments: map[string]any{"logical_session_ref": "s0", "program": mixProgram(step), "force": true}})
	if err != nil {
		return 0, err
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Results []mixRoot `json:"results"`
	}
	if res.IsError || json.Unmarshal(raw, &out) != nil || len(out.Results) != 1 {
		return 0, fmt.Errorf("run %q: error %v: %s", mixProgram(step), res.IsError, raw)
	}
	if p, ok := res.Meta["plasm"].(map[string]any); ok {
		steps, _ := p["steps"].([]any)
		for _, s := range steps {
			n, _ := s.(map[string]any)["calls"].(float64)
			calls += int(n)
		}
	}
	rows := out.Results[0].Rows
	str := func(i int, k string) string { s, _ := rows[i][k].(string); return s }
	switch step % 3 {
	case 0:
		id := mixGets[(step/3)%len(mixGets)]
		if len(rows) != 1 || str(0, "id") != id || str(0, "title") != w.titles[id] {
			return calls, fmt.Errorf("get %s: %v", id, rows)
		}
	case 1:
		err = checkOpen(w, len(rows), func(i int) (string, string) { return str(i, "id"), str(i, "status") })
	default:
		err = checkComments(w, len(rows), func(i int) (string, string) { return str(i, "id"), str(i, "issue_id") })
	}
	return calls, err
}

// mixServer serves plasmd with auth on: mixTenants tenants from a tenants
// file built here, each with its own token and the demo's secrets.
func mixServer(b *testing.B) *fixture {
	return newFixtureFor(b, func(backend *demo.Server) server.Config {
		var sb strings.Builder
		sb.WriteString("tenants:\n")
		for i := range mixTenants {
			sb.WriteString("  - id: t" + strconv.Itoa(i) + "\n    token_sha256: [" + tenant.Digest(mixToken(i)) + "]\n    secrets:\n")
			for k, v := range backend.Backend().Secrets() {
				sb.WriteString("      " + k + ": {value: " + strconv.Quote(v) + ", catalogs: [" + strings.Join(demo.SecretCatalogs()[k], ", ") + "]}\n")
			}
		}
		set, err := tenant.Parse([]byte(sb.String()))
		if err != nil {
			b.Fatalf("tenants file: %v", err)
		}
		return server.Config{Tenants: set}
	})
}

// mixClient connects to plasmd's MCP endpoint as one tenant.
func mixClient(b *testing.B, f *fixture, tr http.RoundTripper, token string) *mcp.ClientSession {
	b.Helper()
	hc := &http.Client{Transport: bearer{token: token, next: tr}}
	c := mcp.NewClient(&mcp.Implementation{Name: "throughput-bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.srv.URL + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// reportRuns reports runs/s/core over the timed part of a benchmark (wall
// time times GOMAXPROCS) and runs per CPU-second the whole process used
// (client, plasmd and backend alike, in both benchmarks): on a loaded
// machine the second is the steadier figure.
func reportRuns(b *testing.B, runs int64, start time.Time, cpu0 time.Duration) {
	b.ReportMetric(float64(runs)/time.Since(start).Seconds()/float64(runtime.GOMAXPROCS(0)), "runs/s/core")
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(runs)/cpu.Seconds(), "runs/cpu-s")
	}
}

// BenchmarkThroughputMixed: one op is one run (get, filtered 100-row query
// over 5 pages, or hop) by one of 64 tenants over MCP, each tenant on its
// own connection and logical session, as many in flight as RunParallel
// starts goroutines (SetParallelism spreads them over the tenants).
func BenchmarkThroughputMixed(b *testing.B) {
	f := mixServer(b)
	d := direct{base: f.backend.URL(), token: f.backend.Backend().TrackerToken(), client: &http.Client{}}
	w := mixSeed(b, d)
	ctx := context.Background()
	// One pool for all clients, sized like the direct benchmark's, so
	// neither side pays for new connections.
	tr := &http.Transport{MaxIdleConnsPerHost: 2 * mixTenants}
	b.Cleanup(tr.CloseIdleConnections)
	sessions := make([]*mcp.ClientSession, mixTenants)
	for i := range sessions {
		sessions[i] = mixClient(b, f, tr, mixToken(i))
		if o := contextCall(b, sessions[i], "bench the mixed workload", "tracker:Issue"); !strings.HasPrefix(o.text, "`s0`") {
			b.Fatalf("tenant %d: context %q", i, o.text[:min(len(o.text), 80)])
		}
		// Warm each tenant (instance, catalogs, plans) and check that a run
		// makes the backend calls the direct benchmark makes.
		for step := range 3 {
			calls, err := mixRun(ctx, sessions[i], w, step)
			if err != nil {
				b.Fatal(err)
			}
			if calls != w.calls[step] {
				b.Fatalf("step %d: plasmd made %d backend calls, the direct workload %d", step, calls, w.calls[step])
			}
		}
	}
	var next, runs atomic.Int64
	var failed atomic.Pointer[error]
	b.SetParallelism(mixTenants / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPU()
	b.RunParallel(func(pb *testing.PB) {
		me := int(next.Add(1)-1) % mixTenants
		cs := sessions[me]
		for step := me; pb.Next(); step++ {
			if _, err := mixRun(ctx, cs, w, step); err != nil {
				failed.CompareAndSwap(nil, &err)
				return
			}
			runs.Add(1)
		}
	})
	reportRuns(b, runs.Load(), start, cpu0)
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
}

// BenchmarkThroughputMixedDirect is the same workload's backend calls sent
// straight to the demo backend, with the same checks and concurrency.
func BenchmarkThroughputMixedDirect(b *testing.B) {
	f := mixServer(b)
	d := direct{base: f.backend.URL(), token: f.backend.Backend().TrackerToken(), client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: mixTenants}}}
	w := mixSeed(b, d)
	var next, runs atomic.Int64
	var failed atomic.Pointer[error]
	b.SetParallelism(mixTenants / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPU()
	b.RunParallel(func(pb *testing.PB) {
		me := int(next.Add(1)-1) % mixTenants
		for step := me; pb.Next(); step++ {
			if err := mixDirect(d, w, step); err != nil {
				failed.CompareAndSwap(nil, &err)
				return
			}
			runs.Add(1)
		}
	})
	reportRuns(b, runs.Load(), start, cpu0)
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
}

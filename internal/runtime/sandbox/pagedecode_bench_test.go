package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
)

// pageDomain and pageMappings describe a list API whose body is a bare
// array of issues: the shape encoding/json decodes into []map[string]any
// directly, so the sandboxed decoder and the native baseline read the same
// bytes and do the same job (find the rows, read every field).
const pageDomain = `version: 1
description: Generated issue list for decode benchmarks
http_backend: https://pages.example.com/api
values:
  id: {type: string, string_semantics: short}
  number: {type: integer}
  text: {type: string, string_semantics: short}
  markdown: {type: string, string_semantics: markdown}
  state: {type: select, allowed_values: [open, in_progress, closed]}
  labels: {type: array, items: {value_ref: text}}
  score: {type: number}
  flag: {type: boolean}
  timestamp: {type: date, value_format: rfc3339}
entities:
  Issue:
    id_field: id
    fields:
      id: {value_ref: id, required: true}
      number: {value_ref: number}
      title: {value_ref: text, required: true}
      body: {value_ref: markdown}
      status: {value_ref: state}
      priority: {value_ref: number}
      assignee: {value_ref: text, path: [assignee, login]}
      labels: {value_ref: labels}
      score: {value_ref: score}
      locked: {value_ref: flag}
      created_at: {value_ref: timestamp}
capabilities:
  issue_list:
    kind: query
    entity: Issue
    description: Every issue, one page
    provides: [id, number, title, body, status, priority, assignee, labels, score, locked, created_at]
`

const pageMappings = `issue_list:
  method: GET
  path: [{type: literal, value: issues}]
  response: bare_list
`

// pageCatalog loads the benchmark catalog through the real loader.
func pageCatalog(tb testing.TB) *catalog.Catalog {
	tb.Helper()
	fsys := fstest.MapFS{
		"pages/domain.yaml":   {Data: []byte(pageDomain)},
		"pages/mappings.yaml": {Data: []byte(pageMappings)},
	}
	cat, err := catalogdir.Load(fsys, "pages", "pages")
	if err != nil {
		tb.Fatal(err)
	}
	return cat
}

var pageWords = strings.Fields(`the build fails when a session expires during upload and the retry
loop never backs off so the queue grows until the worker is killed by the
kernel; steps to reproduce: open the dashboard, start a long export, wait
for the token to lapse, then watch the logs for "unauthorized" followed by
a panic in the encoder with a nil map`)

// pageBody generates n issues as a bare JSON array, each about perRow
// bytes, from a fixed seed: the same bytes on every run and machine.
func pageBody(n, perRow int) []byte {
	r := rand.New(rand.NewPCG(15, 1000))
	states := []string{"open", "in_progress", "closed"}
	rows := make([]map[string]any, n)
	for i := range rows {
		var body strings.Builder
		for body.Len() < perRow-240 {
			body.WriteString(pageWords[r.IntN(len(pageWords))])
			body.WriteByte(' ')
		}
		rows[i] = map[string]any{
			"id": fmt.Sprintf("iss-%d", i+1), "number": i + 1,
			"title":    fmt.Sprintf("Issue %d: %s %s", i+1, pageWords[r.IntN(len(pageWords))], pageWords[r.IntN(len(pageWords))]),
			"body":     body.String(),
			"status":   states[r.IntN(len(states))],
			"priority": 1 + r.IntN(4),
			"assignee": map[string]any{"login": fmt.Sprintf("user%d", r.IntN(40)), "id": r.IntN(1000)},
			"labels":   []string{"bug", pageWords[r.IntN(len(pageWords))]},
			"score":    float64(r.IntN(100000)) / 100,
			"locked":   r.IntN(2) == 0,
			"created_at": fmt.Sprintf("2026-%02d-%02dT%02d:%02d:00Z",
				1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60)),
		}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		panic(err) // maps of strings and numbers always encode
	}
	return b
}

// pageRows and pageRowBytes make the page issue 15 sets its decode target
// on: 1,000 rows, about 1 MB.
const (
	pageRows     = 1000
	pageRowBytes = 1000
)

// pageEngine is a warm engine client with the page catalog loaded.
func pageEngine(tb testing.TB, h *Host, m *Module) (*Engine, *catalog.Catalog) {
	tb.Helper()
	cat := pageCatalog(tb)
	eng := NewEngine(h.Tenant("pages", TenantSpec{Module: m, Loads: CatalogLoads([]*catalog.Catalog{cat}), Limits: patientPageLimits()}))
	tb.Cleanup(eng.Close)
	return eng, cat
}

// patientPageLimits leave room for a 1 MB page on a loaded machine: the
// benchmark measures speed, it does not test deadlines.
// In-guest decoding builds the whole page's document in guest memory, so
// it gets more than the default too.
func patientPageLimits() Limits {
	l := DefaultLimits()
	l.CallTimeout = 10 * l.CallTimeout
	l.MemoryBytes = 256 << 20
	return l
}

// reportCPU reports process CPU per op since c0 and, for byte-sized ops,
// megabytes decoded per CPU-second: figures a loaded machine moves far
// less than wall time.
func reportCPU(b *testing.B, c0 time.Duration, bytes int) {
	cpu := processCPU() - c0
	if cpu <= 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	if bytes > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

var pageReq = &abi.DecodeRequest{EntryID: "pages", Capability: "issue_list", Status: 200}

// checkPage compares a decoded table with encoding/json's reading of the
// same body: every row, every column the catalog provides.
func checkPage(tb testing.TB, got *abi.DecodeResponse, body []byte) {
	tb.Helper()
	var want []map[string]any
	if err := json.Unmarshal(body, &want); err != nil {
		tb.Fatal(err)
	}
	if len(got.Table.Rows) != len(want) {
		tb.Fatalf("decoded %d rows, want %d", len(got.Table.Rows), len(want))
	}
	col := map[string]int{}
	for i, c := range got.Table.Columns {
		col[c] = i
	}
	for _, name := range []string{"id", "title", "body", "status", "assignee"} {
		if _, ok := col[name]; !ok {
			tb.Fatalf("no column %q in %v", name, got.Table.Columns)
		}
	}
	for i, w := range want {
		row := got.Table.Rows[i]
		for _, name := range []string{"id", "title", "body", "status"} {
			if fmt.Sprint(row[col[name]]) != fmt.Sprint(w[name]) {
				tb.Fatalf("row %d %s: %v, want %v", i, name, row[col[name]], w[name])
			}
		}
		if login := w["assignee"].(map[string]any)["login"]; fmt.Sprint(row[col["assignee"]]) != fmt.Sprint(login) {
			tb.Fatalf("row %d assignee: %v, want %v", i, row[col["assignee"]], login)
		}
	}
}

// TestPageDecodeMatchesJSON proves the benchmark page is what it claims
// (1,000 rows, about 1 MB) and that the sandbox decodes it exactly as
// encoding/json reads it, so the benchmarks below compare equal work.
func TestPageDecodeMatchesJSON(t *testing.T) {
	body := pageBody(pageRows, pageRowBytes)
	if n := len(body); n < 900_000 || n > 1_100_000 {
		t.Fatalf("page is %d bytes, want about 1 MB", n)
	}
	eng, _ := pageEngine(t, testHost, testEngine)
	out, err := eng.Decode(context.Background(), pageReq, body)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, out, body)
}

// BenchmarkDecodePage decodes the same 1 MB, 1,000-row page three ways in
// one run: through the engine client (sandbox.Engine.Decode: the spec the
// guest compiled once, applied natively by the host), entirely inside the
// guest (DecodeInGuest: native tokenising, the guest applying the same
// spec, the table copied out), and with encoding/json into
// []map[string]any, the baseline issue 15 sets its target against.
func BenchmarkDecodePage(b *testing.B) {
	body := pageBody(pageRows, pageRowBytes)
	ctx := context.Background()
	eng, _ := pageEngine(b, testHost, testEngine)
	out, err := eng.Decode(ctx, pageReq, body)
	if err != nil {
		b.Fatal(err)
	}
	checkPage(b, out, body)

	b.Run("sandbox", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		c0 := processCPU()
		for b.Loop() {
			out, err := eng.Decode(ctx, pageReq, body)
			if err != nil || len(out.Table.Rows) != pageRows {
				b.Fatal(err)
			}
		}
		reportCPU(b, c0, len(body))
	})
	b.Run("in-guest", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		c0 := processCPU()
		for b.Loop() {
			out, err := eng.DecodeInGuest(ctx, pageReq, body)
			if err != nil || len(out.Table.Rows) != pageRows {
				b.Fatal(err)
			}
		}
		reportCPU(b, c0, len(body))
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		c0 := processCPU()
		for b.Loop() {
			var rows []map[string]any
			if err := json.Unmarshal(body, &rows); err != nil || len(rows) != pageRows {
				b.Fatal(err)
			}
		}
		reportCPU(b, c0, len(body))
	})
}

package refbackend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/refbackend"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/sandbox/sandboxtest"
	"github.com/plasmd/plasmd/server"
)

// seed fixes the data set and the generated programs; every failure names
// the program, so a failing case can be pinned as a regression test.
const seed = 8

// backendCase is one catalog over one reference server.
type backendCase struct {
	entry, style string
	pageSize     int // rows per page the server answers
	ask          int // page size the catalog asks for (0: pageSize)
}

// endsOnEmptyPage reports whether entry's backend gives no sign that a
// page is the last but the empty page after it, so a handle may lead to
// that empty page.
func endsOnEmptyPage(entry string) bool {
	for _, c := range cases {
		if c.entry == entry {
			return c.style == refbackend.StyleSparse
		}
	}
	return false
}

// shortest is the fewest rows a full page of c's server holds before the
// list ends, for bounding the pages a program needs.
func (c backendCase) shortest() int {
	if c.style == refbackend.StyleSparse {
		_, half := refbackend.SparsePage(2, c.pageSize)
		return half
	}
	return c.pageSize
}

// cases cover every pagination style with page sizes that do not divide
// the list lengths evenly (and one that does), plus a one-row-per-page
// backend whose long lists exceed the default run budget.
var cases = []backendCase{
	{"blog_offset", refbackend.StyleOffset, 7, 0},
	{"blog_page", refbackend.StylePage, 10, 0},
	{"blog_cursor", refbackend.StyleCursor, 5, 0},
	{"blog_link", refbackend.StyleLink, 4, 0},
	{"blog_nexturl", refbackend.StyleNextURL, 9, 0},
	{"blog_graphql", refbackend.StyleGraphQL, 6, 0},
	{"blog_tiny", refbackend.StyleOffset, 1, 0},
	// Asks for 20 rows a page, gets 5: the cursor, not the short page,
	// says when the list ends.
	{"blog_capped", refbackend.StyleCursor, 5, 20},
	// Pages of 6 and 3 rows in turn, no page-size parameter, and a Link
	// header that names no other page: only an empty page ends a list.
	{"blog_sparse", refbackend.StyleSparse, 6, 0},
}

// budgetPages is the run budget's default page count (executor.DefaultBudget).
const budgetPages = 250

type env struct {
	data     *refbackend.Data
	srv      *httptest.Server
	backends map[string]*refbackend.Server
	sessions map[string]string // entry → execute path
}

// testCacheDir shares compiled engine modules with the server tests.
func testCacheDir() string { return sandboxtest.CacheDir() }

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{data: refbackend.Generate(seed), backends: map[string]*refbackend.Server{}, sessions: map[string]string{}}
	dir := t.TempDir()
	var cats []*catalog.Catalog
	for _, c := range cases {
		b := refbackend.New(e.data, c.pageSize)
		hs := httptest.NewServer(b)
		t.Cleanup(hs.Close)
		e.backends[c.entry] = b
		ask := c.ask
		if ask == 0 {
			ask = c.pageSize
		}
		p, err := refbackend.WriteCatalog(dir, c.entry, c.style, hs.URL, ask)
		if err != nil {
			t.Fatal(err)
		}
		cat, err := catalogdir.LoadPath(p)
		if err != nil {
			t.Fatalf("catalog %s: %v", c.entry, err)
		}
		cats = append(cats, cat)
	}
	// Retries of 429/503 wait a millisecond, not the backend's Retry-After.
	cfg := server.Config{CacheDir: testCacheDir(), Egress: egress.Limits{MaxRetryWait: time.Millisecond}, Limits: patientLimits()}
	app, err := server.New(context.Background(), cfg, cats)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		e.srv.Close()
		app.Close(context.Background())
	})
	for _, c := range cases {
		b, _ := json.Marshal(map[string]any{"entry_id": c.entry, "entities": []string{"Author", "Post", "Comment"}})
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Post(e.srv.URL+"/execute", "application/json", strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("open %s: %d", c.entry, resp.StatusCode)
		}
		e.sessions[c.entry] = resp.Header.Get("Location")
	}
	return e
}

// patientLimits are the default sandbox limits with deadlines no loaded
// CI machine reaches: these tests are about answers, not speed.
func patientLimits() server.Limits {
	l := server.DefaultLimits()
	l.CallTimeout = time.Minute
	l.QueueTimeout = time.Minute
	return l
}

// answer is one run's outcome: the first root's rows and handle, or a
// problem.
type answer struct {
	header  http.Header
	rows    []map[string]any
	handle  string
	status  int
	problem map[string]any
}

func (e *env) run(t testing.TB, entry, program string) answer {
	t.Helper()
	// The differential test compares answers, not review gating: every
	// program runs as a reviewed one would (?force=true).
	req, _ := http.NewRequest("POST", e.srv.URL+e.sessions[entry]+"?force=true", strings.NewReader(program))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode != http.StatusOK {
		if err := json.Unmarshal(body, &a.problem); err != nil {
			t.Fatalf("%s: %s: status %d, body not JSON: %s", entry, program, resp.StatusCode, body)
		}
		return a
	}
	var out struct {
		Results []struct {
			Rows       []map[string]any `json:"rows"`
			PageHandle string           `json:"page_handle"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &out); err != nil || len(out.Results) == 0 {
		t.Fatalf("%s: %s: %v: %s", entry, program, err, body)
	}
	a.rows, a.handle = out.Results[0].Rows, out.Results[0].PageHandle
	if a.rows == nil {
		a.rows = []map[string]any{}
	}
	return a
}

func (a answer) problemType() string {
	s, _ := a.problem["type"].(string)
	return s[strings.LastIndexByte(s, '/')+1:]
}

// pages follows a paged answer through every handle, sometimes with
// page(h, limit=k), and returns all rows.
func (e *env) pages(t testing.TB, r *rand.Rand, entry, program string, first answer) []map[string]any {
	t.Helper()
	all := append([]map[string]any(nil), first.rows...)
	h := first.handle
	for n := 0; h != ""; n++ {
		if n > 400 {
			t.Fatalf("%s: %s: handles never end", entry, program)
		}
		call := "page(" + h + ")"
		if r.IntN(3) == 0 {
			call = fmt.Sprintf("page(%s, limit=%d)", h, 1+r.IntN(12))
		}
		a := e.run(t, entry, call)
		if a.status != http.StatusOK {
			t.Fatalf("%s: %s then %s: %d %v", entry, program, call, a.status, a.problem)
		}
		if len(a.rows) == 0 && a.handle == "" && endsOnEmptyPage(entry) {
			break // the backend says a list ended only by an empty page
		}
		if len(a.rows) == 0 {
			t.Fatalf("%s: %s: handle %s led to an empty page (a handle only when the backend indicated more rows)", entry, program, h)
		}
		all = append(all, a.rows...)
		h = a.handle
	}
	return all
}

// normal is v through JSON, so oracle rows and wire rows compare alike.
func normal(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	if out == nil {
		return []any{} // no rows, however the side spelled it
	}
	return out
}

// programCount is how many programs the differential test runs per
// backend case; PLASMD_DIFF_PROGRAMS overrides it (make diff runs more).
func programCount(t testing.TB) int {
	n := 60
	if testing.Short() || raceEnabled {
		n = 15
	}
	if s := os.Getenv("PLASMD_DIFF_PROGRAMS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("PLASMD_DIFF_PROGRAMS=%q", s)
		}
		n = max(v/len(cases), 1)
	}
	return n
}

// TestDifferential runs generated programs through plasmd against every
// backend case and compares each answer with the oracle's: equal rows in
// equal order, or a run-budget refusal when the program may need more
// pages than the budget allows (and only then).
func TestDifferential(t *testing.T) {
	e := newEnv(t)
	n := programCount(t)
	for _, c := range cases {
		t.Run(c.entry, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(len(c.entry))*7919+uint64(c.pageSize)))
			refused, paged := 0, 0
			for i := 0; i < n; i++ {
				p := refbackend.GenerateProgram(r, e.data)
				e.check(t, r, c, p, &refused, &paged)
				if t.Failed() {
					return
				}
			}
			t.Logf("%d programs, %d paged through handles, %d refused by the budget", n, paged, refused)
		})
	}
}

func (e *env) check(t *testing.T, r *rand.Rand, c backendCase, p refbackend.Program, refused, paged *int) {
	t.Helper()
	prog := p.String()
	want := normal(e.data.Answer(p))
	a := e.run(t, c.entry, prog)
	if a.status != http.StatusOK {
		maxPages := e.data.MaxPages(p, c.shortest())
		if a.problemType() == "run-budget" && a.status == http.StatusUnprocessableEntity && maxPages > budgetPages {
			*refused++
			return
		}
		t.Errorf("%s: %s: %d %v (at most %d pages needed)", c.entry, prog, a.status, a.problem, maxPages)
		return
	}
	got := a.rows
	if p.Paged() {
		*paged++
		got = e.pages(t, r, c.entry, prog, a)
	} else if a.handle != "" {
		t.Errorf("%s: %s: a whole-list answer offered handle %s", c.entry, prog, a.handle)
	}
	if g := normal(got); !reflect.DeepEqual(g, want) {
		t.Errorf("%s: %s:\n got  %d rows %v\n want %d rows %v", c.entry, prog, len(got), short(g), len(e.data.Answer(p)), short(want))
	}
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

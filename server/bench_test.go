package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/lang"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/teaching"
)

// benchProgram is the 3-line program both plan benchmarks use: a bound
// query, a relation hop over it, and two projected roots.
const benchProgram = `a = Issue{status="open"}.limit(5)
b = a.comments[id,body]
b, a[id,title]`

// planRequest builds the request a session would send: the program plus
// the symbol map taught for tracker:Issue.
func planRequest(b *testing.B) (*abi.PlanRequest, []*catalog.Catalog) {
	cats, err := demo.LoadCatalogs("http://127.0.0.1:1")
	if err != nil {
		b.Fatal(err)
	}
	byID := map[string]*catalog.Catalog{}
	for _, c := range cats {
		byID[c.EntryID] = c
	}
	var m symbol.Map
	w, err := teaching.Expose(&m, teaching.Exposure{}, teaching.Request{Catalogs: byID, Seeds: []teaching.Seed{{EntryID: "tracker", Entity: "Issue"}}})
	if err != nil {
		b.Fatal(err)
	}
	return &abi.PlanRequest{Program: benchProgram, Symbols: &m, Entries: w.Exposure.Entries()}, cats
}

// BenchmarkPlanNative plans benchProgram by calling the planner directly,
// over catalogs frozen as the engine freezes them once installed.
func BenchmarkPlanNative(b *testing.B) {
	req, cats := planRequest(b)
	byID := map[string]*catalog.Catalog{}
	for _, c := range cats {
		mustFreeze(b, c)
		byID[c.EntryID] = c
	}
	b.ReportAllocs()
	c0 := processCPU()
	for b.Loop() {
		if _, err := lang.Plan(req, byID); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, c0)
}

// BenchmarkPlanNativeScratch is BenchmarkPlanNative through one reused
// lang.Scratch, as the engine inside the sandbox plans: the native twin of
// the guest's code path, allocations included.
func BenchmarkPlanNativeScratch(b *testing.B) {
	req, cats := planRequest(b)
	byID := map[string]*catalog.Catalog{}
	for _, c := range cats {
		mustFreeze(b, c)
		byID[c.EntryID] = c
	}
	var s lang.Scratch
	b.ReportAllocs()
	c0 := processCPU()
	for b.Loop() {
		if _, err := s.Plan(req, byID); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, c0)
}

// BenchmarkPlanSandboxed plans the same program through a warm tenant
// sandbox: request encoding, the Wasm call, and plan decoding included.
func BenchmarkPlanSandboxed(b *testing.B) {
	req, cats := planRequest(b)
	ctx := context.Background()
	tn := benchEngine(b, cats)
	if _, err := tn.Plan(ctx, req); err != nil { // warm: instance created, catalogs loaded
		b.Fatal(err)
	}
	b.ReportAllocs()
	c0 := processCPU()
	for b.Loop() {
		if _, err := tn.Plan(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, c0)
}

// BenchmarkPlanSandboxedSession is BenchmarkPlanSandboxed the way a
// session plans (core.Service): the symbol map is encoded and digested
// once per symbol revision and reused (PlanWith), where Plan encodes it on
// every call.
func BenchmarkPlanSandboxedSession(b *testing.B) {
	req, cats := planRequest(b)
	plan := sessionPlanner(b, req, cats)
	b.ReportAllocs()
	c0 := processCPU()
	for b.Loop() {
		if err := plan(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, c0)
}

// sessionPlanner returns a call planning req in a warm sandbox tenant the
// way a session does: the symbol map encoded once and named by digest.
func sessionPlanner(b *testing.B, req *abi.PlanRequest, cats []*catalog.Catalog) func() error {
	return sessionPlannerOf(b, req, cats, enginewasm.Module())
}

// sessionPlannerOf is sessionPlanner running the engine module wasm.
func sessionPlannerOf(b *testing.B, req *abi.PlanRequest, cats []*catalog.Catalog, wasm []byte) func() error {
	ctx := context.Background()
	tn := benchEngineOf(b, cats, wasm)
	sym, err := sandbox.EncodeSymbols(req.Symbols)
	if err != nil {
		b.Fatal(err)
	}
	bare := &abi.PlanRequest{Program: req.Program, Entries: req.Entries}
	plan := func() error { _, err := tn.PlanWith(ctx, bare, sym); return err }
	if err := plan(); err != nil { // warm: instance created, catalogs and map loaded
		b.Fatal(err)
	}
	return plan
}

// benchEngine is a tenant of a host of its own running the embedded
// engine as the server loads it (enginewasm.Module: data merged, short
// bulk copies inlined) over cats, closed when the benchmark ends.
func benchEngine(b *testing.B, cats []*catalog.Catalog) *sandbox.Engine {
	return benchEngineOf(b, cats, enginewasm.Module())
}

// benchEngineOf is benchEngine running the engine module wasm.
func benchEngineOf(b *testing.B, cats []*catalog.Catalog, wasm []byte) *sandbox.Engine {
	ctx := context.Background()
	// Every variant of the engine a benchmark compares runs metered, as
	// the server runs its own engine, whether or not its digest is the
	// embedded one's.
	trust := func(string) bool { return true }
	host, err := sandbox.New(ctx, sandbox.Config{CacheDir: testCacheDir(), Meter: trust})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { host.Close(ctx) })
	mod, err := host.Module(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	return sandbox.NewEngine(host.Tenant("bench", sandbox.TenantSpec{Module: mod, Loads: sandbox.CatalogLoads(cats), Limits: sandbox.DefaultLimits()}))
}

// BenchmarkPlanInterleaved plans benchProgram three ways in every
// iteration, back to back: natively (one-off lang.Plan), natively through
// a reused lang.Scratch (the guest's own code path), and in the sandbox
// the way a session plans (PlanWith). The separate benchmarks above run
// minutes apart, and on a shared machine their ratio moves with whatever
// else runs; here the three see the same moment, and the reported figures
// are medians of per-iteration wall times and of per-iteration ratios, so
// a burst of load shifts all three together rather than the ratio.
// ns/op is the three plans together; read the µs and x- metrics.
func BenchmarkPlanInterleaved(b *testing.B) {
	req, cats := planRequest(b)
	plan := sessionPlanner(b, req, cats)
	byID := map[string]*catalog.Catalog{}
	for _, c := range cats {
		mustFreeze(b, c)
		byID[c.EntryID] = c
	}
	var s lang.Scratch
	timed := func(f func() error) time.Duration {
		t0 := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var native, scratch, boxed, xNative, xScratch []float64
	for b.Loop() {
		// lang's planners return *abi.Error: test it before it becomes an error.
		n := timed(func() error {
			if _, err := lang.Plan(req, byID); err != nil {
				return err
			}
			return nil
		})
		sc := timed(func() error {
			if _, err := s.Plan(req, byID); err != nil {
				return err
			}
			return nil
		})
		sb := timed(plan)
		native, scratch, boxed = append(native, n.Seconds()), append(scratch, sc.Seconds()), append(boxed, sb.Seconds())
		xNative, xScratch = append(xNative, float64(sb)/float64(n)), append(xScratch, float64(sb)/float64(sc))
	}
	b.ReportMetric(median(native)*1e6, "native-µs")
	b.ReportMetric(median(scratch)*1e6, "scratch-µs")
	b.ReportMetric(median(boxed)*1e6, "sandbox-µs")
	b.ReportMetric(median(xNative), "x-native")
	b.ReportMetric(median(xScratch), "x-scratch")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// BenchmarkRunGet is an HTTP run of a get through plasmd (plan in the
// sandbox, request compiled and response decoded in the sandbox, egress,
// Markdown rendering). BenchmarkDirectGet is the same read sent straight to
// the demo backend: the ratio is plasmd's cost over the API call itself.
func BenchmarkRunGet(b *testing.B) {
	f := newFixture(b, server.Config{})
	path := f.open(b, "tracker", "Issue")
	client := &http.Client{}
	runURL := f.srv.URL + path
	loopOK(b, func() (*http.Response, error) {
		return client.Post(runURL, "text/plain", strings.NewReader(`Issue("iss-1")`))
	})
}

func BenchmarkDirectGet(b *testing.B) {
	f := newFixture(b, server.Config{})
	client := &http.Client{}
	req, err := http.NewRequest("GET", f.backend.URL()+"/tracker/api/issues/iss-1", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.backend.Backend().TrackerToken())
	loopOK(b, func() (*http.Response, error) { return client.Do(req) })
}

// BenchmarkReverseProxyGet is the same GET through a plain
// httputil.ReverseProxy in front of the backend: the cost of any HTTP hop,
// which BenchmarkRunGet is compared against.
func BenchmarkReverseProxyGet(b *testing.B) {
	f := newFixture(b, server.Config{})
	target, err := url.Parse(f.backend.URL())
	if err != nil {
		b.Fatal(err)
	}
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	defer proxy.Close()
	client := &http.Client{}
	req, err := http.NewRequest("GET", proxy.URL+"/tracker/api/issues/iss-1", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.backend.Backend().TrackerToken())
	loopOK(b, func() (*http.Response, error) { return client.Do(req) })
}

// loopOK runs do b.N times, requiring a 200 and reading each body whole.
func loopOK(b *testing.B, do func() (*http.Response, error)) {
	b.Helper()
	b.ReportAllocs()
	c0 := processCPU()
	defer func() { reportCPU(b, c0) }()
	for b.Loop() {
		resp, err := do()
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

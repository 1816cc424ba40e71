package browser_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/runtime/sandbox/sandboxtest"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

var screenshots = flag.Bool("screenshots", false, "write the README screenshots to docs/")

const (
	tokenA = "browser-token-a"
	tokenB = "browser-token-b"
)

// chromium finds Debian's Chromium (the Makefile installs it). In CI the
// test must run, so a missing browser fails there instead of skipping.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (make test installs it with apt-get)")
	}
	t.Skip("chromium is not installed; run make test or apt-get install chromium")
	return ""
}

// demoServer serves the demo with tenants a and b (auth on) and returns
// its URL. Tenant a may use every catalog, b only kanban.
func demoServer(t *testing.T) (*httptest.Server, func(token, method, path, ctype, body string) (int, http.Header, string)) {
	t.Helper()
	ctx := context.Background()
	backend, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cats, err := demo.LoadCatalogs(backend.URL())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("tenants:\n")
	for _, tn := range []struct{ id, tok, cats string }{{"a", tokenA, ""}, {"b", tokenB, "    catalogs: [kanban]\n"}} {
		b.WriteString("  - id: " + tn.id + "\n    token_sha256: [" + tenant.Digest(tn.tok) + "]\n" + tn.cats + "    secrets:\n")
		for k, v := range backend.Backend().Secrets() {
			if tn.cats != "" {
				continue // b uses kanban only, which needs no secret
			}
			b.WriteString("      " + k + ": {value: " + strconv.Quote(v) + ", catalogs: [" + strings.Join(demo.SecretCatalogs()[k], ", ") + "]}\n")
		}
	}
	set, err := tenant.Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	cache := sandboxtest.CacheDir()
	app, err := server.New(ctx, server.Config{Tenants: set, CacheDir: cache}, cats)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		srv.Close()
		app.Close(context.Background())
		_ = backend.Close()
	})
	do := func(token, method, path, ctype, body string) (int, http.Header, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		return resp.StatusCode, resp.Header, buf.String()
	}
	return srv, do
}

// browser starts headless Chromium with the flags this machine needs and
// records console errors, exceptions and CSP violations.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
	allow  string // a message substring tolerated for now (an expected 404)
}

func newBrowser(t *testing.T, exe string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 760),
	}
	// A deadline no healthy run reaches; it only stops a hung browser.
	ctx, cancelT := context.WithTimeout(context.Background(), 8*time.Minute)
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA(); cancelT() })
	b := &browser{ctx: bctx}
	msgs := chromedp.Console(bctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
				b.note(m.String())
			}
		}
	}()
	return b
}

func (b *browser) note(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.allow != "" && strings.Contains(s, b.allow) {
		return
	}
	b.errors = append(b.errors, s)
}

// check fails on any recorded browser error, including CSP violations
// (the log, and console.js's data-csp-violations counter on <body>).
func (b *browser) check(t *testing.T, what string) {
	t.Helper()
	csp, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.getAttribute("data-csp-violations") || ""`))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errors) > 0 || csp != "" {
		t.Fatalf("%s: browser errors %v, CSP violations %q", what, b.errors, csp)
	}
}

// do runs steps, then checks for browser errors.
func (b *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	b.check(t, what)
}

// get runs one action that yields a value.
func get[T any](t *testing.T, b *browser, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

type css = chromedp.CSS

// visibleSVG checks an inline SVG rendered with a real size and at least
// min node boxes.
func visibleSVG(t *testing.T, b *browser, sel string, min int) {
	t.Helper()
	type box struct{ W, H, Nodes float64 }
	js := fmt.Sprintf(`(() => { const s = document.querySelector(%q); const r = s.getBoundingClientRect(); const bb = s.getBBox();
		return {W: Math.min(r.width, bb.width), H: Math.min(r.height, bb.height), Nodes: s.querySelectorAll("g.node rect").length}; })()`, sel)
	b.do(t, "wait "+sel, chromedp.WaitVisible(css(sel)))
	bx := get(t, b, "measure "+sel, chromedp.Evaluate[box](js))
	if bx.W < 100 || bx.H < 30 || int(bx.Nodes) < min {
		t.Fatalf("%s rendered %vx%v with %v nodes", sel, bx.W, bx.H, bx.Nodes)
	}
}

// inked screenshots an element and checks the picture is not blank: the
// graph's boxes and arrows put many non-background pixels on it.
func inked(t *testing.T, b *browser, sel string) []byte {
	t.Helper()
	buf := get(t, b, "screenshot "+sel, chromedp.Screenshot(css(sel)))
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", sel, err)
	}
	bg := img.At(1, 1)
	diff := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			if img.At(x, y) != bg {
				diff++
			}
		}
	}
	if diff < 200 {
		t.Fatalf("screenshot of %s is nearly blank (%d inked samples of %v)", sel, diff, bounds.Size())
	}
	return buf
}

func TestConsoleInChromium(t *testing.T) {
	exe := chromium(t)
	srv, do := demoServer(t)

	// Activity to look at: tenant a's session with a good and a failing
	// run, and a run of tenant b's.
	st, h, body := do(tokenA, "POST", "/execute", "application/json", `{"entry_id":"tracker","entities":["Issue","Project"]}`)
	if st != http.StatusSeeOther {
		t.Fatalf("open a: %d %s", st, body)
	}
	pathA := h.Get("Location")
	// A reviewed run (force): this test is about the console, not review gating.
	if st, _, body = do(tokenA, "POST", pathA+"?force=true", "text/plain", `Issue{project_id="prj-1"}.limit(3).comments[id,issue_id]`); st != 200 {
		t.Fatalf("run a: %d %s", st, body)
	}
	if st, _, _ = do(tokenA, "POST", pathA, "text/plain", `Issue{bogus=1}`); st != 400 {
		t.Fatalf("failing run a: %d", st)
	}

	b := newBrowser(t, exe)
	login := func(token string) {
		b.do(t, "log in",
			chromedp.Navigate(srv.URL+"/ui/login"),
			chromedp.SendKeys(css(`input[name="token"]`), token),
			chromedp.Click(css(`form.login button`)),
			chromedp.WaitVisible(css(`#live`)),
		)
	}
	login(tokenA)
	if who := get(t, b, "who", chromedp.Text(css(`header .who`))); who != "tenant a" {
		t.Fatalf("logged in as %q", who)
	}

	// Catalogs → tracker: the relation graph renders.
	b.do(t, "catalogs",
		chromedp.Click(css(`nav a[href="/ui/catalogs"]`)),
		chromedp.WaitVisible(css(`a[href="/ui/catalogs/tracker"]`)),
		chromedp.Click(css(`a[href="/ui/catalogs/tracker"]`)),
		chromedp.WaitVisible(css(`#relation-graph svg`)),
	)
	visibleSVG(t, b, "#relation-graph svg", 5)
	catalogShot := inked(t, b, "#relation-graph")

	// Teaching preview for a seed set.
	b.do(t, "teaching preview",
		chromedp.Click(css(`input[name="seed"][value="Issue"]`)),
		chromedp.Click(css(`form.teach button`)),
		chromedp.WaitVisible(css(`#teaching`)),
	)
	if teach := get(t, b, "teaching text", chromedp.Text(css(`#teaching`))); !strings.Contains(teach, "tracker:Issue") {
		t.Fatalf("teaching preview: %q", teach)
	}

	// Runs → the good run: plan DAG, steps linking to the catalog.
	b.do(t, "runs",
		chromedp.Click(css(`nav a[href="/ui/runs"]`)),
		chromedp.WaitVisible(css(`table.runs tr.ok a`)),
		chromedp.Click(css(`table.runs tr.ok td a`)),
		chromedp.WaitVisible(css(`#plan-graph svg`)),
	)
	visibleSVG(t, b, "#plan-graph svg", 2)
	runURL := get(t, b, "run url", chromedp.Location())
	runShot := inked(t, b, "main")
	if n := get(t, b, "steps", chromedp.Evaluate[int](`document.querySelectorAll("table.steps tbody tr").length`)); n < 2 {
		t.Fatalf("%d steps shown", n)
	}
	b.do(t, "step links to its capability",
		chromedp.Click(css(`#step-0 a[href*="#cap-"]`)),
		chromedp.WaitVisible(css(`#relation-graph`)),
	)
	if loc := get(t, b, "location", chromedp.Location()); !strings.Contains(loc, "/ui/catalogs/tracker#cap-issue_query") {
		t.Fatalf("step link went to %s", loc)
	}
	b.do(t, "run links to its session",
		chromedp.Navigate(runURL),
		chromedp.Click(css(`#session-link`)),
		chromedp.WaitVisible(css(`table.symbols`)),
	)
	if n := get(t, b, "symbols", chromedp.Evaluate[int](`document.querySelectorAll("table.symbols tbody tr").length`)); n < 2 {
		t.Fatalf("symbol map has %d rows", n)
	}

	// The failing run shows its error and hint.
	b.do(t, "failed run",
		chromedp.Navigate(srv.URL+"/ui/runs?status=failed"),
		chromedp.Click(css(`table.runs tr.failed td a`)),
		chromedp.WaitVisible(css(`#problem`)),
	)
	if p := get(t, b, "problem", chromedp.Text(css(`#problem`))); !strings.Contains(p, "bogus") || !strings.Contains(p, "hint:") {
		t.Fatalf("problem: %q", p)
	}

	// Tenants and limits: a's row only.
	b.do(t, "tenants",
		chromedp.Click(css(`nav a[href="/ui/tenants"]`)),
		chromedp.WaitVisible(css(`#tenant-a`)),
	)
	if n := get(t, b, "tenant rows", chromedp.Evaluate[int](`document.querySelectorAll("table.tenants tbody tr").length`)); n != 1 {
		t.Fatalf("tenant a sees %d tenant rows", n)
	}

	// Live activity: a run made now streams into the open page over SSE.
	b.do(t, "activity", chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible(css(`#live`)))
	if st, _, body = do(tokenA, "POST", pathA, "text/plain", `Issue("iss-2")[id,title]`); st != 200 {
		t.Fatalf("live run: %d %s", st, body)
	}
	b.do(t, "live row", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Poll[bool](`document.querySelector("#live tbody").textContent.includes('Issue("iss-2")')`,
			chromedp.WithPollingInterval(100*time.Millisecond))(ctx, tg)
		return err
	}))

	// Tenant b: a's run is "not found".
	b.do(t, "log out", chromedp.Click(css(`form.logout button`)), chromedp.WaitVisible(css(`form.login`)))
	login(tokenB)
	b.mu.Lock()
	b.allow = "status of 404"
	b.mu.Unlock()
	b.do(t, "other tenant's run", chromedp.Navigate(runURL), chromedp.WaitVisible(css(`.notfound`)))
	if txt := get(t, b, "not found text", chromedp.Text(css(`main`))); !strings.Contains(txt, "Not found") || strings.Contains(txt, "comments") {
		t.Fatalf("tenant b sees: %q", txt)
	}

	if *screenshots {
		writeShot(t, "console-catalog.png", catalogShot)
		writeShot(t, "console-run.png", runShot)
	}
}

func writeShot(t *testing.T, name string, b []byte) {
	t.Helper()
	if len(b) > 150<<10 {
		t.Fatalf("%s is %d KB; keep README screenshots under 150 KB", name, len(b)>>10)
	}
	if _, _, err := image.Decode(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "..", "..", "docs", name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

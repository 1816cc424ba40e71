package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/internal/runtime/sandbox/sandboxtest"
)

func testCacheDir() string { return sandboxtest.CacheDir() }

// TestMain sets the compilation cache module check shares with the other
// tests and removes the plasmd binary the subprocess tests built.
func TestMain(m *testing.M) {
	moduleCheckCacheDir = testCacheDir()
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// built is the plasmd binary the subprocess tests share: the sources do
// not change during a run, and each `go build` links a 59 MB binary again.
var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

// buildBinary builds plasmd once for the subprocess tests.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "plasmd-bin-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "plasmd")
		cmd := exec.Command("go", "build", "-o", built.bin, ".")
		if msg, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, msg)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

func TestStdioMCP(t *testing.T) {
	bin := buildBinary(t)
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "stdio", "--demo", "--cache-dir", testCacheDir(), "--log-level", "warn")
	cmd.Stderr = &stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-e2e", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	defer cs.Close()
	text := func(res *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "plasm_context", Arguments: map[string]any{
		"intent": "stdio smoke test",
		"seeds":  []any{map[string]any{"api": "tracker", "entity": "Issue"}, map[string]any{"api": "kanban", "entity": "Issue"}},
	}})
	if err != nil || res.IsError {
		t.Fatalf("plasm_context: %v %s\nstderr: %s", err, text(res), stderr.String())
	}
	if !strings.HasPrefix(text(res), "`s0`\n") {
		t.Fatalf("plasm_context text: %q", text(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "plasm_run", Arguments: map[string]any{
		"logical_session_ref": "s0",
		"program":             "a = tracker:Issue(\"iss-1\")[id]\nb = kanban:Issue{team_id=\"team-3\"}.limit(1)[id]\na, b",
	}})
	if err != nil || res.IsError {
		t.Fatalf("plasm_run: %v %s", err, text(res))
	}
	out := text(res)
	if !strings.Contains(out, "## a (1 row)") || !strings.Contains(out, "iss-1") || !strings.Contains(out, "kiss-") {
		t.Fatalf("plasm_run output: %s", out)
	}
}

func TestCatalogCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	bad := filepath.Join(dir, "bad")
	for _, d := range []string{good, bad} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(good, "domain.yaml"), `version: 1
values:
  id: {type: string}
entities:
  Thing:
    id_field: id
    fields:
      id: {value_ref: id}
capabilities:
  thing_get: {kind: get, entity: Thing}
`)
	write(filepath.Join(good, "mappings.yaml"), `thing_get:
  method: GET
  path: [{type: literal, value: things}, {type: var, name: id}]
  response: single
`)
	write(filepath.Join(bad, "domain.yaml"), "version: 1\nentities:\n  Thing:\n    fields:\n      id: {vaule_ref: id}\n")
	write(filepath.Join(bad, "mappings.yaml"), "{}\n")

	var out, errb bytes.Buffer
	if code := run([]string{"catalog", "check", good}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "ok  good") {
		t.Fatalf("good catalog: code %d out %q err %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	code := run([]string{"catalog", "check", good, bad}, &out, &errb)
	if code != 1 {
		t.Fatalf("bad catalog exit code %d", code)
	}
	if !strings.Contains(errb.String(), "domain.yaml:5:") || !strings.Contains(errb.String(), `unknown key "vaule_ref"`) {
		t.Fatalf("error lacks position or message: %q", errb.String())
	}
	if !strings.Contains(out.String(), "ok  good") {
		t.Fatalf("the good catalog was not reported beside the bad one: %q", out.String())
	}
}

func TestServeRefusesPublicWithoutAuth(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--demo", "--addr", "0.0.0.0:0"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "refusing") {
		t.Fatalf("code %d, stderr %q", code, errb.String())
	}
}

func TestRunCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo; skipped with -short")
	}
	var out, errb bytes.Buffer
	program := "a = tracker:Issue(\"iss-1\")[id]\nb = kanban:Issue{team_id=\"team-1\"}.limit(1)[id]\na, b"
	code := run([]string{"run", "--demo", "--cache-dir", testCacheDir(), "--seed", "tracker:Issue", "--seed", "kanban:Issue", program}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "## a (1 row)") || !strings.Contains(out.String(), "kiss-") {
		t.Fatalf("code %d\nstdout %s\nstderr %s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	code = run([]string{"run", "--demo", "--cache-dir", testCacheDir(), "--seed", "tracker:Issue", "Isue(1)"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "1:1: unknown entity") || !strings.Contains(errb.String(), "hint: did you mean Issue") {
		t.Fatalf("code %d stderr %q", code, errb.String())
	}
	out.Reset()
	code = run([]string{"run", "--demo", "--cache-dir", testCacheDir(), "--seed", "tracker:Issue", "--plan", `Issue("iss-1").close()`}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), `"verdict":"review"`) {
		t.Fatalf("plan: code %d stdout %s", code, out.String())
	}
	// A review plan runs only with --force.
	out.Reset()
	errb.Reset()
	code = run([]string{"run", "--demo", "--cache-dir", testCacheDir(), "--seed", "tracker:Issue", `Issue("iss-1").close()`}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "needs review") || !strings.Contains(errb.String(), "--force") {
		t.Fatalf("review plan without --force: code %d stderr %q", code, errb.String())
	}
	errb.Reset()
	code = run([]string{"run", "--demo", "--cache-dir", testCacheDir(), "--seed", "tracker:Issue", "--force", `Issue("iss-1").close()[id,status]`}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "closed") {
		t.Fatalf("--force: code %d stdout %s stderr %s", code, out.String(), errb.String())
	}
	if code := run([]string{"run", "--demo", "Issue"}, &out, &errb); code != 2 {
		t.Fatalf("run without seeds: code %d", code)
	}
}

// TestRunMeteredModule: the demo's vendor module, trusted by its digest,
// runs metered and answers as before; a malformed digest stops start-up.
func TestRunMeteredModule(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo; skipped with -short")
	}
	b, err := os.ReadFile("../../demo/catalogs/ledger/module.wasm")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	var out, errb bytes.Buffer
	code := run([]string{"run", "--demo", "--cache-dir", testCacheDir(), "--metered-module", hex.EncodeToString(sum[:]), "--seed", "ledger:Account", `Account("acc-2")[id,name]`}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "Payroll") {
		t.Fatalf("code %d\nstdout %s\nstderr %s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	code = run([]string{"run", "--demo", "--cache-dir", testCacheDir(), "--metered-module", "ledger", "--seed", "ledger:Account", `Account("acc-2")`}, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "not a sha256 digest") {
		t.Fatalf("malformed digest: code %d stderr %q", code, errb.String())
	}
}

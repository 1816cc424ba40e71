package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/redistest"
)

// replicaDeadline bounds waits on the subprocesses (start-up compiles the
// engine unless the cache is warm); a healthy run is far below it.
const replicaDeadline = 120 * time.Second

const replicaToken = "replica-token"

// writeDemoCatalogs writes the tracker and kanban demo catalogs pointing at
// backendURL into a directory for --catalogs.
func writeDemoCatalogs(t *testing.T, backendURL string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"tracker", "kanban"} {
		err := fs.WalkDir(demo.Catalogs, "catalogs/"+name, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := demo.Catalogs.ReadFile(p)
			if err != nil {
				return err
			}
			b = []byte(strings.ReplaceAll(string(b), demo.PlaceholderOrigin, backendURL))
			out := filepath.Join(dir, strings.TrimPrefix(p, "catalogs/"))
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			return os.WriteFile(out, b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeTenants(t *testing.T, secrets map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("tenants:\n  - id: a\n    token_sha256: [" + sha256Hex(replicaToken) + "]\n    secrets:\n")
	for k, v := range secrets {
		b.WriteString("      " + k + ": {value: " + strconv.Quote(v) + ", catalogs: [" + strings.Join(demo.SecretCatalogs()[k], ", ") + "]}\n")
	}
	p := filepath.Join(t.TempDir(), "tenants.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// replica is one plasmd serve process.
type replica struct {
	t    *testing.T
	args []string
	addr string
	cmd  *exec.Cmd
}

func startReplica(t *testing.T, bin string, args []string) *replica {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	r := &replica{t: t, args: append([]string{"serve", "--addr", addr}, args...), addr: addr}
	r.cmd = exec.Command(bin, r.args...)
	r.start()
	t.Cleanup(r.kill)
	return r
}

func (r *replica) start() {
	r.t.Helper()
	r.cmd = exec.Command(r.cmd.Path, r.args...)
	r.cmd.Stderr = os.Stderr
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(replicaDeadline)
	for {
		resp, err := http.Get(r.url() + "/v1/health")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("replica %s not healthy: %v", r.addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL: no shutdown hook runs, as in a crash.
func (r *replica) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	}
}

func (r *replica) url() string { return "http://" + r.addr }

func (r *replica) do(method, path, contentType, body string) (int, http.Header, string) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.url()+path, strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+replicaToken)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s on %s: %v", method, path, r.addr, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func (r *replica) run(path, program string) map[string]any {
	r.t.Helper()
	// Runs as a reviewed program would (review gating has its own tests).
	status, _, body := r.do(http.MethodPost, path+"?force=true", "text/plain", program)
	if status != http.StatusOK {
		r.t.Fatalf("run %q on %s: %d %s", program, r.addr, status, body)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		r.t.Fatal(err)
	}
	return m
}

func (r *replica) open(entry, entity string) string {
	r.t.Helper()
	status, h, body := r.do(http.MethodPost, "/execute", "application/json", `{"entry_id":"`+entry+`","entities":["`+entity+`"]}`)
	if status != http.StatusSeeOther {
		r.t.Fatalf("open on %s: %d %s", r.addr, status, body)
	}
	return h.Get("Location")
}

func rowIDs(res map[string]any) []string {
	var ids []string
	for _, root := range res["results"].([]any) {
		for _, row := range root.(map[string]any)["rows"].([]any) {
			ids = append(ids, row.(map[string]any)["id"].(string))
		}
	}
	return ids
}

// TestReplicaRestartLosesNothing runs two plasmd processes on one Redis:
// a session opened on A is run on B with the same handle; A is killed
// with SIGKILL and restarted; on A the session has the same symbols, B's
// run is readable, B's page continues, and a listener on B hears a
// mutation made on the restarted A.
func TestReplicaRestartLosesNothing(t *testing.T) {
	bin := buildBinary(t)
	rs := redistest.Start(t)
	backend, err := demo.Start(context.Background(), demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Close() })
	args := []string{"--catalogs", writeDemoCatalogs(t, backend.URL()), "--tenants", writeTenants(t, backend.Backend().Secrets()),
		"--store", rs.URL(), "--cache-dir", testCacheDir(), "--log-level", "warn"}
	a := startReplica(t, bin, args)
	b := startReplica(t, bin, args)

	path := a.open("kanban", "Issue")
	st, _, before := a.do(http.MethodGet, path, "", "")
	if st != http.StatusOK || !strings.Contains(before, "Issue") {
		t.Fatalf("session on A: %d %s", st, before)
	}
	first := b.run(path, "Issue[id]")
	meta := first["_meta"].(map[string]any)["plasm"].(map[string]any)
	handle := meta["paging"].([]any)[0].(map[string]any)["handle"].(string)
	runID := meta["run_id"].(string)

	// A listener on B (the MCP session protocol carries notifications).
	msgs := make(chan *mcp.LoggingMessageParams, 64)
	c := mcp.NewClient(&mcp.Implementation{Name: "replica-test", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { msgs <- req.Params },
	})
	hc := &http.Client{Transport: bearerRT{token: replicaToken}}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: b.url() + "/mcp", HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	a.kill()
	a.start()

	st, _, after := a.do(http.MethodGet, path, "", "")
	if st != http.StatusOK || after != before {
		t.Fatalf("session after restart differs:\n%s\n---\n%s", before, after)
	}
	if status, _, body := a.do(http.MethodGet, path+"/artifacts/"+runID, "", ""); status != http.StatusOK || !strings.Contains(body, runID) {
		t.Fatalf("B's run on restarted A: %d %s", status, body)
	}
	next := a.run(path, "page("+handle+")")
	if ids, prev := rowIDs(next), rowIDs(first); len(ids) == 0 || ids[0] == prev[0] {
		t.Fatalf("page on restarted A did not continue: %v after %v", ids, prev)
	}

	tpath := a.open("tracker", "Issue")
	a.run(tpath, `Issue.create(title="after the crash", priority=1)`)
	select {
	case m := <-msgs:
		data := m.Data.(map[string]any)
		d := data["details"].(map[string]any)
		if data["event"] != "rows_updated" || d["tenant_id"] != "a" || d["entity"] != "Issue" {
			t.Fatalf("listener on B got %v", data)
		}
	case <-time.After(replicaDeadline):
		t.Fatal("listener on B heard nothing of the mutation on A")
	}
}

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

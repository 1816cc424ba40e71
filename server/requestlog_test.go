package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/server"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Every request line is JSON with tenant, sessions, run id and problem
// type, and no token or upstream secret ever reaches the log.
func TestJSONLogsCarryContextAndNoSecrets(t *testing.T) {
	logs := &syncBuffer{}
	var secrets map[string]string
	f := newFixtureFor(t, func(backend *demo.Server) server.Config {
		secrets = backend.Backend().Secrets()
		var b strings.Builder
		b.WriteString("tenants:\n")
		for _, tn := range []struct{ id, tok string }{{"a", tokenA}, {"b", tokenB}} {
			b.WriteString("  - id: " + tn.id + "\n    token_sha256: [" + tenant.Digest(tn.tok) + "]\n    secrets:\n")
			for k, v := range secrets {
				b.WriteString("      " + k + ": {value: " + strconv.Quote(v) + ", catalogs: [" + strings.Join(demo.SecretCatalogs()[k], ", ") + "]}\n")
			}
		}
		set, err := tenant.Parse([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		return server.Config{Tenants: set, Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	})
	if len(secrets) == 0 {
		t.Fatal("the demo has no secrets to look for")
	}
	asA := []string{"Authorization", "Bearer " + tokenA}
	r := f.do(t, "POST", "/execute", "application/json", `{"entry_id":"tracker","entities":["Issue"]}`, asA...)
	path := r.header.Get("Location")
	if r.status != http.StatusSeeOther {
		t.Fatalf("open: %d %s", r.status, r.body)
	}
	// Tracker calls carry the upstream bearer secret.
	if r := f.do(t, "POST", path, "text/plain", `Issue("iss-1")`, asA...); r.status != 200 {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
	if r := f.do(t, "POST", path, "text/plain", `Issue{bogus=1}`, asA...); r.status != 400 {
		t.Fatalf("bad run: %d", r.status)
	}
	f.do(t, "GET", "/v1/registry?token="+tokenB, "", "", "Authorization", "Bearer "+tokenB+"x")
	f.do(t, "GET", "/ui/runs", "", "", "Cookie", "plasmd_console="+tokenB)
	cs := f.mcpClientAs(t, tokenB)
	ctx := contextCall(t, cs, "log test", "kanban:Team")
	ref, _ := ctx.meta["logical_session_ref"].(string)
	lid, _ := ctx.meta["logical_session_id"].(string)
	runCall(t, cs, ref, `Team.query()`)

	text := logs.String()
	for _, s := range append([]string{tokenA, tokenB}, values(secrets)...) {
		if strings.Contains(text, s) {
			t.Errorf("the log contains a secret %q", s[:min(4, len(s))]+"…")
		}
	}
	var sawOK, sawProblem, sawMCP bool
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not a JSON line: %s", sc.Text())
		}
		if line["msg"] != "request" && line["msg"] != "run" {
			continue
		}
		for _, k := range []string{"tenant", "logical_session", "run_id", "problem_type"} {
			if _, ok := line[k]; !ok {
				t.Errorf("%s line lacks %s: %s", line["msg"], k, sc.Text())
			}
		}
		switch {
		case line["msg"] == "request" && line["tenant"] == "a" && line["run_id"] != "" && line["problem_type"] == "" && line["status"] == 200.0:
			sawOK = true
		case line["msg"] == "request" && line["tenant"] == "a" && line["run_id"] != "" && strings.HasSuffix(line["problem_type"].(string), "program-unknown_field"):
			sawProblem = true
		case line["msg"] == "run" && line["tenant"] == "b" && line["logical_session"] == lid && lid != "":
			sawMCP = true
		}
	}
	if !sawOK || !sawProblem || !sawMCP {
		t.Fatalf("lines missing: run ok %v, run with problem %v, MCP run with logical session %v\n%s", sawOK, sawProblem, sawMCP, text)
	}
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		if len(v) >= 6 { // short values could occur by chance
			out = append(out, v)
		}
	}
	return out
}

package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/internal/redistest"
)

// gate is a proxy in front of the demo backend that, once armed, holds
// every request until released and reports the first one's arrival: an
// operation is then provably in flight, with no timing involved.
type gate struct {
	mu      sync.Mutex
	armed   bool
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

func newGate(t *testing.T, backend string) (*gate, string) {
	u, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{arrived: make(chan struct{}), release: make(chan struct{})}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		armed := g.armed
		g.mu.Unlock()
		if armed {
			g.once.Do(func() { close(g.arrived) })
			select {
			case <-g.release:
			case <-r.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(g.open)
	return g, srv.URL
}

func (g *gate) arm() { g.mu.Lock(); g.armed = true; g.mu.Unlock() }

func (g *gate) open() {
	select {
	case <-g.release:
	default:
		close(g.release)
	}
}

// stdioProc is one `plasmd stdio` whose stdin the test closes itself, as a
// one-shot client does after its answer.
type stdioProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	cs     *mcp.ClientSession
	stderr *lines
	exited chan error
}

// lines collects stderr and signals when a wanted line shows.
type lines struct {
	mu   sync.Mutex
	text strings.Builder
	seen map[string]chan struct{}
}

func (l *lines) watch(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l.mu.Lock()
		l.text.WriteString(sc.Text() + "\n")
		for want, ch := range l.seen {
			if strings.Contains(sc.Text(), want) {
				close(ch)
				delete(l.seen, want)
			}
		}
		l.mu.Unlock()
	}
}

func (l *lines) when(want string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(l.text.String(), want) {
		close(ch)
		return ch
	}
	l.seen[want] = ch
	return ch
}

func (l *lines) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.text.String() }

func startStdio(t *testing.T, bin string, args []string) *stdioProc {
	t.Helper()
	p := &stdioProc{cmd: exec.Command(bin, append([]string{"stdio"}, args...)...), stderr: &lines{seen: map[string]chan struct{}{}}, exited: make(chan error, 1)}
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.stdin = stdin
	go p.stderr.watch(stderr)
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.exited; p.exited <- nil })
	c := mcp.NewClient(&mcp.Implementation{Name: "oneshot", Version: "1"}, nil)
	p.cs, err = c.Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, p.stderr)
	}
	return p
}

// call runs a tool and returns its text and the session handle.
func (p *stdioProc) call(t *testing.T, tool string, args map[string]any) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), replicaDeadline)
	defer cancel()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v\nstderr: %s", tool, err, p.stderr)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	handle := ""
	if pl, ok := res.Meta["plasm"].(map[string]any); ok {
		handle, _ = pl["session_handle"].(string)
	}
	return b.String(), handle
}

// await waits for a line on stderr, failing after replicaDeadline.
func (p *stdioProc) await(t *testing.T, want string) {
	t.Helper()
	select {
	case <-p.stderr.when(want):
	case <-time.After(replicaDeadline):
		t.Fatalf("plasmd stdio never said %q\nstderr: %s", want, p.stderr)
	}
}

// exit waits for the process to end by itself.
func (p *stdioProc) exit(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err
		if err != nil {
			t.Fatalf("plasmd stdio exited: %v\nstderr: %s", err, p.stderr)
		}
	case <-time.After(replicaDeadline):
		t.Fatalf("plasmd stdio did not exit\nstderr: %s", p.stderr)
	}
}

// One-shot stdio on a shared Redis store: a new process per request. An
// operation accepted by one process must not die with that process's
// client: on end of input the process finishes it and the next process's
// wait answers its result. Stopped by a second signal or killed, the next
// wait says the process ended and that the run is partial, never "the
// request was canceled", nor "running" for ever.
func TestStdioOperationOutlivesClient(t *testing.T) {
	bin := buildBinary(t)
	rs := redistest.Start(t)
	backend, err := demo.Start(context.Background(), demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Close() })

	for _, tc := range []struct {
		name string
		// end ends the accepting process with the operation in flight
		// and says what the next wait must answer.
		end func(t *testing.T, p *stdioProc, g *gate) []string
	}{
		{"end of input drains", func(t *testing.T, p *stdioProc, g *gate) []string {
			_ = p.stdin.Close()
			p.await(t, "finishing 1 running operation")
			g.open()
			p.exit(t)
			return []string{"`s0_o1` done", "! done:", "iss-"}
		}},
		{"second signal stops", func(t *testing.T, p *stdioProc, g *gate) []string {
			_ = p.stdin.Close()
			p.await(t, "finishing 1 running operation")
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			p.await(t, "signal again")
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			p.exit(t)
			return []string{"`s0_o1` failed", "the plasmd process running it shut down", "partial run"}
		}},
		{"killed", func(t *testing.T, p *stdioProc, g *gate) []string {
			_ = p.cmd.Process.Kill()
			<-p.exited
			p.exited <- nil
			return []string{"`s0_o1` failed", "the plasmd process running it ended", "partial run"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, url := newGate(t, backend.URL())
			args := []string{"--catalogs", writeDemoCatalogs(t, url), "--tenants", writeTenants(t, backend.Backend().Secrets()),
				"--tenant", "a", "--store", rs.URL(), "--cache-dir", testCacheDir(), "--log-level", "warn"}

			first := startStdio(t, bin, args)
			_, ref := first.call(t, "plasm_context", map[string]any{"intent": "one-shot operation",
				"seeds": []any{map[string]any{"api": "tracker", "entity": "Issue"}}})
			if ref == "" {
				t.Fatal("no session handle")
			}
			first.exitAfter(t)

			second := startStdio(t, bin, args)
			g.arm()
			out, _ := second.call(t, "plasm_run", map[string]any{"logical_session_ref": ref, "program": "Issue.limit(3)[id]", "wait": false})
			m := regexp.MustCompile("`(s0_o[0-9]+)` accepted").FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("wait:false answered %s", out)
			}
			select {
			case <-g.arrived:
			case <-time.After(replicaDeadline):
				t.Fatal("the operation never called the backend")
			}
			want := tc.end(t, second, g)
			g.open()

			third := startStdio(t, bin, args)
			// A killed owner is judged gone once its lease has gone
			// unrenewed for half its TTL (5 s) as well, so a wait that
			// began sooner answers "running"; wait again until it ends.
			for {
				out, _ = third.call(t, "plasm_run", map[string]any{"logical_session_ref": ref, "program": "wait(" + m[1] + ")"})
				if !strings.Contains(out, "`"+m[1]+"` running") && !strings.Contains(out, "`"+m[1]+"` accepted") {
					break
				}
			}
			for _, w := range want {
				w = strings.ReplaceAll(w, "s0_o1", m[1])
				if !strings.Contains(out, w) {
					t.Errorf("wait answered without %q:\n%s\nstderr of the accepting process:\n%s", w, out, second.stderr)
				}
			}
			if strings.Contains(out, "canceled") {
				t.Errorf("wait blames a cancelled request:\n%s", out)
			}
			third.exitAfter(t)
		})
	}
}

// exitAfter closes stdin (nothing runs, so the process exits at once).
func (p *stdioProc) exitAfter(t *testing.T) {
	t.Helper()
	_ = p.stdin.Close()
	p.exit(t)
}

// Package redistest starts a real redis-server for tests: a private
// process on a loopback port with no persistence, stopped and restarted at
// will (tests of Redis outages) and killed when the test ends.
//
// The Makefile installs Debian's redis-server when it is missing, so under
// make test (PLASMD_REQUIRE_REDIS set) or in CI (CI set) a missing binary
// fails the test; elsewhere the test is skipped.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// startDeadline bounds how long redis-server may take to accept
// connections; a healthy machine needs milliseconds.
const startDeadline = 30 * time.Second

// Server is one redis-server process.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
}

// Start runs redis-server on a free loopback port.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("PLASMD_REQUIRE_REDIS") != "" {
			t.Fatalf("redis-server is not installed (make test installs it): %v", err)
		}
		t.Skip("redis-server is not installed; run make test (it installs it) to include these tests")
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir(), port: freePort(t)}
	s.Begin()
	t.Cleanup(s.Stop)
	return s
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is a redis:// URL for the server.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Begin starts the process (again, after Stop) on the same port.
func (s *Server) Begin() {
	s.t.Helper()
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--protected-mode", "yes", "--daemonize", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(startDeadline)
	for {
		if ping(s.Addr()) {
			return
		}
		if time.Now().After(deadline) {
			s.Stop()
			s.t.Fatalf("redis-server on %s did not answer PING", s.Addr())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop kills the process and waits for it (idempotent).
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := fmt.Fprint(c, "PING\r\n"); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

package ratelimit_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plasmd/plasmd/server/internal/ratelimit"
)

// startRedis runs a private redis-server on a loopback port for the test.
// make test installs it and sets PLASMD_REQUIRE_REDIS, which turns a
// missing binary from a skip into a failure.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("PLASMD_REQUIRE_REDIS") != "" || os.Getenv("CI") != "" {
			t.Fatalf("redis-server is not installed (make test installs it): %v", err)
		}
		t.Skip("redis-server is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--daemonize", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.SetDeadline(time.Now().Add(time.Second))
			fmt.Fprint(c, "PING\r\n")
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if line == "+PONG\r\n" {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRedis runs the limiter contract against a real redis-server, with
// two clients standing for two replicas.
func TestRedis(t *testing.T) {
	addr := startRedis(t)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r1 := redis.NewClient(&redis.Options{Addr: addr})
	r2 := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { r1.Close(); r2.Close() })
	a, b := ratelimit.NewRedis(r1, "test:", clk.Now), ratelimit.NewRedis(r2, "test:", clk.Now)
	limiterContract(t, &alternating{ls: [2]ratelimit.Limiter{a, b}}, clk.Advance)

	// Server time (no injected clock) works too, and buckets expire.
	live := ratelimit.NewRedis(r1, "live:", nil)
	bk := ratelimit.Bucket{Key: "k", Rate: ratelimit.Rate{Rate: 1, Per: time.Hour}, N: 1}
	if d, err := live.Take(context.Background(), []ratelimit.Bucket{bk}); err != nil || !d.Allowed {
		t.Fatalf("live take: %+v %v", d, err)
	}
	if d, _ := live.Take(context.Background(), []ratelimit.Bucket{bk}); d.Allowed || d.RetryAfter <= 59*time.Minute {
		t.Fatalf("live second take: %+v", d)
	}
	if ttl := r1.PTTL(context.Background(), "live:k").Val(); ttl <= 0 || ttl > time.Hour+2*time.Second {
		t.Fatalf("bucket ttl %v", ttl)
	}
	// A dead Redis is an error, not a silent allow.
	dead := ratelimit.NewRedis(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}), "", nil)
	if _, err := dead.Take(context.Background(), []ratelimit.Bucket{bk}); err == nil {
		t.Fatal("no error from an unreachable redis")
	}
}

// alternating sends each take to the next replica's limiter.
type alternating struct {
	ls   [2]ratelimit.Limiter
	turn int
}

func (a *alternating) Take(ctx context.Context, bs []ratelimit.Bucket) (ratelimit.Decision, error) {
	a.turn++
	return a.ls[a.turn%2].Take(ctx, bs)
}

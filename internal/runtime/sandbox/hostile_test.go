package sandbox

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
)

// Generous slack for "the error arrives soon after the deadline": the
// machine may be loaded and -race slows everything; what matters is that
// a stuck guest does not hold the caller for long.

func TestHostileGuests(t *testing.T) {
	needGuests(t)
	checkNoLeaks(t)
	tests := []struct {
		guest      string
		limits     Limits
		want       error
		detail     string        // substring of CallError.Detail
		callerWait time.Duration // caller deadline shorter than CallTimeout, 0 = none
	}{
		{guest: "loop", limits: Limits{CallTimeout: 100 * time.Millisecond}, want: ErrDeadline, detail: "did not return in time"},
		{guest: "loop", limits: Limits{CallTimeout: time.Minute}, want: ErrDeadline, detail: "did not return in time", callerWait: 100 * time.Millisecond},
		{guest: "panic", want: ErrTrap, detail: "panic: hostile guest gives up"},
		{guest: "grow", limits: Limits{MemoryBytes: 32 << 20}, want: ErrMemoryLimit, detail: "33554432-byte ceiling"},
		// Go keeps goroutine stacks in linear memory, so unbounded
		// recursion ends at the memory ceiling, not a native stack guard.
		{guest: "recurse", limits: Limits{MemoryBytes: 32 << 20}, want: ErrMemoryLimit, detail: "33554432-byte ceiling"},
		{guest: "badptr", want: ErrABI, detail: "outside memory"},
		{guest: "huge", limits: Limits{MaxOutput: 1 << 20}, want: ErrOutputTooLarge, detail: "limit 1048576"},
	}
	for _, tc := range tests {
		name := tc.guest
		if tc.callerWait > 0 {
			name += "/caller-deadline"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			hostile := testHost.Tenant("hostile-"+name, TenantSpec{Module: guestModule(t, tc.guest), Limits: tc.limits})
			defer hostile.Close()
			// A bystander tenant keeps calling the engine throughout (and
			// at least a few times, in case the hostile call fails fast).
			bystander := testHost.Tenant("bystander-"+name, TenantSpec{Module: testEngine})
			defer bystander.Close()

			if got, err := hostile.Ping(ctx, []byte("warm")); err != nil || string(got) != "warm" {
				t.Fatalf("healthy call before: %q, %v", got, err)
			}
			if _, err := bystander.Ping(ctx, []byte("warm")); err != nil {
				t.Fatal(err)
			}

			stop := make(chan struct{})
			var bystanderCalls atomic.Int64
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						if bystanderCalls.Load() >= 3 {
							return
						}
					default:
					}
					msg := []byte("bystander")
					got, err := bystander.Ping(ctx, msg)
					if err != nil || !bytes.Equal(got, msg) {
						t.Errorf("bystander saw %q, %v", got, err)
						return
					}
					bystanderCalls.Add(1)
				}
			})

			callCtx := ctx
			if tc.callerWait > 0 {
				var cancel context.CancelFunc
				callCtx, cancel = context.WithTimeout(ctx, tc.callerWait)
				defer cancel()
			}
			start := time.Now()
			_, err := hostile.Ping(callCtx, []byte("hostile"))
			elapsed := time.Since(start)
			close(stop)
			wg.Wait()

			t.Logf("%v (after %v)", err, elapsed)
			var ce *CallError
			if !errors.Is(err, tc.want) || !errors.As(err, &ce) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if ce.Tenant != "hostile-"+name || ce.Export != abi.ExportPing || !strings.Contains(ce.Detail, tc.detail) {
				t.Errorf("CallError %+v, want detail containing %q", ce, tc.detail)
			}

			s := hostile.Stats()
			if s.Discarded != 1 || s.Live != 0 {
				t.Errorf("stats after failure %+v: instance must be discarded", s)
			}
			if got, err := hostile.Ping(ctx, []byte("after")); err != nil || string(got) != "after" {
				t.Fatalf("same tenant's next call: %q, %v", got, err)
			}
			if s := hostile.Stats(); s.Live != 1 || s.Idle != 1 {
				t.Errorf("stats after recovery %+v", s)
			}
		})
	}
}

func TestCallerCancel(t *testing.T) {
	needGuests(t)
	checkNoLeaks(t)
	tn := testHost.Tenant(t.Name(), TenantSpec{Module: guestModule(t, "loop"), Limits: Limits{CallTimeout: time.Minute}})
	defer tn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := tn.Ping(ctx, []byte("hostile"))
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTrap) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if s := tn.Stats(); s.Discarded != 1 {
		t.Fatalf("cancelled instance kept: %+v", s)
	}
	// A context that is already over never reaches an instance.
	_, err = tn.Ping(ctx, []byte("x"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if s := tn.Stats(); s.Created != 1 {
		t.Fatalf("dead context touched an instance: %+v", s)
	}
}

func TestMemoryLimitBelowModuleMinimum(t *testing.T) {
	tn := testHost.Tenant(t.Name(), TenantSpec{Module: testEngine, Limits: Limits{MemoryBytes: 1 << 20}})
	defer tn.Close()
	_, err := tn.Ping(context.Background(), []byte("x"))
	if !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("err = %v, want ErrMemoryLimit", err)
	}
	if s := tn.Stats(); s.Live != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestGuestLogSummary(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"empty", nil, ""},
		{"panic", []string{"panic: boom\n\ngoroutine 1 [running]:\n", "main.ping()\n"},
			"panic: boom | goroutine 1 [running]: | main.ping()"},
		{"split write", []string{"fatal err", "or: out of memory\n"}, "fatal error: out of memory"},
		{"many lines", []string{"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"}, "a | b | c | … | f | g | h | i | j"},
		{"flood", []string{"first\n", strings.Repeat("x", 10_000) + "\nlast\n"}, "first | … | last"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var l guestLog
			for _, w := range tc.writes {
				if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			got := l.summary()
			if tc.name == "flood" {
				// The flood's head is cut at guestLogHead; only the ends matter.
				if !strings.HasPrefix(got, "first | ") || !strings.HasSuffix(got, " | last") || len(got) > guestLogHead+guestLogTail+64 {
					t.Fatalf("summary = %.200q…", got)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("summary = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzGuestLog checks that arbitrary guest output never breaks the bounds.
func FuzzGuestLog(f *testing.F) {
	f.Add([]byte("panic: x\n"), 3)
	f.Add(bytes.Repeat([]byte("line\n"), 2000), 7)
	f.Add([]byte{0xff, '\n', 0}, 1)
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		chunk = max(1, chunk%5000)
		var l guestLog
		for p := data; len(p) > 0; {
			k := min(chunk, len(p))
			if n, _ := l.Write(p[:k]); n != k {
				t.Fatalf("short write %d of %d", n, k)
			}
			p = p[k:]
		}
		if len(l.head) > guestLogHead || len(l.tail) > guestLogTail {
			t.Fatalf("buffers grew to %d/%d", len(l.head), len(l.tail))
		}
		if len(data) <= guestLogHead+guestLogTail && !bytes.Equal(append(bytes.Clone(l.head), l.tail...), data) {
			t.Fatal("small output not kept whole")
		}
		_ = l.summary()
	})
}

// FuzzPing round-trips arbitrary bytes through the real engine.
func FuzzPing(f *testing.F) {
	tn := testHost.Tenant("fuzz-ping", TenantSpec{Module: testEngine})
	f.Cleanup(tn.Close)
	f.Add([]byte(nil))
	f.Add([]byte{abi.StatusError, '{', '}'})
	f.Add(bytes.Repeat([]byte{0}, 70_000))
	f.Fuzz(func(t *testing.T, msg []byte) {
		got, err := tn.Ping(context.Background(), msg)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("ping %d bytes: %d bytes, %v", len(msg), len(got), err)
		}
	})
}

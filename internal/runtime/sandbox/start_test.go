package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

// A module whose start-up never ends is refused at load with a typed
// deadline error (the caller's deadline wins over the start timeout), and
// the failure is not remembered, so the bytes are judged again next time.
func TestModuleStartLoops(t *testing.T) {
	needGuests(t)
	// Compile first, with no deadline: compiling under -race on a cold
	// cache can take longer than any deadline this test would set, and
	// start-up is what is under test. Loads below reuse the compiled code.
	wasm := guestWasm["initloop"]
	sum := sha256.Sum256(wasm)
	c, err := testHost.compile(context.Background(), hex.EncodeToString(sum[:]), wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer c.cm.Close(context.Background())
	if !c.metered {
		t.Fatal("initloop is not metered: the meter is what must stop its start-up")
	}
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := testHost.Module(ctx, guestWasm["initloop"])
		cancel()
		if !errors.Is(err, ErrDeadline) || !strings.Contains(err.Error(), "_initialize did not return in time") {
			t.Fatalf("load of a module looping in start-up: %v, want ErrDeadline naming _initialize", err)
		}
	}
}

// Start-up is not held to a call timeout shorter than the default: a tenant
// with tight call limits must not see its next call fail because a fresh
// instance took longer to start than one call may run.
func TestStartTimeoutFloor(t *testing.T) {
	for _, call := range []time.Duration{time.Millisecond, 100 * time.Millisecond, defaultCallTimeout, 2 * defaultCallTimeout} {
		got := Limits{CallTimeout: call}.startTimeout()
		if want := max(call, defaultCallTimeout); got != want {
			t.Errorf("CallTimeout %v: start timeout %v, want %v", call, got, want)
		}
	}
}

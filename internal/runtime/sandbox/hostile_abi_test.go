package sandbox

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/hostabi"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// cannedSender answers every request without touching the network, so the
// http import can be exercised on its own.
type cannedSender struct{}

func (cannedSender) Do(_ context.Context, req *abi.CompiledRequest, _ []egress.Origin, _ egress.Secrets) (*egress.Response, error) {
	return &egress.Response{Status: 200, Headers: http.Header{"X-Url": {req.URL}}, Body: []byte("canned")}, nil
}

// TestHostImportsRefuseBadPointers drives the host imports with pointer and
// length pairs no honest guest would pass: addresses at the top of the
// 32-bit space, ranges that wrap around in u32 arithmetic, -1 as a length.
// The contract it pins down: the host answers every such call with a
// status (ErrBounds, ErrRequest, ErrNoResponse), never a panic or a trap,
// never touches memory outside the guest, and the instance stays in
// service, because nothing about it is in doubt; the guest decides what to
// make of the status.
func TestHostImportsRefuseBadPointers(t *testing.T) {
	checkNoLeaks(t)
	m := guestModule(t, "abuse")
	tn := testHost.Tenant(t.Name(), TenantSpec{Module: m})
	defer tn.Close()
	env := &HostEnv{Secrets: mapSecrets{"KEY": "k"}, Egress: cannedSender{}}

	bounds := strconv.Itoa(hostabi.ErrBounds)
	tests := []struct {
		name, want string
	}{
		{"hmac ok", "0"},
		{"hmac name at 4GiB", bounds},
		{"hmac name length -1", bounds},
		{"hmac data wraps", bounds},
		{"hmac data at 2GiB", bounds},
		{"hmac out at 4GiB", bounds},
		{"hmac out wraps", bounds},
		{"http ok", "0,0"},
		{"http request at 4GiB", bounds},
		{"http request wraps", bounds},
		{"http request length -1", bounds},
		{"http empty request", strconv.Itoa(hostabi.ErrRequest)},
		{"http malformed request", strconv.Itoa(hostabi.ErrRequest)},
		{"read without request", strconv.Itoa(hostabi.ErrNoResponse)},
		{"read bad buffers", strings.Join([]string{bounds, bounds, bounds, bounds, "0", strconv.Itoa(hostabi.ErrNoResponse)}, ",")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tn.Ping(WithHostEnv(context.Background(), env), []byte(tc.name))
			if err != nil {
				t.Fatalf("call failed: %v", err)
			}
			if string(got) != tc.want {
				t.Fatalf("host statuses %q, want %q", got, tc.want)
			}
		})
	}
	// Outside a tenant call every import refuses before looking at its
	// arguments.
	noCtx := strconv.Itoa(hostabi.ErrNoContext)
	for _, c := range []string{"hmac out at 4GiB", "http request length -1", "read without request"} {
		if got, err := tn.Ping(context.Background(), []byte(c)); err != nil || string(got) != noCtx {
			t.Errorf("%s without a host env: %q, %v; want %s", c, got, err, noCtx)
		}
	}
	if got, err := tn.Ping(context.Background(), []byte("still here")); err != nil || string(got) != "still here" {
		t.Fatalf("echo after the abuse: %q, %v", got, err)
	}
	if s := tn.Stats(); s.Created != 1 || s.Discarded != 0 || s.Live != 1 {
		t.Fatalf("stats %+v: one instance should have served every case", s)
	}
}

// TestRecursionThenRecovery: unbounded recursion under the default limits
// (not the reduced ceiling of TestHostileGuests) is still a typed failure
// and the instance is replaced.
func TestRecursionThenRecovery(t *testing.T) {
	checkNoLeaks(t)
	tn := testHost.Tenant(t.Name(), TenantSpec{Module: guestModule(t, "recurse")})
	defer tn.Close()
	for i := range 1 {
		_, err := tn.Ping(context.Background(), []byte("hostile"))
		var ce *CallError
		if !errors.As(err, &ce) || !(errors.Is(err, ErrMemoryLimit) || errors.Is(err, ErrTrap)) {
			t.Fatalf("round %d: err = %v, want ErrMemoryLimit or ErrTrap", i, err)
		}
		if got, err := tn.Ping(context.Background(), []byte("ok")); err != nil || string(got) != "ok" {
			t.Fatalf("round %d: next call %q, %v", i, got, err)
		}
	}
	if s := tn.Stats(); s.Discarded != 1 || s.Live != 1 {
		t.Fatalf("stats %+v", s)
	}
}

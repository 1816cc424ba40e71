package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// hostileBackends are the servers the egress cases talk to: a declared
// origin with a path per misbehaviour and an undeclared one that must never
// be reached.
type hostileBackends struct {
	declared    *httptest.Server
	outside     *httptest.Server
	outsideHits atomic.Int64
	// hugeWritten counts the bytes the multi-gigabyte handler managed to
	// write before the client hung up.
	hugeWritten atomic.Int64
}

// metadataHost is declared by the catalog but resolves (through the test
// resolver) to the cloud metadata address.
const metadataHost = "metadata.catalog.test"

func newHostileBackends(t testing.TB) *hostileBackends {
	b := &hostileBackends{}
	b.outside = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.outsideHits.Add(1)
		_, _ = w.Write([]byte("stolen"))
	}))
	t.Cleanup(b.outside.Close)
	b.declared = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, b.outside.URL+"/steal", http.StatusFound)
		case "/trickle":
			w.WriteHeader(http.StatusOK)
			for {
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		case "/huge":
			// Four gibibytes announced and streamed until the client
			// hangs up; nothing this size is ever held in memory here.
			w.Header().Set("Content-Length", fmt.Sprint(int64(4)<<30))
			chunk := make([]byte, 64<<10)
			for written := int64(0); written < 4<<30; written += int64(len(chunk)) {
				n, err := w.Write(chunk)
				b.hugeWritten.Add(int64(n))
				if err != nil {
					return
				}
			}
		default:
			_, _ = w.Write([]byte("hello " + r.URL.Path))
		}
	}))
	t.Cleanup(b.declared.Close)
	return b
}

// env returns a host environment whose catalog declares the backend and
// metadataHost on the backend's port, with an egress client that resolves
// metadataHost to 169.254.169.254. done closes the client's connections.
func (b *hostileBackends) env(t testing.TB, lim egress.Limits) (env *HostEnv, done func()) {
	declared, err := egress.ParseOrigin(b.declared.URL)
	if err != nil {
		t.Fatal(err)
	}
	client := egress.New(lim)
	client.SetResolver(func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == metadataHost {
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		}
		return nil, fmt.Errorf("unexpected lookup of %q", host)
	})
	meta := egress.Origin{Scheme: "http", Host: metadataHost, Port: declared.Port}
	return &HostEnv{Origins: []egress.Origin{declared, meta}, Egress: client}, client.Close
}

func (b *hostileBackends) metadataURL() string {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(b.declared.URL, "http://"))
	return "http://" + net.JoinHostPort(metadataHost, port) + "/latest/meta-data/"
}

// invokeFetch asks the invoker guest to fetch url through the host's http
// import.
func invokeFetch(ctx context.Context, tn *Tenant, env *HostEnv, url string) (*abi.DecodeResponse, error) {
	in, _ := json.Marshal(abi.CompileRequest{Capability: "fetch", Vars: map[string]any{"url": url}})
	out, err := tn.Call(WithHostEnv(ctx, env), abi.HookExport(abi.HookInvoke), in)
	if err != nil {
		return nil, err
	}
	var dr abi.DecodeResponse
	if err := json.Unmarshal(out, &dr); err != nil {
		return nil, err
	}
	return &dr, nil
}

// egressCase is one hostile backend behaviour seen through a guest.
type egressCase struct {
	name   string
	path   string // on the declared backend, or a full URL
	egress egress.Limits
	limits Limits
	// wantGuest is the egress kind the guest reports (a guest error,
	// instance kept); wantSandbox a sandbox failure (instance discarded).
	wantGuest   string
	wantSandbox error
}

func egressCases(b *hostileBackends) []egressCase {
	return []egressCase{
		{name: "undeclared origin", path: b.outside.URL + "/steal", wantGuest: "egress denied"},
		{name: "redirect to undeclared origin", path: "/redirect", wantGuest: "egress denied"},
		{name: "declared host resolves to metadata", path: b.metadataURL(), wantGuest: "egress denied"},
		// The backend timeout is the one limit the call can reach (the
		// trickle never ends; the call's deadline is the tests' default,
		// ten minutes): the guest sees a timeout and can report it.
		{name: "trickle past backend timeout", path: "/trickle", egress: egress.Limits{Timeout: 300 * time.Millisecond},
			wantGuest: "egress timeout"},
		// The call's deadline is the one it can reach: the sandbox stops
		// the call (the host function's request is cancelled with it).
		{name: "trickle past call deadline", path: "/trickle", egress: egress.Limits{Timeout: calmTimeout},
			limits: Limits{CallTimeout: 300 * time.Millisecond}, wantSandbox: ErrDeadline},
		{name: "multi-gigabyte body", path: "/huge", egress: egress.Limits{Timeout: calmTimeout, MaxBodyBytes: 1 << 20},
			wantGuest: "egress too_large"},
	}
}

// calmTimeout is the deadline of everything but a case's hostile call: a
// loaded machine never reaches it, so a case fails only at the limit it
// is about. (The healthy calls before and after a hostile one ran under
// the case's 300 ms limits; under -race on a loaded machine they missed
// them now and then.)
const calmTimeout = 10 * time.Minute

// calm returns a case's limits with the call deadline lifted (the tests'
// default, ten minutes), for its healthy calls.
func calm(l Limits) Limits {
	l.CallTimeout = 0
	return l
}

// runEgressCase runs one case against tn (a tenant of module m) and
// checks the failure and that the tenant's next call succeeds. The next
// call runs with limits it cannot reach: a fresh host environment with
// calm egress limits and, when the case set a call deadline, the tenant's
// deadline lifted (its overrun instance is gone by then).
func runEgressCase(t testing.TB, b *hostileBackends, tn *Tenant, m *Module, env *HostEnv, tc egressCase) {
	t.Helper()
	ctx := context.Background()
	url := tc.path
	if strings.HasPrefix(url, "/") {
		url = b.declared.URL + url
	}
	before := tn.Stats()
	start := time.Now()
	_, err := invokeFetch(ctx, tn, env, url)
	elapsed := time.Since(start)
	if tc.wantSandbox != nil {
		var ce *CallError
		if !errors.Is(err, tc.wantSandbox) || !errors.As(err, &ce) {
			t.Fatalf("err = %v, want %v", err, tc.wantSandbox)
		}
		if s := tn.Stats(); s.Discarded != before.Discarded+1 {
			t.Errorf("stats %+v: the overrun instance must be discarded", s)
		}
	} else {
		var ae *abi.Error
		if !errors.As(err, &ae) || !strings.Contains(ae.Message, tc.wantGuest) {
			t.Fatalf("err = %v, want a guest error containing %q", err, tc.wantGuest)
		}
		if s := tn.Stats(); s.Discarded != before.Discarded {
			t.Errorf("stats %+v: a reported egress error must not cost the instance", s)
		}
	}
	// Elapsed time is logged, never asserted: the typed error above is the
	// proof, and a loaded machine may take any time to deliver it.
	t.Logf("%s: %v after %v", tc.name, err, elapsed)
	if tc.limits.CallTimeout != 0 {
		testHost.Tenant(tn.ID(), TenantSpec{Module: m, Limits: calm(tc.limits)})
	}
	calmEnv, done := b.env(t, egress.Limits{Timeout: calmTimeout})
	defer done()
	dr, err := invokeFetch(ctx, tn, calmEnv, b.declared.URL+"/after")
	if err != nil || len(dr.Table.Rows) != 1 || dr.Table.Rows[0][1] != "hello /after" {
		t.Fatalf("same tenant's next call: %+v, %v", dr, err)
	}
}

// TestHostileEgressThroughGuest sends each hostile backend behaviour
// through a vendor guest's http import, so the whole path (guest → host
// import → egress → frame → guest) is what is proven, not egress alone.
func TestHostileEgressThroughGuest(t *testing.T) {
	m, err := testHost.Module(context.Background(), invokerWasm(t))
	if err != nil {
		t.Fatal(err)
	}
	checkNoLeaks(t)
	b := newHostileBackends(t)
	for _, tc := range egressCases(b) {
		t.Run(tc.name, func(t *testing.T) {
			// The healthy call before runs with limits it cannot reach;
			// then the tenant takes the case's limits.
			tn := testHost.Tenant("egress-"+tc.name, TenantSpec{Module: m, Limits: calm(tc.limits)})
			defer tn.Close()
			calmEnv, calmDone := b.env(t, egress.Limits{Timeout: calmTimeout})
			defer calmDone()
			if _, err := invokeFetch(context.Background(), tn, calmEnv, b.declared.URL+"/before"); err != nil {
				t.Fatalf("healthy call before: %v", err)
			}
			testHost.Tenant(tn.ID(), TenantSpec{Module: m, Limits: tc.limits})
			env, done := b.env(t, tc.egress)
			defer done()
			runEgressCase(t, b, tn, m, env, tc)
		})
	}
	if n := b.outsideHits.Load(); n != 0 {
		t.Errorf("the undeclared origin was reached %d times", n)
	}
	// Socket buffers hold a few MiB; anything near the announced size
	// would mean the body was read instead of cut off.
	if n := b.hugeWritten.Load(); n > 256<<20 {
		t.Errorf("the huge backend wrote %d bytes before the client hung up", n)
	}
	t.Logf("huge backend wrote %d bytes", b.hugeWritten.Load())
}

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
)

func testCatalog(id string) *catalog.Catalog {
	return &catalog.Catalog{
		EntryID: id,
		Version: 1,
		Entities: map[string]*catalog.Entity{
			"Issue": {Name: "Issue", IDField: "id", FieldOrder: []string{"id"},
				Fields: map[string]*catalog.Field{"id": {Name: "id", ValueRef: "string"}}},
		},
		Capabilities: map[string]*catalog.Capability{},
		Mappings:     map[string]*catalog.Mapping{},
		Digest:       "digest-" + id,
	}
}

func TestPingRoundTrip(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	tn := testHost.Tenant(t.Name(), TenantSpec{Module: testEngine})
	defer tn.Close()
	for _, msg := range [][]byte{nil, []byte("hello"), bytes.Repeat([]byte{0, 1, 0xff}, 100_000)} {
		got, err := tn.Ping(ctx, msg)
		if err != nil {
			t.Fatalf("ping(%d bytes): %v", len(msg), err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("ping(%d bytes) returned %d different bytes", len(msg), len(got))
		}
	}
}

func TestModuleValidation(t *testing.T) {
	if testEngine.ABIVersion != abi.Version {
		t.Fatalf("ABIVersion = %d", testEngine.ABIVersion)
	}
	for _, name := range []string{abi.ExportVersion, abi.ExportAlloc, abi.ExportPing, abi.ExportLoadCatalog,
		abi.ExportPlan, abi.ExportCompile, abi.ExportDecode} {
		if !testEngine.HasExport(name) {
			t.Errorf("engine lacks export %s (exports %v)", name, testEngine.Exports)
		}
	}
	if len(testEngine.Digest) != 64 {
		t.Errorf("digest %q", testEngine.Digest)
	}

	needGuests(t)
	for _, tc := range []struct{ guest, want string }{
		{"badversion", "plasm_abi_version returned 99"},
		{"noalloc", "missing export plasm_alloc"},
	} {
		t.Run(tc.guest, func(t *testing.T) {
			_, err := testHost.Module(context.Background(), guestWasm[tc.guest])
			if !errors.Is(err, ErrABI) || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("err = %v, want ErrABI mentioning %q", err, tc.want)
			}
		})
	}
	_, err := testHost.Module(context.Background(), []byte("not wasm"))
	if err == nil {
		t.Fatal("garbage bytes compiled")
	}
}

func TestModuleCacheByDigest(t *testing.T) {
	ctx := context.Background()
	again, err := testHost.Module(ctx, bytes.Clone(enginewasm.Wasm))
	if err != nil {
		t.Fatal(err)
	}
	if again != testEngine {
		t.Fatal("same bytes produced a second *Module")
	}

	// Concurrent first registrations of the same bytes share one load.
	h, err := New(ctx, Config{CacheDir: testCacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	var wg sync.WaitGroup
	mods := make([]*Module, 4)
	for i := range mods {
		wg.Go(func() {
			m, err := h.Module(ctx, enginewasm.Wasm)
			if err != nil {
				t.Error(err)
			}
			mods[i] = m
		})
	}
	wg.Wait()
	for _, m := range mods[1:] {
		if m != mods[0] {
			t.Fatal("concurrent registrations produced different modules")
		}
	}
	if got := h.Stats().Modules; got != 1 {
		t.Fatalf("Modules = %d", got)
	}
}

func TestWarmPathReusesInstance(t *testing.T) {
	ctx := context.Background()
	tn := NewEngine(testHost.Tenant(t.Name(), TenantSpec{Module: testEngine, Loads: CatalogLoads([]*catalog.Catalog{testCatalog("gh")})}))
	defer tn.Close()
	if _, err := tn.Ping(ctx, []byte("warm-up")); err != nil {
		t.Fatal(err)
	}
	before := tn.Stats()
	for range 50 {
		if _, err := tn.Ping(ctx, []byte("again")); err != nil {
			t.Fatal(err)
		}
	}
	after := tn.Stats()
	if after.Created != before.Created || after.Live != 1 || after.Idle != 1 || after.Discarded != 0 {
		t.Fatalf("before %+v after %+v: sequential calls must reuse one instance", before, after)
	}
}

func TestInputTooLarge(t *testing.T) {
	tn := testHost.Tenant(t.Name(), TenantSpec{Module: testEngine, Limits: Limits{MaxInput: 1024}})
	defer tn.Close()
	_, err := tn.Ping(context.Background(), make([]byte, 1025))
	var ce *CallError
	if !errors.Is(err, ErrInputTooLarge) || !errors.As(err, &ce) || ce.Tenant != t.Name() || ce.Export != abi.ExportPing {
		t.Fatalf("err = %v, want ErrInputTooLarge CallError", err)
	}
	if s := tn.Stats(); s.Created != 0 {
		t.Fatalf("an oversized input touched the guest: %+v", s)
	}
	if _, err := tn.Ping(context.Background(), make([]byte, 1024)); err != nil {
		t.Fatalf("input at the limit: %v", err)
	}
}

func TestGuestErrorPassthrough(t *testing.T) {
	ctx := context.Background()
	tn := NewEngine(testHost.Tenant(t.Name(), TenantSpec{Module: testEngine, Loads: CatalogLoads([]*catalog.Catalog{testCatalog("gh")})}))
	defer tn.Close()
	_, err := tn.Compile(ctx, &abi.CompileRequest{EntryID: "nope", Capability: "issue_get"})
	var ae *abi.Error
	if !errors.As(err, &ae) || ae.Code != abi.CodeCatalog {
		t.Fatalf("err = %v, want *abi.Error code %q", err, abi.CodeCatalog)
	}
	_, err = tn.Call(ctx, abi.ExportPlan, []byte("{not json"))
	if !errors.As(err, &ae) || ae.Code != abi.CodeBadRequest {
		t.Fatalf("err = %v, want *abi.Error code %q", err, abi.CodeBadRequest)
	}
	if s := tn.Stats(); s.Created != 1 || s.Discarded != 0 || s.Idle != 1 {
		t.Fatalf("guest errors must keep the instance: %+v", s)
	}
}

func TestCatalogsLoadAndReload(t *testing.T) {
	ctx := context.Background()
	tn := NewEngine(testHost.Tenant(t.Name(), TenantSpec{Module: testEngine, Loads: CatalogLoads([]*catalog.Catalog{testCatalog("gh")})}))
	defer tn.Close()

	// A loaded catalog reaches the op: the engine finds it, and only then
	// asks the (placeholder or real) compiler, so the error is not
	// "catalog not loaded".
	notLoaded := func(entry string) bool {
		_, err := tn.Compile(ctx, &abi.CompileRequest{EntryID: entry, Capability: "missing_capability"})
		var ae *abi.Error
		return errors.As(err, &ae) && ae.Code == abi.CodeCatalog && bytes.Contains([]byte(ae.Message), []byte("not loaded"))
	}
	if notLoaded("gh") {
		t.Fatal("catalog gh not loaded before the call")
	}
	if !notLoaded("linear") {
		t.Fatal("unknown catalog reported as loaded")
	}

	tn.SetCatalogs([]*catalog.Catalog{testCatalog("gh"), testCatalog("linear")})
	if notLoaded("linear") {
		t.Fatal("added catalog not loaded lazily")
	}
	created := tn.Stats().Created

	// Removing a catalog retires instances that hold it.
	tn.SetCatalogs([]*catalog.Catalog{testCatalog("linear")})
	if !notLoaded("gh") {
		t.Fatal("removed catalog still visible")
	}
	if s := tn.Stats(); s.Created != created+1 || s.Discarded != 1 {
		t.Fatalf("removal should replace the instance: %+v", s)
	}

	// A catalog the engine refuses comes back as its error; the instance
	// stays usable.
	tn.SetCatalogs([]*catalog.Catalog{{EntryID: ""}})
	_, err := tn.Ping(ctx, []byte("x"))
	var ae *abi.Error
	if !errors.As(err, &ae) || ae.Code != abi.CodeBadRequest {
		t.Fatalf("err = %v, want bad_request from plasm_load_catalog", err)
	}
}

func TestConcurrentTenants(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	const tenants, callers, calls = 3, 4, 20
	var wg sync.WaitGroup
	for i := range tenants {
		tn := NewEngine(testHost.Tenant(fmt.Sprintf("%s-%d", t.Name(), i), TenantSpec{
			Module: testEngine,
			Loads:  CatalogLoads([]*catalog.Catalog{testCatalog(fmt.Sprintf("cat%d", i))}),
			Limits: Limits{MaxInstances: 2},
		}))
		defer tn.Close()
		for c := range callers {
			wg.Go(func() {
				for k := range calls {
					msg := fmt.Appendf(nil, "tenant %d caller %d call %d", i, c, k)
					got, err := tn.Ping(ctx, msg)
					if err != nil || !bytes.Equal(got, msg) {
						t.Errorf("%s: %q, %v", tn.ID(), got, err)
						return
					}
					// Each tenant sees its own catalog and not the others'.
					_, err = tn.Compile(ctx, &abi.CompileRequest{EntryID: fmt.Sprintf("cat%d", (i+1)%tenants)})
					var ae *abi.Error
					if !errors.As(err, &ae) || ae.Code != abi.CodeCatalog {
						t.Errorf("%s saw another tenant's catalog: %v", tn.ID(), err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	for i := range tenants {
		s := testHost.Stats().Tenants[fmt.Sprintf("%s-%d", t.Name(), i)]
		if s.Live > 2 || s.Created > 2 || s.Discarded != 0 {
			t.Errorf("tenant %d: %+v exceeds MaxInstances or discarded", i, s)
		}
	}
}

func TestBusy(t *testing.T) {
	needGuests(t)
	checkNoLeaks(t)
	loop := guestModule(t, "loop")
	tn := testHost.Tenant(t.Name(), TenantSpec{Module: loop, Limits: Limits{MaxInstances: 1, CallTimeout: 2 * time.Second}})
	defer tn.Close()
	if _, err := tn.Ping(context.Background(), []byte("warm")); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		close(started)
		_, err := tn.Ping(context.Background(), []byte("hostile"))
		done <- err
	}()
	<-started
	// Wait until the looping call holds the only instance.
	for tn.Stats().Idle != 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := tn.Ping(ctx, []byte("queued"))
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("err = %v, want ErrBusy", err)
	}
	if err := <-done; !errors.Is(err, ErrDeadline) {
		t.Fatalf("looping call: %v, want ErrDeadline", err)
	}
}

func TestHostClose(t *testing.T) {
	ctx := context.Background()
	h, err := New(ctx, Config{CacheDir: testCacheDir})
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.Module(ctx, enginewasm.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	tn := h.Tenant("a", TenantSpec{Module: m})
	if _, err := tn.Ping(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tn.Ping(ctx, []byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
	if _, err := h.Module(ctx, enginewasm.Wasm); !errors.Is(err, ErrClosed) {
		t.Fatalf("Module after Close: %v", err)
	}
}

func TestTypedHelpersReachTheEngine(t *testing.T) {
	ctx := context.Background()
	tn := NewEngine(testHost.Tenant(t.Name(), TenantSpec{Module: testEngine, Loads: CatalogLoads([]*catalog.Catalog{testCatalog("gh")})}))
	defer tn.Close()

	// The engine only gets to the catalog lookup after splitting the frame
	// and parsing its header, so a catalog error proves both parts of the
	// frame (header written first, body straight after) arrived intact.
	for _, size := range []int{0, 10, 1 << 20} {
		body := bytes.Repeat([]byte("x"), size)
		_, err := tn.DecodeInGuest(ctx, &abi.DecodeRequest{EntryID: "absent", Capability: "c", Status: 200}, body)
		var ae *abi.Error
		if !errors.As(err, &ae) || ae.Code != abi.CodeCatalog {
			t.Fatalf("decode with %d-byte body: %v, want catalog error", size, err)
		}
	}

	_, err := tn.Plan(ctx, &abi.PlanRequest{Program: "Issue(", Entries: []string{"gh"}})
	var ae *abi.Error
	if !errors.As(err, &ae) || ae.Code == "" {
		t.Fatalf("plan of a broken program: %v, want *abi.Error", err)
	}
	var ce *CallError
	if errors.As(err, &ce) {
		t.Fatalf("guest error surfaced as CallError: %v", err)
	}
	if s := tn.Stats(); s.Created != 1 || s.Discarded != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestReconfigureRetiresInstances(t *testing.T) {
	ctx := context.Background()
	spec := TenantSpec{Module: testEngine}
	tn := testHost.Tenant(t.Name(), spec)
	defer tn.Close()
	if _, err := tn.Ping(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if again := testHost.Tenant(t.Name(), spec); again != tn || tn.Stats().Idle != 1 {
		t.Fatalf("same spec must keep the tenant and its instance: %+v", tn.Stats())
	}
	spec.Limits.CallTimeout = time.Second
	testHost.Tenant(t.Name(), spec)
	if s := tn.Stats(); s.Live != 0 || s.Discarded != 1 {
		t.Fatalf("new limits must retire idle instances: %+v", s)
	}
	if _, err := tn.Ping(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
}

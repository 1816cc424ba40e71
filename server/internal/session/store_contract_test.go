package session

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/redistest"
)

// The contract every Store meets, run against the in-memory store and
// against Redis (a real redis-server): same answers, same tenant
// isolation, same errors.

type storeMaker func(t *testing.T) Store

func redisStore(t *testing.T) (*Redis, *redistest.Server, redis.UniversalClient) {
	srv := redistest.Start(t)
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr()}, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	return NewRedis(rdb, time.Hour), srv, rdb
}

func makers() map[string]storeMaker {
	return map[string]storeMaker{
		"memory": func(*testing.T) Store { return NewMemory(time.Hour) },
		"redis":  func(t *testing.T) Store { s, _, _ := redisStore(t); return s },
	}
}

func TestStoreContract(t *testing.T) {
	cases := []struct {
		name string
		f    func(t *testing.T, s Store)
	}{
		{"logical", contractLogical},
		{"refs", contractRefs},
		{"execute", contractExecute},
		{"seq", contractSeq},
		{"runs", contractRuns},
		{"pages", contractPages},
		{"retention", contractRetention},
		{"plan commits", contractCommits},
		{"operations", contractOperations},
		{"operation calls never drop", contractCallsNeverDrop},
		{"operation leases", contractLeases},
	}
	for name, mk := range makers() {
		t.Run(name, func(t *testing.T) {
			s := mk(t)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) { tc.f(t, s) })
			}
		})
	}
}

func contractLogical(t *testing.T, s Store) {
	ctx := context.Background()
	a := must(s.OpenLogical(ctx, "A", "triage"))
	if again := must(s.OpenLogical(ctx, "A", "triage")); again.ID != a.ID {
		t.Fatalf("same (tenant, intent) gave %s then %s", a.ID, again.ID)
	}
	b := must(s.OpenLogical(ctx, "B", "triage"))
	if b.ID == a.ID || a.Tenant != "A" || a.Intent != "triage" {
		t.Fatalf("a=%+v b=%+v", a, b)
	}
	_, err := s.GetLogical(ctx, "B", a.ID)
	wantErr(t, err, ErrNotFound)
	wantErr(t, s.BindLogical(ctx, "B", a.ID, Binding{PromptHash: "h", SessionID: "x"}), ErrNotFound)
	if err := s.BindLogical(ctx, "A", a.ID, Binding{PromptHash: "h", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	got := must(s.GetLogical(ctx, "A", a.ID))
	if got.Binding == nil || *got.Binding != (Binding{PromptHash: "h", SessionID: "s"}) {
		t.Fatalf("binding %+v", got.Binding)
	}
}

func contractRefs(t *testing.T, s Store) {
	ctx := context.Background()
	l1 := must(s.OpenLogical(ctx, "A", "refs one"))
	l2 := must(s.OpenLogical(ctx, "A", "refs two"))
	lb := must(s.OpenLogical(ctx, "B", "refs one"))
	if r := must(s.RefFor(ctx, "t1", "A", l1.ID)); r != "s0" {
		t.Fatalf("first ref %s", r)
	}
	if r := must(s.RefFor(ctx, "t1", "A", l2.ID)); r != "s1" {
		t.Fatalf("second ref %s", r)
	}
	if r := must(s.RefFor(ctx, "t1", "A", l1.ID)); r != "s0" {
		t.Fatalf("same logical renamed %s", r)
	}
	if id := must(s.ResolveRef(ctx, "t1", "A", "s1")); id != l2.ID {
		t.Fatalf("s1 → %s", id)
	}
	_, err := s.ResolveRef(ctx, "t1", "B", "s0")
	wantErr(t, err, ErrNotFound)
	_, err = s.RefFor(ctx, "t1", "A", lb.ID)
	wantErr(t, err, ErrNotFound)
	_, err = s.RefFor(ctx, "t1", "B", lb.ID)
	wantErr(t, err, ErrNotFound) // the transport is tenant A's
	_, err = s.RefFor(ctx, "t1", "A", "no-such-logical")
	wantErr(t, err, ErrNotFound)
	if err := s.ForgetTransport(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	_, err = s.ResolveRef(ctx, "t1", "A", "s0")
	wantErr(t, err, ErrNotFound)
	if r := must(s.RefFor(ctx, "t1", "A", l2.ID)); r != "s0" {
		t.Fatalf("after forget, first ref %s", r)
	}
	if err := s.ForgetTransport(ctx, "never-seen"); err != nil {
		t.Fatal(err)
	}
}

func contractExecute(t *testing.T, s Store) {
	ctx := context.Background()
	e := execute("A", "hc", "sc", "kc")
	if err := s.PutExecute(ctx, e); err != nil {
		t.Fatal(err)
	}
	got := must(s.GetExecute(ctx, "A", "hc", "sc"))
	if got.LastUsed.IsZero() {
		t.Fatal("LastUsed not stamped")
	}
	got.LastUsed, e.LastUsed = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, e) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, e)
	}
	_, err := s.GetExecute(ctx, "B", "hc", "sc")
	wantErr(t, err, ErrNotFound)
	_, err = s.GetExecute(ctx, "A", "hc", "nope")
	wantErr(t, err, ErrNotFound)
	if r := must(s.FindReusable(ctx, "A", "kc")); r.ID != "sc" {
		t.Fatalf("reusable %s", r.ID)
	}
	_, err = s.FindReusable(ctx, "B", "kc")
	wantErr(t, err, ErrNotFound)
	// A new wave replaces the stored session.
	e.DomainRevision = 2
	e.Prompt += "\nmore"
	if err := s.PutExecute(ctx, e); err != nil {
		t.Fatal(err)
	}
	if got := must(s.GetExecute(ctx, "A", "hc", "sc")); got.DomainRevision != 2 || !strings.HasSuffix(got.Prompt, "more") {
		t.Fatalf("after second put: %+v", got)
	}
}

func contractSeq(t *testing.T, s Store) {
	ctx := context.Background()
	for want := 1; want <= 3; want++ {
		if n := must(s.NextSeq(ctx, "A", "scope-seq", "run")); n != want {
			t.Fatalf("run seq %d, want %d", n, want)
		}
	}
	if n := must(s.NextSeq(ctx, "A", "scope-seq", "page")); n != 1 {
		t.Fatalf("page seq %d", n)
	}
	if n := must(s.NextSeq(ctx, "B", "scope-seq", "run")); n != 1 {
		t.Fatalf("tenant B seq %d", n)
	}
}

func contractRuns(t *testing.T, s Store) {
	ctx := context.Background()
	big := json.Number("9007199254740993") // 2^53+1 must keep its text
	r1 := run("A", "L-runs", "h", "s", "run-1", 1)
	r1.Roots = []RunRoot{{Label: "e1", Table: abi.Table{Columns: []string{"id"}, Rows: [][]any{{big}}}, PageHandle: "s0_pg1"}}
	r2 := run("A", "L-runs", "h", "s", "run-2", 2)
	for _, r := range []Run{r2, r1} {
		if err := s.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got := must(s.GetRun(ctx, "A", "h", "s", "run-1"))
	if !reflect.DeepEqual(got, r1) {
		t.Fatalf("run:\n got %+v\nwant %+v", got, r1)
	}
	if got := must(s.GetRunByIndex(ctx, "A", "L-runs", 2)); got.RunID != "run-2" {
		t.Fatalf("r/2 = %s", got.RunID)
	}
	list := must(s.ListRuns(ctx, "A", "h", "s"))
	if len(list) != 2 || list[0].N != 1 || list[1].N != 2 {
		t.Fatalf("list %+v", list)
	}
	_, err := s.GetRun(ctx, "B", "h", "s", "run-1")
	wantErr(t, err, ErrNotFound)
	_, err = s.GetRunByIndex(ctx, "B", "L-runs", 1)
	wantErr(t, err, ErrNotFound)
	if l := must(s.ListRuns(ctx, "B", "h", "s")); len(l) != 0 {
		t.Fatalf("tenant B lists %d runs", len(l))
	}
}

func contractPages(t *testing.T, s Store) {
	ctx := context.Background()
	p := Page{Tenant: "A", Scope: "L-pages", N: 3}
	if err := s.PutPage(ctx, p); err != nil {
		t.Fatal(err)
	}
	if got := must(s.GetPage(ctx, "A", "L-pages", 3)); !reflect.DeepEqual(got, p) {
		t.Fatalf("page %+v", got)
	}
	_, err := s.GetPage(ctx, "B", "L-pages", 3)
	wantErr(t, err, ErrNotFound)
	_, err = s.GetPage(ctx, "A", "L-pages", 4)
	wantErr(t, err, ErrNotFound)
}

func contractRetention(t *testing.T, s Store) {
	ctx := context.Background()
	for n := 1; n <= MaxRunsPerScope+1; n++ {
		if err := s.PutRun(ctx, run("A", "L-ret", "hr", "sr", "ret-"+strconv.Itoa(n), n)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.GetRunByIndex(ctx, "A", "L-ret", 1)
	wantErr(t, err, ErrNotFound)
	_, err = s.GetRun(ctx, "A", "hr", "sr", "ret-1")
	wantErr(t, err, ErrNotFound)
	if got := must(s.GetRunByIndex(ctx, "A", "L-ret", MaxRunsPerScope+1)); got.N != MaxRunsPerScope+1 {
		t.Fatalf("newest run %d", got.N)
	}
	if l := must(s.ListRuns(ctx, "A", "hr", "sr")); len(l) != MaxRunsPerScope {
		t.Fatalf("list has %d runs, want %d", len(l), MaxRunsPerScope)
	}
}

// TestRedisExpiry: an execute session whose key expired reads ErrExpired
// on every lookup while its known key lasts (and is reported to OnExpire
// once), then ErrNotFound; it is no longer reusable. Expiry is forced by deleting the key, so no test waits on the
// clock.
func TestRedisExpiry(t *testing.T) {
	s, _, rdb := redisStore(t)
	ctx := context.Background()
	var expired []string
	s.SetOnExpire(func(e Execute) { expired = append(expired, e.Tenant+"/"+e.ID) })
	if err := s.PutExecute(ctx, execute("A", "h", "s", "k")); err != nil {
		t.Fatal(err)
	}
	ek, _ := s.execKeys("A", "h", "s")
	if err := rdb.Del(ctx, ek).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := s.GetExecute(ctx, "B", "h", "s")
	wantErr(t, err, ErrNotFound) // another tenant learns nothing
	_, err = s.GetExecute(ctx, "A", "h", "s")
	wantErr(t, err, ErrExpired)
	_, err = s.GetExecute(ctx, "A", "h", "s")
	wantErr(t, err, ErrExpired) // asked again: still expired, not unknown
	_, kk := s.execKeys("A", "h", "s")
	if ttl := rdb.PTTL(ctx, kk).Val(); ttl <= 0 {
		t.Fatalf("the known key has no expiry (%v): tombstones would pile up", ttl)
	}
	if err := rdb.Del(ctx, kk).Err(); err != nil { // its TTL passed
		t.Fatal(err)
	}
	_, err = s.GetExecute(ctx, "A", "h", "s")
	wantErr(t, err, ErrNotFound)
	_, err = s.FindReusable(ctx, "A", "k")
	wantErr(t, err, ErrNotFound)
	if strings.Join(expired, ",") != "A/s" {
		t.Fatalf("OnExpire saw %v", expired)
	}
}

func TestRedisRunSizeCap(t *testing.T) {
	s, _, _ := redisStore(t)
	s.SetMaxRunBytes(1024)
	r := run("A", "L", "h", "s", "big", 1)
	r.Program = strings.Repeat("x", 2048)
	wantErr(t, s.PutRun(context.Background(), r), ErrTooLarge)
	_, err := s.GetRunByIndex(context.Background(), "A", "L", 1)
	wantErr(t, err, ErrNotFound)
}

// TestRedisKeysNameTheirTenant: every key a tenant's state produces is
// hash-tagged with that tenant (one cluster slot, no cross-tenant key).
func TestRedisKeysNameTheirTenant(t *testing.T) {
	s, _, rdb := redisStore(t)
	contractLogical(t, s)
	contractRuns(t, s)
	contractPages(t, s)
	ctx := context.Background()
	l := must(s.OpenLogical(ctx, "A", "keys"))
	must(s.RefFor(ctx, "tk", "A", l.ID))
	keys := must(rdb.Keys(ctx, "*").Result())
	for _, k := range keys {
		if strings.HasPrefix(k, "plasmd:transport:") || k == expiryKey || k == tenantsKey {
			continue // transport → tenant index; expiry deadlines (ids only); tenants with budget books (names only)
		}
		if !strings.HasPrefix(k, "plasmd:{A}:") && !strings.HasPrefix(k, "plasmd:{B}:") {
			t.Errorf("key %q carries no tenant hash tag", k)
		}
	}
}

// TestRedisUnavailable: with Redis stopped every call fails with
// ErrUnavailable (no panic); after it restarts the same store works again.
func TestRedisUnavailable(t *testing.T) {
	s, srv, _ := redisStore(t)
	ctx := context.Background()
	srv.Stop()
	_, err := s.OpenLogical(ctx, "A", "down")
	wantErr(t, err, ErrUnavailable)
	wantErr(t, s.PutRun(ctx, run("A", "L", "h", "s", "r", 1)), ErrUnavailable)
	_, err = s.GetExecute(ctx, "A", "h", "s")
	wantErr(t, err, ErrUnavailable)
	srv.Begin()
	if _, err := s.OpenLogical(ctx, "A", "up again"); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("ping after restart: %v", err)
	}
}

// TestRedisSweep: a session whose key expired is reported by a sweep even
// if nobody looks it up, once (a later sweep or lookup does not report it
// again); a session still in use has its deadline pushed back instead.
func TestRedisSweep(t *testing.T) {
	s, _, rdb := redisStore(t)
	ctx := context.Background()
	var expired []string
	s.SetOnExpire(func(e Execute) { expired = append(expired, e.Tenant+"/"+e.ID) })
	for _, id := range []string{"gone", "alive"} {
		if err := s.PutExecute(ctx, execute("A", "h", id, "k-"+id)); err != nil {
			t.Fatal(err)
		}
	}
	ek, _ := s.execKeys("A", "h", "gone")
	if err := rdb.Del(ctx, ek).Err(); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Hour) // past both deadlines
	if err := s.Sweep(ctx, later); err != nil {
		t.Fatal(err)
	}
	if err := s.Sweep(ctx, later); err != nil {
		t.Fatal(err)
	}
	_, err := s.GetExecute(ctx, "A", "h", "gone")
	wantErr(t, err, ErrExpired)
	if strings.Join(expired, ",") != "A/gone" {
		t.Fatalf("reported %v, want A/gone once", expired)
	}
	if _, err := s.GetExecute(ctx, "A", "h", "alive"); err != nil {
		t.Fatalf("live session: %v", err)
	}
	score, err := rdb.ZScore(ctx, expiryKey, "A"+expirySep+"h"+expirySep+"alive").Result()
	if err != nil || int64(score) < time.Now().UnixMilli() {
		t.Fatalf("live session's deadline %v (%v) not pushed back", score, err)
	}
}

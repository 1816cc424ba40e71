package session

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/executor"
)

// TestWritesCopy: a value the caller changes after PutRun or PutPage does
// not change what the store returns, in every store (the memory store
// keeps the encoded document, so it must be taken at write time).
func TestWritesCopy(t *testing.T) {
	for name, mk := range makers() {
		t.Run(name, func(t *testing.T) {
			s, ctx := mk(t), context.Background()
			r := run("A", "L-copy", "h", "s-copy", "run-1", 1)
			r.Roots[0].Table.Rows = [][]any{{map[string]any{"k": "v"}, []any{"x"}}}
			want := must(clone(r))
			if err := s.PutRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			r.Program = "mutated"
			r.Roots[0].Label = "mutated"
			r.Roots[0].Table.Rows[0][0].(map[string]any)["k"] = "mutated"
			r.Roots[0].Table.Rows[0][1].([]any)[0] = "mutated"
			r.Roots[0].Table.Columns[0] = "mutated"
			for name, get := range map[string]func() (Run, error){
				"GetRun":        func() (Run, error) { return s.GetRun(ctx, "A", "h", "s-copy", "run-1") },
				"GetRunByIndex": func() (Run, error) { return s.GetRunByIndex(ctx, "A", "L-copy", 1) },
				"ListRuns": func() (Run, error) {
					l, err := s.ListRuns(ctx, "A", "h", "s-copy")
					if err != nil || len(l) != 1 {
						return Run{}, fmt.Errorf("ListRuns = %d runs, %v", len(l), err)
					}
					return l[0], nil
				},
			} {
				if got, err := get(); err != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("%s after the caller changed its run:\n got %+v, %v\nwant %+v", name, got, err, want)
				}
			}

			p := Page{Tenant: "A", Scope: "L-copy", N: 1, Continuation: executor.Continuation{
				Columns: []string{"id"}, Vars: map[string]any{"org": "acme"}, Page: map[string]any{"cursor": "c1"}}}
			wantPage := must(clone(p))
			if err := s.PutPage(ctx, p); err != nil {
				t.Fatal(err)
			}
			p.Continuation.Columns[0] = "mutated"
			p.Continuation.Vars["org"] = "mutated"
			p.Continuation.Page["cursor"] = "mutated"
			if got, err := s.GetPage(ctx, "A", "L-copy", 1); err != nil || !reflect.DeepEqual(got, wantPage) {
				t.Fatalf("GetPage after the caller changed its page:\n got %+v, %v\nwant %+v", got, err, wantPage)
			}
		})
	}
}

// TestRunBytesAreEncodedSize: the run budget counts each stored run's
// encoded size, json.Marshal's length, as it always has (Redis counts the
// same document), through replacement and eviction.
func TestRunBytesAreEncodedSize(t *testing.T) {
	m, _ := newStore(t, 0)
	sizes := map[string]int64{}
	put := func(r Run) {
		t.Helper()
		if err := m.PutRun(bg, r); err != nil {
			t.Fatal(err)
		}
		sizes[r.RunID] = int64(len(must(json.Marshal(r))))
	}
	check := func(ids ...string) {
		t.Helper()
		var want int64
		for _, id := range ids {
			want += sizes[id]
		}
		if u := m.Usage()["A"]; u.RunBytes != want || u.Runs != len(ids) {
			t.Fatalf("usage %+v, want %d runs of %d bytes", u, len(ids), want)
		}
	}
	r1 := run("A", "L", "h", "x", "run-1", 1)
	r1.Program = strings.Repeat("<&>", 100) // escaped by the encoder: 6 bytes each
	put(r1)
	put(run("A", "L", "h", "x", "run-2", 2))
	check("run-1", "run-2")
	r2 := run("A", "L", "h", "x", "run-2", 2)
	r2.Roots[0].Table.Rows = [][]any{{"a longer row than before"}}
	put(r2) // replaces run-2
	check("run-1", "run-2")
	for n := 3; n <= MaxRunsPerScope+2; n++ {
		put(run("A", "L", "h", "x", fmt.Sprint("run-", n), n))
	}
	var kept []string
	for n := 3; n <= MaxRunsPerScope+2; n++ {
		kept = append(kept, fmt.Sprint("run-", n))
	}
	check(kept...) // run-1 and run-2 evicted by the per-scope bound
}

// TestTooDeepValueRefusedOnWrite: a value nested deeper than the decoder
// reads is refused by PutRun and PutPage with the decoder's error and is
// not stored, as when the memory store decoded on write; what a write
// accepts can always be read back.
func TestTooDeepValueRefusedOnWrite(t *testing.T) {
	var deep any = "leaf"
	for range 10001 {
		deep = []any{deep}
	}
	m, _ := newStore(t, 0)
	r := run("A", "L", "h", "x", "run-1", 1)
	r.Roots[0].Table.Rows = [][]any{{deep}}
	err := m.PutRun(bg, r)
	if err == nil || !strings.Contains(err.Error(), "session store: decode:") || !strings.Contains(err.Error(), "exceeded max depth") {
		t.Fatalf("PutRun of a too-deep value: %v", err)
	}
	_, err = m.GetRun(bg, "A", "h", "x", "run-1")
	wantErr(t, err, ErrNotFound)
	if u, ok := m.Usage()["A"]; ok {
		t.Fatalf("a refused run is booked: %+v", u)
	}
	err = m.PutPage(bg, Page{Tenant: "A", Scope: "L", N: 1, Continuation: executor.Continuation{Vars: map[string]any{"v": deep}}})
	if err == nil || !strings.Contains(err.Error(), "session store: decode:") {
		t.Fatalf("PutPage of a too-deep value: %v", err)
	}
	_, err = m.GetPage(bg, "A", "L", 1)
	wantErr(t, err, ErrNotFound)
}

// TestInvalidUTF8Keys: the memory store files a run or page under its
// fields as they read back from JSON (each invalid byte U+FFFD), as it did
// when it kept the decoded copy.
func TestInvalidUTF8Keys(t *testing.T) {
	m, _ := newStore(t, 0)
	r := run("A\xff", "L\xfe\xfe", "h", "x", "run\xff1", 1)
	if err := m.PutRun(bg, r); err != nil {
		t.Fatal(err)
	}
	got := must(m.GetRun(bg, "A\uFFFD", "h", "x", "run\uFFFD1"))
	if got.Tenant != "A\uFFFD" || got.LogicalID != "L\uFFFD\uFFFD" {
		t.Fatalf("read back %q %q", got.Tenant, got.LogicalID)
	}
	must(m.GetRunByIndex(bg, "A\uFFFD", "L\uFFFD\uFFFD", 1))
	_, err := m.GetRun(bg, "A\xff", "h", "x", "run\xff1")
	wantErr(t, err, ErrNotFound)
	if err := m.PutPage(bg, Page{Tenant: "A\xff", Scope: "L\xff", N: 1}); err != nil {
		t.Fatal(err)
	}
	must(m.GetPage(bg, "A\uFFFD", "L\uFFFD", 1))
}

// TestDepthLimitExact: a run nested exactly as deep as the decoder reads
// is stored and reads back; one level more is refused.
func TestDepthLimitExact(t *testing.T) {
	// Run, roots, root, table, rows and the row: six levels above a cell.
	const above = 6
	for _, tc := range []struct {
		depth int
		ok    bool
	}{{maxDecodeDepth, true}, {maxDecodeDepth + 1, false}} {
		var cell any = json.Number("1")
		for range tc.depth - above {
			cell = []any{cell}
		}
		m, _ := newStore(t, 0)
		r := run("A", "L", "h", "x", "run-1", 1)
		r.Roots[0].Table.Rows = [][]any{{cell}}
		doc := must(json.Marshal(r))
		if d := nestingDepth(doc); d != tc.depth {
			t.Fatalf("nestingDepth = %d, want %d", d, tc.depth)
		}
		err := m.PutRun(bg, r)
		if (err == nil) != tc.ok {
			t.Fatalf("depth %d: PutRun err %v", tc.depth, err)
		}
		if tc.ok {
			if got := must(m.GetRun(bg, "A", "h", "x", "run-1")); !reflect.DeepEqual(got, r) {
				t.Fatal("the deepest storable run did not read back")
			}
		}
	}
}

func TestNestingDepth(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want int
	}{
		{`1`, 0}, {`"[{"`, 0}, {`[]`, 1}, {`{"a":[1,{"b":[]}]}`, 4},
		{`["\"[", "]\\", [[]]]`, 3}, {`{"\\":"\"{{{"}`, 1}, {`[[],[[]],[]]`, 3},
	} {
		if got := nestingDepth([]byte(tc.doc)); got != tc.want {
			t.Errorf("nestingDepth(%s) = %d, want %d", tc.doc, got, tc.want)
		}
	}
}

// FuzzNestingDepth: on any valid JSON, nestingDepth agrees with the depth
// of the decoded value.
func FuzzNestingDepth(f *testing.F) {
	for _, s := range []string{`1`, `[]`, `{"a":[1,{"b":"]}"}]}`, `["\\\"[", {}]`, `"\u005b"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if !json.Valid(b) || json.Unmarshal(b, &v) != nil {
			return
		}
		if got, want := nestingDepth(b), valueDepth(v); got != want {
			t.Fatalf("nestingDepth(%q) = %d, decoded depth %d", b, got, want)
		}
	})
}

func valueDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			d = max(d, valueDepth(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range v {
			d = max(d, valueDepth(e))
		}
		return d + 1
	}
	return 0
}

func TestJSONText(t *testing.T) {
	for _, s := range []string{"", "plain", "ünïcödé", "\uFFFD", "a\xffb", "\xff\xfe", "\xe2\x82", "\xf0\x9f\x98\x80ok\xc3"} {
		want := s
		var back string
		if err := abi.Unmarshal(must(json.Marshal(s)), &back); err != nil {
			t.Fatal(err)
		}
		want = back
		if got := jsonText(s); got != want {
			t.Errorf("jsonText(%q) = %q, JSON round trip %q", s, got, want)
		}
	}
}

// TestListRunsTies: runs of one execute session with the same r/N (two
// logical sessions sharing it) list in the order they were first stored.
func TestListRunsTies(t *testing.T) {
	m, _ := newStore(t, 0)
	var want []string
	for i := range 20 {
		id := fmt.Sprintf("run-%02d", 19-i)
		want = append(want, id)
		if err := m.PutRun(bg, run("A", fmt.Sprint("L", i), "h", "x", id, 1)); err != nil {
			t.Fatal(err)
		}
	}
	// A re-put keeps its place.
	if err := m.PutRun(bg, run("A", "L3", "h", "x", want[3], 1)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range must(m.ListRuns(bg, "A", "h", "x")) {
		got = append(got, r.RunID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ListRuns order %v, want %v", got, want)
	}
}

// TestRunIndexOrder: the index keeps its numbers ascending through
// inserts and deletes in any order, so the oldest is always first.
func TestRunIndexOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := &runIndex{byN: map[int]runKey{}}
	for i := range 2000 {
		n := rng.IntN(300)
		if rng.IntN(3) == 0 {
			x.del(n)
		} else {
			x.set(n, runKey{runID: fmt.Sprint(i)})
		}
		keys := make([]int, 0, len(x.byN))
		for k := range x.byN {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, x.ns) {
			t.Fatalf("step %d: ns %v, keys %v", i, x.ns, keys)
		}
	}
}

// TestRetentionOutOfOrder: the per-scope bound drops the lowest r/N even
// when runs arrive out of order.
func TestRetentionOutOfOrder(t *testing.T) {
	m, _ := newStore(t, 0)
	ns := rand.New(rand.NewPCG(3, 4)).Perm(MaxRunsPerScope + 5)
	for _, n := range ns {
		if err := m.PutRun(bg, run("A", "L", "h", "x", fmt.Sprint("run-", n+1), n+1)); err != nil {
			t.Fatal(err)
		}
	}
	// Each put past the bound drops the lowest index held at that moment.
	held := map[int]bool{}
	for _, n := range ns {
		held[n+1] = true
		if len(held) > MaxRunsPerScope {
			lowest := -1
			for k := range held {
				if lowest < 0 || k < lowest {
					lowest = k
				}
			}
			delete(held, lowest)
		}
	}
	for n := 1; n <= MaxRunsPerScope+5; n++ {
		_, err := m.GetRunByIndex(bg, "A", "L", n)
		if held[n] != (err == nil) {
			t.Fatalf("r/%d: held %v, err %v", n, held[n], err)
		}
	}
}

package audit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmd/plasmd/server/internal/audit"
)

func TestRingListsTenantNewest(t *testing.T) {
	r := audit.NewRing(3)
	ctx := context.Background()
	for i, tn := range []string{"a", "b", "a", "a", "a"} {
		_ = r.Append(ctx, audit.Record{Tenant: tn, Principal: map[bool]string{true: "alice", false: "bob"}[i%2 == 0], Action: "run", Outcome: "ok"})
	}
	got, _ := r.List(ctx, "a", "", 0)
	// Capacity 3 keeps seq 3, 4, 5 (all tenant a).
	if len(got) != 3 || got[0].Seq != 3 || got[2].Seq != 5 {
		t.Fatalf("list %+v", got)
	}
	if got, _ := r.List(ctx, "b", "", 0); len(got) != 0 {
		t.Fatalf("evicted record of b still listed: %+v", got)
	}
	if got, _ := r.List(ctx, "a", "alice", 0); len(got) != 2 || got[0].Seq != 3 || got[1].Seq != 5 {
		t.Fatalf("principal filter %+v", got)
	}
	if got, _ := r.List(ctx, "a", "", 1); len(got) != 1 || got[0].Seq != 5 {
		t.Fatalf("limit keeps the newest: %+v", got)
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		name, program string
		secrets       []string
		want          string
	}{
		{"quoted token", `Issue.create(title="tok-123456")`, []string{"tok-123456"}, `Issue.create(title="[REDACTED]")`},
		{"two secrets", `a("s3cret1") b("s3cret2")`, []string{"s3cret1", "s3cret2"}, `a("[REDACTED]") b("[REDACTED]")`},
		{"short values skipped", `Issue("abc")`, []string{"abc", ""}, `Issue("abc")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := audit.Redact(audit.Record{Program: tc.program, Error: "failed: " + tc.program}, tc.secrets)
			if r.Program != tc.want || r.Error != "failed: "+tc.want {
				t.Fatalf("got %q / %q", r.Program, r.Error)
			}
		})
	}
}

func TestFileAppendsJSONLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := audit.OpenFile(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = l.Append(ctx, audit.Record{Tenant: "a", Action: "run", Program: strings.Repeat("x", i*100), Outcome: "ok"})
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopen: earlier lines stay (append-only), new ones follow.
	l, err = audit.OpenFile(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Append(ctx, audit.Record{Tenant: "a", Action: "run", Outcome: "ok", Time: time.Unix(1, 0)})
	_ = l.Close()
	if err := l.Append(ctx, audit.Record{}); err == nil {
		t.Fatal("append after close")
	}
	f, _ := os.Open(path)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Tenant != "a" {
			t.Fatalf("line %d: %v %q", n, err, sc.Text())
		}
		n++
	}
	if n != 21 {
		t.Fatalf("%d lines", n)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
}

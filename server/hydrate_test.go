package server_test

import (
	"strings"
	"testing"

	"github.com/plasmd/plasmd/server"
)

// Lists that leave fields out are completed through the entity's get when
// the program asks for those fields, and a cardinality-one relation followed
// from many rows yields each target once.
func TestHydrationAndOneRelationHops(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "tracker", "Issue", "User", "Project")

	t.Run("list projection hydrates body", func(t *testing.T) {
		got := rows(t, f.runJSON(t, path, `Issue{status="open"}.limit(3)[id,title,body]`)[0])
		if len(got) != 3 {
			t.Fatalf("%d rows, want 3", len(got))
		}
		for _, r := range got {
			body, _ := r["body"].(string)
			if body == "" {
				t.Fatalf("row without body: %v", r)
			}
			id, _ := r["id"].(string)
			direct := rows(t, f.runJSON(t, path, `Issue("`+id+`")[body]`)[0])
			if len(direct) != 1 || direct[0]["body"] != body {
				t.Errorf("%s: hydrated body %q, direct get %v", id, body, direct)
			}
			if len(r) != 3 {
				t.Errorf("projection not kept: %v", r)
			}
		}
	})
	t.Run("no hydration unless asked", func(t *testing.T) {
		got := rows(t, f.runJSON(t, path, `Issue{status="open"}.limit(3)`)[0])
		for _, r := range got {
			if r["body"] != nil {
				t.Fatalf("list row carries body without a get: %v", r)
			}
		}
	})
	t.Run("embedded target hydrates email", func(t *testing.T) {
		got := rows(t, f.runJSON(t, path, `Issue("iss-1").assignee[id,name,email]`)[0])
		if len(got) != 1 {
			t.Fatalf("assignee rows: %v", got)
		}
		email, _ := got[0]["email"].(string)
		id, _ := got[0]["id"].(string)
		direct := rows(t, f.runJSON(t, path, `User("`+id+`")[email]`)[0])
		if email == "" || len(direct) != 1 || direct[0]["email"] != email {
			t.Fatalf("assignee %v, direct %v", got, direct)
		}
	})
	t.Run("one relation from many parents is distinct", func(t *testing.T) {
		parents := rows(t, f.runJSON(t, path, `Issue.limit(30)[id,project_id]`)[0])
		want := map[any]bool{}
		for _, p := range parents {
			if p["project_id"] != nil {
				want[p["project_id"]] = true
			}
		}
		if len(want) >= len(parents) {
			t.Fatalf("fixture: %d issues over %d projects cannot show dedupe", len(parents), len(want))
		}
		got := rows(t, f.runJSON(t, path, `Issue.limit(30).project[id,name]`)[0])
		seen := map[any]bool{}
		for _, r := range got {
			if seen[r["id"]] {
				t.Fatalf("project %v repeated: %v", r["id"], got)
			}
			seen[r["id"]] = true
			if !want[r["id"]] {
				t.Errorf("project %v is no issue's project", r["id"])
			}
		}
		if len(seen) != len(want) {
			t.Errorf("%d projects, want %d", len(seen), len(want))
		}
	})
}

// The ledger's Transaction.account (a one relation) over every transaction
// returns each account once.
func TestLedgerOneRelationDistinct(t *testing.T) {
	f := newVendorFixture(t, "", nil)
	path := f.open(t, "ledger", "Account", "Transaction")
	txns := rows(t, f.runJSON(t, path, `Transaction{account_id="acc-1"}.limit(10)[id,account_id]`)[0])
	if len(txns) < 2 {
		t.Fatalf("fixture: %d transactions for acc-1", len(txns))
	}
	got := rows(t, f.runJSON(t, path, `Transaction{account_id="acc-1"}.limit(10).account[id,name]`)[0])
	if len(got) != 1 || got[0]["id"] != "acc-1" {
		t.Fatalf("accounts of acc-1's transactions: %v", got)
	}
}

// A brace predicate on a field the list does not carry filters the
// hydrated rows, instead of testing null on every listed row.
func TestBracePredicateOnUnlistedFieldHydrates(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "tracker", "Issue")
	got := rows(t, f.runJSON(t, path, `Issue{project_id="prj-1", body~"acceptance"}[id,body]`)[0])
	if len(got) == 0 {
		t.Fatal("no issue of prj-1 matched body~\"acceptance\": the filter ran on unhydrated rows")
	}
	for _, r := range got {
		if !strings.Contains(strings.ToLower(r["body"].(string)), "acceptance") {
			t.Fatalf("row does not match the predicate: %v", r)
		}
	}
}

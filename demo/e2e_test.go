package demo_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/cml"
	"github.com/plasmd/plasmd/internal/engine/decode"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
)

// TestEndToEnd loads the embedded catalogs with the real loader, compiles
// every capability with the real CML compiler, sends it to a live demo
// server, decodes the answer with the real decoder and follows pagination to
// the end. It is the check that the demo works with plasmd itself, not just
// with this package's reading of the format.
func TestEndToEnd(t *testing.T) {
	srv, err := demo.Start(context.Background(), demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cats, err := catalogdir.LoadAll(demo.Catalogs, "catalogs")
	if err != nil {
		t.Fatalf("loading the demo catalogs: %v", err)
	}
	client := &http.Client{Timeout: 10 * time.Second}

	type want struct {
		vars map[string]any
		rows int // -1: at least one
	}
	cases := map[string]map[string]want{
		demo.TrackerEntryID: {
			"project_query": {nil, 4}, "project_get": {map[string]any{"id": "prj-1"}, 1},
			"user_query": {nil, 8}, "user_get": {map[string]any{"id": "usr-1"}, 1},
			"label_query": {nil, 7}, "comment_query": {nil, 150},
			"issue_query": {nil, 60}, "issue_search": {map[string]any{"q": "crashes"}, -1},
			"issue_get":      {map[string]any{"id": "iss-2"}, 1},
			"comment_create": {map[string]any{"issue_id": "iss-1", "body": "hi"}, 1},
			"issue_create":   {map[string]any{"title": "x", "labels": []any{"bug"}, "priority": 2}, 1},
			"issue_update":   {map[string]any{"id": "iss-3", "priority": 2}, 1},
			"issue_delete":   {map[string]any{"id": "iss-4"}, 0},
			"issue_close":    {map[string]any{"id": "iss-5"}, 1},
		},
		demo.KanbanEntryID: {
			"team_query": {nil, 3}, "team_get": {map[string]any{"id": "team-1"}, 1},
			"user_query": {nil, 6}, "issue_query": {nil, 40},
			"issue_get":    {map[string]any{"id": "kiss-1"}, 1},
			"issue_create": {map[string]any{"team_id": "team-1", "title": "x", "estimate": 2}, 1},
		},
	}

	for _, c := range cats {
		if c.Module != nil {
			// Signing and decoding happen in the catalog's vendor module,
			// which this native pipeline does not run; server/vendor_test.go
			// covers it end to end.
			continue
		}
		c.HTTPBackend = demo.Rebase(c.HTTPBackend, srv.URL())
		names := make([]string, 0, len(c.Capabilities))
		for n := range c.Capabilities {
			names = append(names, n)
		}
		// Reads first, so that their row counts are the seeded ones.
		sort.Slice(names, func(i, j int) bool {
			ri, rj := c.Capabilities[names[i]].IsRead(), c.Capabilities[names[j]].IsRead()
			if ri != rj {
				return ri
			}
			return names[i] < names[j]
		})
		for _, name := range names {
			t.Run(c.EntryID+"/"+name, func(t *testing.T) {
				if c.ViewServing(name) != nil {
					t.Skip("a view sends no request of its own; the server's language matrix runs it against this backend")
				}
				w, ok := cases[c.EntryID][name]
				if !ok {
					t.Fatalf("no expectation for %s", name)
				}
				cp := c.Capabilities[name]
				var page map[string]any
				total := 0
				for n := 0; ; n++ {
					if n > 20 {
						t.Fatal("pagination does not end")
					}
					creq, aerr := cml.Compile(c, &abi.CompileRequest{EntryID: c.EntryID, Capability: name, Vars: w.vars, Page: page})
					if aerr != nil {
						t.Fatalf("compile: %+v", aerr)
					}
					req, err := http.NewRequest(creq.Method, creq.URL, strings.NewReader(creq.Body))
					if err != nil {
						t.Fatal(err)
					}
					for _, h := range creq.Headers {
						req.Header.Add(h[0], h[1])
					}
					if creq.Auth != nil {
						req.Header.Set("Authorization", "Bearer "+srv.Backend().Secrets()[creq.Auth.Secret])
					}
					res, err := client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					body, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if res.StatusCode/100 != 2 {
						t.Fatalf("%s %s %s → %d %s", creq.Method, creq.URL, creq.Body, res.StatusCode, body)
					}
					dres, aerr := decode.Decode(c, &abi.DecodeRequest{EntryID: c.EntryID, Capability: name, Status: res.StatusCode, Page: creq.Page}, body)
					if aerr != nil {
						t.Fatalf("decode: %+v (%s)", aerr, body)
					}
					total += len(dres.Table.Rows)
					if cp.Kind == catalog.KindGet {
						checkEmbedded(t, c, name, res.StatusCode, body)
					}
					if dres.Next == nil {
						break
					}
					page = dres.Next
				}
				if (w.rows < 0 && total == 0) || (w.rows >= 0 && total != w.rows) {
					t.Fatalf("decoded %d rows, want %d", total, w.rows)
				}
			})
		}
	}
}

// checkEmbedded decodes every from_parent_get relation of a get's entity.
func checkEmbedded(t *testing.T, c *catalog.Catalog, capName string, status int, body []byte) {
	t.Helper()
	ent := c.Entities[c.Capabilities[capName].Entity]
	for rn, rel := range ent.Relations {
		if rel.Materialize.Kind != catalog.FromParentGet {
			continue
		}
		rr, aerr := decode.Decode(c, &abi.DecodeRequest{EntryID: c.EntryID, Capability: capName, Status: status, Relation: rn}, body)
		if aerr != nil {
			t.Fatalf("relation %s: %+v", rn, aerr)
		}
		if len(rr.Table.Rows) == 0 || !slices.Contains(rr.Table.Columns, "id") {
			t.Errorf("relation %s decoded %d rows with columns %v", rn, len(rr.Table.Rows), rr.Table.Columns)
		}
	}
}

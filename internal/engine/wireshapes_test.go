package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/fixture"
)

// TestNegativePartIndexRefusedAtLoad: a wire catalog whose derive has a
// negative part_index (the loader refuses it, a hand-made wire catalog
// need not) is refused by Check when the engine loads it, with a typed
// catalog error naming the field, instead of being installed and then
// indexing parts[-1] when the guest decodes.
func TestNegativePartIndexRefusedAtLoad(t *testing.T) {
	cat := fixture.Catalog(t, "plasmforms")
	ent := cat.Entities["Note"]
	if ent == nil || ent.Fields["repo"] == nil || ent.Fields["repo"].Derive == nil {
		t.Fatal("fixture plasmforms no longer has Note.repo with a derive rule")
	}
	ent.Fields["repo"].Derive.PartIndex = -1
	e := New()
	out := e.Handle(abi.ExportLoadCatalog, mustJSON(t, abi.LoadCatalogRequest{Catalog: cat}))
	var ae abi.Error
	if err := json.Unmarshal(out[1:], &ae); out[0] == abi.StatusOK || err != nil {
		t.Fatalf("load answered status %d: %s", out[0], out[1:])
	}
	if ae.Code != abi.CodeCatalog || !strings.Contains(ae.Message, "field repo: derive part_index -1 is negative") {
		t.Fatalf("load refused with %s: %s", ae.Code, ae.Message)
	}
	req := abi.DecodeRequest{EntryID: cat.EntryID, Capability: "note_get", Status: 200}
	out = e.Handle(abi.ExportDecode, mustFrame(t, req, []byte(`{"id":"n1","url":"https://code.example/repos/a/b"}`)))
	ae = abi.Error{}
	if err := json.Unmarshal(out[1:], &ae); out[0] == abi.StatusOK || err != nil || ae.Code == abi.CodeInternal {
		t.Fatalf("decode over the refused catalog answered status %d: %s", out[0], out[1:])
	}
}

// TestHostileWireShapes: hand-made wire catalogs with broken shapes Check
// may let through (views emptied or misnamed, bogus kinds, empty names,
// duplicate lists, a cardinality other than one or many) are loaded and
// exercised without the engine's recover (loadAndExercise): each is
// refused with a typed error or served, never panicked on.
func TestHostileWireShapes(t *testing.T) {
	muts := map[string]func(c map[string]any){
		"view nodes emptied": func(c map[string]any) {
			for _, v := range c["views"].(map[string]any) {
				v.(map[string]any)["nodes"] = []any{}
			}
		},
		"view name mismatch": func(c map[string]any) {
			for _, v := range c["views"].(map[string]any) {
				v.(map[string]any)["name"] = "other"
			}
		},
		"view output kinds bogus": func(c map[string]any) {
			for _, v := range c["views"].(map[string]any) {
				for _, o := range v.(map[string]any)["output"].([]any) {
					o.(map[string]any)["kind"] = "bogus"
				}
			}
		},
		"view bind node_field missing field": func(c map[string]any) {
			for _, v := range c["views"].(map[string]any) {
				for _, n := range v.(map[string]any)["nodes"].([]any) {
					for _, b := range n.(map[string]any)["bind"].([]any) {
						b.(map[string]any)["kind"] = "node_field"
						b.(map[string]any)["node"] = ""
					}
				}
			}
		},
		"key_vars three dup": func(c map[string]any) {
			for _, e := range c["entities"].(map[string]any) {
				em := e.(map[string]any)
				if id, ok := em["id_field"].(string); ok {
					em["key_vars"] = []any{id, id, id}
				}
			}
		},
		"cardinality bogus": func(c map[string]any) {
			for _, e := range c["entities"].(map[string]any) {
				if rels, ok := e.(map[string]any)["relations"].(map[string]any); ok {
					for _, r := range rels {
						r.(map[string]any)["cardinality"] = "ONE"
					}
				}
			}
		},
		"bindings to missing fields": func(c map[string]any) {
			for _, e := range c["entities"].(map[string]any) {
				if rels, ok := e.(map[string]any)["relations"].(map[string]any); ok {
					for _, r := range rels {
						m := r.(map[string]any)["materialize"].(map[string]any)
						m["bindings"] = map[string]any{"x": "nope", "": ""}
						m["param"] = ""
					}
				}
			}
		},
		"capability kinds bogus": func(c map[string]any) {
			for _, cp := range c["capabilities"].(map[string]any) {
				cp.(map[string]any)["kind"] = "bogus"
			}
		},
		"param names empty": func(c map[string]any) {
			for _, cp := range c["capabilities"].(map[string]any) {
				cp.(map[string]any)["parameters"] = []any{map[string]any{"name": "", "value_ref": "nope", "required": true}}
			}
		},
		"pagination param order dup": func(c map[string]any) {
			for _, m := range c["mappings"].(map[string]any) {
				if p, ok := m.(map[string]any)["pagination"].(map[string]any); ok {
					var names []any
					for n := range p["params"].(map[string]any) {
						names = append(names, n, n)
					}
					p["param_order"] = names
				}
			}
		},
		"path var empty": func(c map[string]any) {
			for _, m := range c["mappings"].(map[string]any) {
				m.(map[string]any)["path"] = []any{map[string]any{"type": "var"}, map[string]any{"type": "literal"}}
			}
		},
		"id_from empty with ghost id": func(c map[string]any) {
			for _, e := range c["entities"].(map[string]any) {
				em := e.(map[string]any)
				em["id_field"] = "ghost"
				em["implicit_request_identity"] = true
			}
		},
	}
	for _, base := range wireBases(t) {
		for name, mut := range muts {
			var doc map[string]any
			if err := json.Unmarshal(base, &doc); err != nil {
				t.Fatal(err)
			}
			ok := func() (ok bool) {
				defer func() { recover() }() // bases lacking the key
				mut(doc)
				return true
			}()
			if !ok {
				continue
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s on %.40s: panic %v", name, base, r)
					}
				}()
				raw, _ := json.Marshal(doc)
				loadAndExercise(t, raw)
			}()
		}
	}
}

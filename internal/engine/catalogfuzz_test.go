package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/fixture"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// The wire catalog crosses the sandbox boundary: the engine must treat it
// as hostile. FuzzWireCatalog mutates the JSON of valid catalogs (a key
// deleted or renamed, a value nulled, emptied or replaced by another name
// the catalog uses) and loads the result: the load is refused with a
// typed catalog error, or every op of the engine on it (plans of small
// programs over each entity and relation, request compiles, templates,
// decode specs and decodes) answers without a panic. The ops run through
// dispatch, not Handle, so a panic is the fuzzer's failure with its stack
// rather than an internal error.

// wireBases are the JSON forms of the shared fixture catalogs.
func wireBases(tb testing.TB) [][]byte {
	var out [][]byte
	for _, name := range []string{"tracker", "kanban", "plasmforms", "views", "linear", "embedded"} {
		b, err := json.Marshal(fixture.Catalog(tb, name))
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return append(out, mustJSON(tb, shopCatalog()))
}

func FuzzWireCatalog(f *testing.F) {
	bases := wireBases(f)
	for i := range bases {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte{0, 17, 3, 1, 200, 9, 5, 77, 2})
		f.Add(uint8(i), []byte{6, 40, 1, 0, 99, 4, 3, 250, 8})
	}
	f.Fuzz(func(t *testing.T, base uint8, ops []byte) {
		var doc any
		if err := json.Unmarshal(bases[int(base)%len(bases)], &doc); err != nil {
			t.Fatal(err)
		}
		for i := 0; i+2 < len(ops) && i < 3*8; i += 3 {
			doc = mutate(doc, ops[i], ops[i+1], ops[i+2])
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		loadAndExercise(t, raw)
	})
}

// TestWireCatalogBasesWork: every base of the fuzzer loads and plans,
// so a mutation that breaks nothing is exercised in full.
func TestWireCatalogBasesWork(t *testing.T) {
	for _, b := range wireBases(t) {
		if n := loadAndExercise(t, b); n == 0 {
			t.Fatalf("base %.60s: nothing planned", b)
		}
	}
}

// loadAndExercise loads raw as a wire catalog and, when the engine takes
// it, runs every op on it; it returns how many programs planned.
func loadAndExercise(t *testing.T, raw []byte) int {
	t.Helper()
	e := New()
	in := append(append([]byte(`{"catalog":`), raw...), '}')
	out := e.dispatch(abi.ExportLoadCatalog, in)
	if out[0] != abi.StatusOK {
		var ae abi.Error
		if err := json.Unmarshal(out[1:], &ae); err != nil || ae.Message == "" {
			t.Fatalf("load refused without a typed error: %q", out[1:])
		}
		if ae.Code != abi.CodeCatalog && ae.Code != abi.CodeBadRequest {
			t.Fatalf("load refused with code %s: %s", ae.Code, ae.Message)
		}
		return 0
	}
	var lr abi.LoadCatalogResponse
	if err := json.Unmarshal(out[1:], &lr); err != nil {
		t.Fatal(err)
	}
	cat := e.Catalog(lr.EntryID)
	planned := 0
	for _, prog := range programsFor(cat) {
		for _, wire := range []int{0, plan.WireVersion} {
			req := abi.PlanRequest{Program: prog, Entries: []string{cat.EntryID}, PlanWire: wire}
			if out := e.dispatch(abi.ExportPlan, mustFrame(t, req, nil)); out[0] == abi.StatusOK {
				planned++
			}
		}
	}
	for _, cp := range sortedKeys(cat.Capabilities) {
		vars := map[string]any{"id": "x1"}
		if c := cat.Capabilities[cp]; c != nil {
			for _, p := range c.Parameters {
				vars[p.Name] = "v"
			}
		}
		e.dispatch(abi.ExportCompile, mustJSON(t, abi.CompileRequest{EntryID: cat.EntryID, Capability: cp, Vars: vars}))
		e.dispatch(abi.ExportTemplate, mustJSON(t, abi.TemplateRequest{EntryID: cat.EntryID, Capability: cp}))
		rels := []string{""}
		if c := cat.Capabilities[cp]; c != nil && cat.Entities[c.Entity] != nil {
			rels = append(rels, sortedKeys(cat.Entities[c.Entity].Relations)...)
		}
		for _, rel := range rels {
			e.dispatch(abi.ExportDecodeSpec, mustJSON(t, abi.DecodeSpecRequest{EntryID: cat.EntryID, Capability: cp, Relation: rel}))
			for _, body := range []string{`[{"id":"x1","name":"n"}]`, `{"id":"x1"}`} {
				req := abi.DecodeRequest{EntryID: cat.EntryID, Capability: cp, Relation: rel, Status: 200}
				e.dispatch(abi.ExportDecode, mustFrame(t, req, []byte(body)))
			}
		}
	}
	return planned
}

// programsFor writes small programs over every entity of cat: a list, a
// get, a filter, a projection, each relation from a get and a list, and
// each method.
func programsFor(cat *catalog.Catalog) []string {
	var out []string
	for _, name := range sortedKeys(cat.Entities) {
		ent := cat.Entities[name]
		out = append(out, name, name+`("x1")`, name+`.limit(2)`)
		if ent == nil {
			continue
		}
		fields := fieldsOf(ent)
		if len(fields) > 0 {
			f := fields[0]
			out = append(out, fmt.Sprintf(`%s{%s="v"}.limit(2)`, name, f), fmt.Sprintf(`%s("x1")[%s]`, name, strings.Join(fields, ",")),
				fmt.Sprintf(`%s.sort(%s).limit(2)[%s]`, name, f, f), name+`~"text"`)
		}
		for _, other := range sortedKeys(cat.Entities) {
			// Reverse traversal and foreign predicates walk reference
			// fields in field order.
			out = append(out, name+`("x1").^`+other, fmt.Sprintf(`%s{%s.id="v"}.limit(2)`, other, name))
		}
		for _, r := range sortedKeys(ent.Relations) {
			out = append(out, name+`("x1").`+r, name+`.limit(2).`+r)
		}
		for _, cp := range sortedKeys(cat.Capabilities) {
			if c := cat.Capabilities[cp]; c != nil && c.Entity == name {
				var args []string
				for _, p := range c.Parameters {
					args = append(args, p.Name+`="v"`)
				}
				out = append(out, name+`("x1").`+catalog.MethodLabel(c)+`(`+strings.Join(args, ", ")+`)`)
			}
		}
	}
	if len(out) > 600 {
		out = out[:600]
	}
	return out
}

// fieldsOf is ent's field order, or its field names sorted.
func fieldsOf(ent *catalog.Entity) []string {
	if len(ent.FieldOrder) > 0 {
		return ent.FieldOrder
	}
	return sortedKeys(ent.Fields)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mutate changes one node of doc, chosen by where among all nodes in a
// fixed walk order; what picks the change and with the replacement.
func mutate(doc any, what, where, with byte) any {
	type slot struct {
		parent any // map[string]any or []any
		key    string
		index  int
	}
	var slots []slot
	var names []string
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(t) {
				slots = append(slots, slot{parent: t, key: k})
				names = append(names, k)
				walk(t[k])
			}
		case []any:
			for i, e := range t {
				slots = append(slots, slot{parent: t, index: i})
				walk(e)
			}
		case string:
			names = append(names, t)
		}
	}
	walk(doc)
	if len(slots) == 0 {
		return doc
	}
	s := slots[(int(where)*256+int(with))%len(slots)]
	name := ""
	if len(names) > 0 {
		name = names[(int(with)*31+int(what))%len(names)]
	}
	var val any
	switch what % 8 {
	case 0:
		// delete the key (a list element becomes null)
		if m, ok := s.parent.(map[string]any); ok {
			delete(m, s.key)
			return doc
		}
		val = nil
	case 1:
		val = nil
	case 2:
		val = name
	case 3:
		val = map[string]any{}
	case 4:
		val = []any{}
	case 5:
		// rename the key to another name the catalog uses
		if m, ok := s.parent.(map[string]any); ok && name != "" {
			v := m[s.key]
			delete(m, s.key)
			m[name] = v
			return doc
		}
		val = name
	case 6:
		val = []any{name, ""}
	default:
		val = []any{-1.0, 0.0, 1e9, true}[int(with)%4]
	}
	if m, ok := s.parent.(map[string]any); ok {
		m[s.key] = val
	} else if l, ok := s.parent.([]any); ok {
		l[s.index] = val
	}
	return doc
}

// TestWireCatalogFieldOrderRefused: a field order naming a field the
// entity does not have made a reverse traversal panic in the planner
// (an internal error); the load now refuses the catalog, saying where.
func TestWireCatalogFieldOrderRefused(t *testing.T) {
	cat := fixture.Catalog(t, "tracker")
	cat.Entities["Issue"].FieldOrder = append(cat.Entities["Issue"].FieldOrder, "ghost")
	e := New()
	out := e.Handle(abi.ExportLoadCatalog, mustJSON(t, abi.LoadCatalogRequest{Catalog: cat}))
	var ae abi.Error
	if out[0] != abi.StatusError || json.Unmarshal(out[1:], &ae) != nil {
		t.Fatalf("load answered %q, want an error", out)
	}
	if ae.Code != abi.CodeCatalog || !strings.Contains(ae.Message, `entity Issue, field_order: names "ghost", which is not declared`) {
		t.Fatalf("error %+v", ae)
	}
	out = e.Handle(abi.ExportPlan, mustFrame(t, abi.PlanRequest{Program: `Project("p1").^Issue`, Entries: []string{cat.EntryID}}, nil))
	if out[0] != abi.StatusError || json.Unmarshal(out[1:], &ae) != nil || ae.Code == abi.CodeInternal {
		t.Fatalf("plan over the refused catalog answered %s", out[1:])
	}
}

package langcheck_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/cml"
	"github.com/plasmd/plasmd/internal/engine/decode"
	"github.com/plasmd/plasmd/internal/engine/lang"
	"github.com/plasmd/plasmd/internal/fixture"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/server/internal/teaching"
	"github.com/plasmd/plasmd/server/internal/teaching/teachingtest"
)

// notesBackend answers the plasmforms catalog's requests offline and
// records what it was sent.
type notesBackend struct {
	mu   sync.Mutex
	seen []string // "METHOD path?query body"
}

func (b *notesBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.seen = append(b.seen, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(body)))
	b.mu.Unlock()
	if r.Header.Get("Authorization") != "" {
		http.Error(w, "the native test sends no credentials", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	base := "http://" + r.Host
	switch r.Method + " " + r.URL.Path {
	case "GET /v1/notes":
		if r.URL.Query().Get("page") == "2" {
			io.WriteString(w, `{"hits":[{"id":"n3","title":"third","headers":[],"blocks":[{"ref":"x:label:green"}]}]}`)
			return
		}
		io.WriteString(w, `{"hits":[
			{"id":"n1","title":"first","meta":{"k":[1,2]},"url":"https://code.example/repos/acme/widgets","headers":[{"name":"From","value":"ann@example.com"}],"tag":"label:red"},
			{"id":"n2","title":"second","meta":"plain","url":"http://code.example/repos/acme/gears/pulls","headers":[{"name":"to","value":"x"}]}
		],"next_url":"`+base+`/v1/notes?page=2"}`)
	case "GET /v1/notes/n1":
		io.WriteString(w, `{"id":"n1","title":"first"}`)
	case "GET /v1/me":
		io.WriteString(w, `{"login":"ann","plan":"pro","profile":{"uid":"u-7"}}`)
	case "GET /v1/maxnote.json":
		io.WriteString(w, `8863`)
	case "POST /v1/n1:archive":
		w.WriteHeader(http.StatusNoContent)
	case "POST /v1/notes":
		w.Write(append(append([]byte(`{"id":"n9","meta":`), body...), '}'))
	case "PATCH /v1/notes/n1":
		var in map[string]any
		_ = json.Unmarshal(body, &in)
		fmt.Fprintf(w, `{"id":"n1","title":%q}`, in["title"])
	default:
		http.NotFound(w, r)
	}
}

// TestPlasmFormsEndToEnd loads plasmd's plasmforms catalog, teaches it,
// plans programs over each form, compiles their requests, sends them to an
// in-process backend and decodes the rows.
func TestPlasmFormsEndToEnd(t *testing.T) {
	loaded, err := catalogdir.LoadPathReport(fixture.Path(t, "catalogs", "plasmforms")) // plasmd's own catalog of each Plasm form
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Warnings) != 0 {
		t.Errorf("warnings: %v", loaded.Warnings)
	}
	cat := loaded.Catalog
	for name, want := range map[string]string{"note_reply": "gmail_rfc5322"} {
		if !strings.Contains(cat.Capabilities[name].Unavailable, want) {
			t.Errorf("%s: unavailable = %q, want it to mention %q", name, cat.Capabilities[name].Unavailable, want)
		}
	}
	backend := &notesBackend{}
	srv := httptest.NewServer(backend)
	defer srv.Close()
	cat.HTTPBackend = srv.URL
	// The native test sends no credentials: the egress host injects them.
	cat.Auth = catalog.Auth{Scheme: "none"}
	cats := map[string]*catalog.Catalog{cat.EntryID: cat}

	m := &symbol.Map{}
	w, err := teaching.Expose(m, teaching.Exposure{}, teaching.Request{Catalogs: cats, Intent: "archive, import and retitle notes",
		Seeds: []teaching.Seed{{EntryID: "plasmforms", Entity: "Note"}, {EntryID: "plasmforms", Entity: "Me"}, {EntryID: "plasmforms", Entity: "MaxNote"}, {EntryID: "plasmforms", Entity: "Digest"}}})
	if err != nil {
		t.Fatal(err)
	}
	rows := teaching.Rows(m, w)
	var taught strings.Builder
	for _, row := range rows {
		taught.WriteString(row.String() + "\n")
		if k, _ := symbol.Parse(row.Expr); k == symbol.KindValue || k == symbol.KindSlot {
			continue
		}
		program := teachingtest.Runnable(row.Expr, m, cats)
		if _, aerr := lang.Plan(&abi.PlanRequest{Program: program, Symbols: m.Clone(), Entries: w.Exposure.Entries()}, cats); aerr != nil {
			t.Errorf("taught row %q → %q rejected: %v", row.String(), program, aerr)
		}
	}
	text := taught.String()
	for _, want := range []string{"the one row (no id)", "reply"} {
		if want == "reply" {
			if strings.Contains(text, want) {
				t.Errorf("teaching shows the not-executable note_reply:\n%s", text)
			}
			continue
		}
		if !strings.Contains(text, want) {
			t.Errorf("teaching lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(text, "returns "+m.EntitySym("plasmforms", "Digest")+" · view") {
		t.Errorf("teaching lacks the view (one row):\n%s", text)
	}

	sym := func(entity string) string { return m.EntitySym("plasmforms", entity) }
	tests := []struct {
		name, program string
		want          [][]any
		sent          []string
	}{
		{"query, tagged condition, items key, next-url pages, json, derive", sym("Note") + `{q="x"}`,
			[][]any{
				{"n1", "first", map[string]any{"k": []any{int64(1), int64(2)}}, "widgets", "ann@example.com", "label:red"},
				{"n2", "second", "plain", "gears", nil, nil},
				{"n3", "third", nil, nil, nil, "label:green"},
			},
			[]string{"GET /v1/notes?q=x", "GET /v1/notes?page=2"}},
		{"get through a path variable not named id", sym("Note") + `("n1")`,
			[][]any{{"n1", "first", nil, nil, nil, nil}}, []string{"GET /v1/notes/n1"}},
		{"singleton with id_from", sym("Me"),
			[][]any{{"u-7", "ann", "pro"}}, []string{"GET /v1/me"}},
		{"wrap_root_scalar", sym("MaxNote"),
			[][]any{{int64(8863)}}, []string{"GET /v1/maxnote.json"}},
		{"action with elements and a suffixed path variable", sym("Note") + `("n1").` + m.MethodSym("plasmforms", "Note", "note_archive") + `()`,
			nil, []string{`POST /v1/n1:archive {"tags":["archived","n1"]}`}},
		{"create with an open input sent whole", sym("Note") + `.` + m.MethodSym("plasmforms", "Note", "note_import") + `(title="x", color="red")`,
			[][]any{{"n9", nil, map[string]any{"color": "red", "title": "x"}, nil, nil, nil}},
			[]string{`POST /v1/notes {"color":"red","title":"x"}`}},
		{"update with a preflight read of its target", sym("Note") + `("n1").` + m.MethodSym("plasmforms", "Note", "note_retitle") + `()`,
			[][]any{{"n1", "first", nil, nil, nil, nil}, {"n1", "Re: first", nil, nil, nil, nil}},
			[]string{"GET /v1/notes/n1", `PATCH /v1/notes/n1 {"title":"Re: first"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			backend.mu.Lock()
			backend.seen = nil
			backend.mu.Unlock()
			p, aerr := lang.Plan(&abi.PlanRequest{Program: tt.program, Symbols: m.Clone(), Entries: w.Exposure.Entries()}, cats)
			if aerr != nil {
				t.Fatalf("plan %q: %v (hint %s)", tt.program, aerr, aerr.Hint)
			}
			var got [][]any
			tables := map[int]abi.Table{}
			for _, n := range p.Nodes {
				if n.Capability == "" {
					continue
				}
				vars := map[string]any{}
				for k, v := range n.Args {
					vars[k] = v
				}
				for _, ref := range n.ArgRefs {
					src := tables[ref.Node]
					if len(src.Rows) != 1 || src.Col(ref.Field) < 0 {
						t.Fatalf("argument %s: node %d has %d rows", ref.Var, ref.Node, len(src.Rows))
					}
					vars[ref.Var] = src.Rows[0][src.Col(ref.Field)]
				}
				n.Args = vars
				tbl := run(t, cat, n)
				tables[n.ID] = tbl
				got = append(got, tbl.Rows...)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rows:\n got %#v\nwant %#v", got, tt.want)
			}
			if !reflect.DeepEqual(backend.seen, tt.sent) {
				t.Errorf("sent:\n got %q\nwant %q", backend.seen, tt.sent)
			}
		})
	}

	// Not-executable capabilities refuse to compile, saying why.
	_, cerr := cml.Compile(cat, &abi.CompileRequest{EntryID: cat.EntryID, Capability: "note_reply"})
	if cerr == nil || !strings.Contains(cerr.Message, "not executable here") {
		t.Errorf("compiling a not-executable capability: %v", cerr)
	}
	// A cardinality-one relation declared without materialize is, as in
	// Plasm, a reference embedded in the parent's object: it is read from
	// the note's get answer, under the relation's name.
	pl, aerr := lang.Plan(&abi.PlanRequest{Program: sym("Note") + `("n1").author`, Symbols: m.Clone(), Entries: w.Exposure.Entries()}, cats)
	if aerr != nil {
		t.Fatalf("following a declared-only reference: %v", aerr)
	}
	if last := pl.Nodes[len(pl.Nodes)-1]; last.Hop == nil || last.Hop.Materialize != catalog.FromParentGet || last.Hop.Relation != "author" || last.Entity != "Person" {
		t.Errorf("following a declared-only reference: last node %+v, want a from_parent_get hop to Person", last)
	}
}

// run compiles one plan node, sends it and decodes every page.
func run(t *testing.T, cat *catalog.Catalog, n plan.Node) abi.Table {
	t.Helper()
	var out abi.Table
	var page map[string]any
	for i := 0; i < 5; i++ {
		req, cerr := cml.Compile(cat, &abi.CompileRequest{EntryID: cat.EntryID, Capability: n.Capability, Vars: n.Args, Page: page})
		if cerr != nil {
			t.Fatalf("compile %s: %v", n.Capability, cerr)
		}
		hreq, err := http.NewRequest(req.Method, req.URL, strings.NewReader(req.Body))
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range req.Headers {
			hreq.Header.Add(h[0], h[1])
		}
		resp, err := http.DefaultClient.Do(hreq)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		dec, derr := decode.Decode(cat, &abi.DecodeRequest{EntryID: cat.EntryID, Capability: n.Capability, Status: resp.StatusCode, Page: req.Page, RequestURL: req.URL}, body)
		if derr != nil {
			t.Fatalf("decode %s: %v (body %s)", n.Capability, derr, body)
		}
		out.Columns = dec.Table.Columns
		out.Rows = append(out.Rows, dec.Table.Rows...)
		if dec.Next == nil {
			return out
		}
		page = dec.Next
	}
	t.Fatalf("%s: more than 5 pages", n.Capability)
	return out
}

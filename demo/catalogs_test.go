package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

type yamap = map[string]any

type demoCatalog struct {
	name     string
	domain   yamap
	mappings yamap
}

func loadCatalogs(t *testing.T) []demoCatalog {
	t.Helper()
	entries, err := fs.ReadDir(Catalogs, "catalogs")
	if err != nil {
		t.Fatal(err)
	}
	var out []demoCatalog
	for _, e := range entries {
		c := demoCatalog{name: e.Name()}
		for file, dst := range map[string]*yamap{"domain.yaml": &c.domain, "mappings.yaml": &c.mappings} {
			data, err := fs.ReadFile(Catalogs, "catalogs/"+e.Name()+"/"+file)
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(data, dst); err != nil {
				t.Fatalf("%s/%s: %v", e.Name(), file, err)
			}
		}
		out = append(out, c)
	}
	names := []string{}
	for _, c := range out {
		names = append(names, c.name)
	}
	if !slices.Equal(names, []string{KanbanEntryID, LedgerEntryID, TrackerEntryID}) {
		t.Fatalf("embedded catalogs %v", names)
	}
	return out
}

func m(v any) yamap {
	mm, _ := v.(yamap)
	return mm
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func sortedKeys(mm yamap) []string {
	ks := make([]string, 0, len(mm))
	for k := range mm {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// onlyKeys mirrors the loader's strictness, so that a typo in a demo catalog
// fails here, next to the catalog, rather than at server start.
func onlyKeys(t *testing.T, where string, mm yamap, allowed ...string) {
	t.Helper()
	for k := range mm {
		if !slices.Contains(allowed, k) {
			t.Errorf("%s: unknown key %q (allowed: %v)", where, k, allowed)
		}
	}
}

func checkExpr(t *testing.T, where string, e any, depth int) {
	t.Helper()
	if depth > 16 {
		t.Errorf("%s: expression nests too deep", where)
		return
	}
	x := m(e)
	if x == nil {
		t.Errorf("%s: expression is not a mapping: %v", where, e)
		return
	}
	switch x["type"] {
	case "var":
		onlyKeys(t, where, x, "type", "name")
		if s, _ := x["name"].(string); s == "" {
			t.Errorf("%s: var without name", where)
		}
	case "const":
		onlyKeys(t, where, x, "type", "value")
	case "object":
		onlyKeys(t, where, x, "type", "fields")
		for k, kv := range list(x["fields"]) {
			pair := list(kv)
			if len(pair) != 2 {
				t.Errorf("%s: object field %d is not [key, expr]", where, k)
				continue
			}
			checkExpr(t, fmt.Sprintf("%s.%v", where, pair[0]), pair[1], depth+1)
		}
	default:
		t.Errorf("%s: expression type %v is not used by the demo catalogs", where, x["type"])
	}
}

func TestCatalogsWellFormed(t *testing.T) {
	for _, c := range loadCatalogs(t) {
		t.Run(c.name, func(t *testing.T) {
			d := c.domain
			onlyKeys(t, "domain", d, "version", "http_backend", "auth", "values", "entities", "capabilities", "registry_aliases", "description", "module", "views")
			if v, _ := d["version"].(int); v < 1 {
				t.Errorf("version = %v", d["version"])
			}
			hb, _ := d["http_backend"].(string)
			if !strings.HasPrefix(hb, PlaceholderOrigin+"/") {
				t.Errorf("http_backend %q does not use the placeholder origin", hb)
			}
			auth := m(d["auth"])
			onlyKeys(t, "auth", auth, "scheme", "header", "param", "env", "token_url", "client_id_env", "client_secret_env", "scopes")

			values := m(d["values"])
			for name, v := range values {
				vv := m(v)
				onlyKeys(t, "values."+name, vv, "type", "target", "allowed_values", "value_format", "string_semantics", "items", "description")
				switch vv["type"] {
				case "string", "uuid", "integer", "number", "boolean", "blob":
				case "select", "multi_select":
					if len(list(vv["allowed_values"])) == 0 {
						t.Errorf("values.%s: select without allowed_values", name)
					}
				case "date":
					if !slices.Contains([]string{"rfc3339", "iso8601_date", "unix_ms", "unix_sec"}, vv["value_format"].(string)) {
						t.Errorf("values.%s: value_format %v", name, vv["value_format"])
					}
				case "array":
					if ref, _ := m(vv["items"])["value_ref"].(string); values[ref] == nil {
						t.Errorf("values.%s: items.value_ref %q undefined", name, ref)
					}
				case "entity_ref":
					if tgt, _ := vv["target"].(string); m(d["entities"])[tgt] == nil {
						t.Errorf("values.%s: target %q undefined", name, tgt)
					}
				default:
					t.Errorf("values.%s: type %v", name, vv["type"])
				}
			}

			entities := m(d["entities"])
			caps := m(d["capabilities"])
			paramsOf := func(capName string) []string {
				var ps []string
				for _, p := range list(m(caps[capName])["parameters"]) {
					ps = append(ps, m(p)["name"].(string))
				}
				return ps
			}
			for en, e := range entities {
				ee := m(e)
				onlyKeys(t, en, ee, "id_field", "key_vars", "description", "fields", "relations", "abstract", "primary_read")
				fields := m(ee["fields"])
				if id, _ := ee["id_field"].(string); fields[id] == nil {
					t.Errorf("%s: id_field %q is not a field", en, id)
				}
				if ee["description"] == nil {
					t.Errorf("%s: no description", en)
				}
				if pr, ok := ee["primary_read"].(string); ok && (m(caps[pr]) == nil || m(caps[pr])["kind"] != "get") {
					t.Errorf("%s: primary_read %q is not a get", en, pr)
				}
				for fn, f := range fields {
					ff := m(f)
					onlyKeys(t, en+"."+fn, ff, "value_ref", "required", "description", "path")
					if ref, _ := ff["value_ref"].(string); values[ref] == nil {
						t.Errorf("%s.%s: value_ref %q undefined", en, fn, ref)
					}
				}
				for rn, r := range m(ee["relations"]) {
					rr := m(r)
					where := en + "." + rn
					onlyKeys(t, where, rr, "target", "cardinality", "description", "materialize")
					if entities[rr["target"].(string)] == nil {
						t.Errorf("%s: target %v undefined", where, rr["target"])
					}
					if rr["cardinality"] != "one" && rr["cardinality"] != "many" {
						t.Errorf("%s: cardinality %v", where, rr["cardinality"])
					}
					mat := m(rr["materialize"])
					onlyKeys(t, where+".materialize", mat, "kind", "path", "capability", "param", "bindings")
					switch mat["kind"] {
					case "from_parent_get":
						if len(list(mat["path"])) == 0 {
							t.Errorf("%s: from_parent_get without path", where)
						}
						for _, step := range list(mat["path"]) {
							onlyKeys(t, where+".path", m(step), "key", "wildcard")
						}
					case "query_scoped", "query_scoped_bindings":
						capName, _ := mat["capability"].(string)
						cp := m(caps[capName])
						if cp == nil || cp["entity"] != rr["target"] || (cp["kind"] != "query" && cp["kind"] != "search") {
							t.Errorf("%s: capability %q is not a query on %v", where, capName, rr["target"])
						}
						if mat["kind"] == "query_scoped" && !slices.Contains(paramsOf(capName), mat["param"].(string)) {
							t.Errorf("%s: %s has no parameter %v", where, capName, mat["param"])
						}
						for p, pf := range m(mat["bindings"]) {
							if !slices.Contains(paramsOf(capName), p) {
								t.Errorf("%s: %s has no parameter %q", where, capName, p)
							}
							if fields[pf.(string)] == nil {
								t.Errorf("%s: binding source %v is not a field of %s", where, pf, en)
							}
						}
					case nil:
						if !viewOutputs(d, en, rn) {
							t.Errorf("%s: no materialize, and no view outputs it", where)
						}
					default:
						t.Errorf("%s: materialize kind %v", where, mat["kind"])
					}
				}
			}

			for cn, cp := range caps {
				cc := m(cp)
				onlyKeys(t, cn, cc, "kind", "entity", "description", "parameters", "provides", "output")
				en, _ := cc["entity"].(string)
				if entities[en] == nil {
					t.Errorf("%s: entity %q undefined", cn, en)
					continue
				}
				if !strings.HasPrefix(cn, strings.ToLower(en)+"_") {
					t.Errorf("%s: name does not start with %s_", cn, strings.ToLower(en))
				}
				if !slices.Contains([]string{"query", "search", "get", "create", "update", "delete", "action"}, cc["kind"].(string)) {
					t.Errorf("%s: kind %v", cn, cc["kind"])
				}
				if cc["kind"] == "action" && cc["provides"] == nil && cc["output"] == nil {
					t.Errorf("%s: action without provides or output", cn)
				}
				for _, p := range list(cc["parameters"]) {
					pp := m(p)
					onlyKeys(t, cn+".parameters", pp, "name", "value_ref", "required", "role")
					if ref, _ := pp["value_ref"].(string); values[ref] == nil {
						t.Errorf("%s.%v: value_ref %q undefined", cn, pp["name"], ref)
					}
					if role, ok := pp["role"].(string); ok && !slices.Contains([]string{"filter", "search", "sort", "sort_direction", "response_control", "scope"}, role) {
						t.Errorf("%s.%v: role %q", cn, pp["name"], role)
					}
				}
				for _, f := range list(cc["provides"]) {
					if m(m(entities[en])["fields"])[f.(string)] == nil {
						t.Errorf("%s: provides unknown field %v", cn, f)
					}
				}
			}

			// Every capability has a mapping and vice versa.
			if got, want := sortedKeys(c.mappings), sortedKeys(caps); !slices.Equal(got, want) {
				t.Errorf("mappings %v\ncapabilities %v", got, want)
			}
			for mn, mp := range c.mappings {
				mm := m(mp)
				if mm["transport"] == "view" {
					onlyKeys(t, "mappings."+mn, mm, "transport", "view")
					if m(d["views"])[fmt.Sprint(mm["view"])] == nil {
						t.Errorf("mappings.%s: view %v undefined", mn, mm["view"])
					}
					continue
				}
				onlyKeys(t, "mappings."+mn, mm, "method", "path", "query", "body", "headers", "body_format", "transport", "response", "pagination")
				if !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, mm["method"].(string)) {
					t.Errorf("%s: method %v", mn, mm["method"])
				}
				for _, seg := range list(mm["path"]) {
					s := m(seg)
					switch s["type"] {
					case "literal":
						onlyKeys(t, mn+".path", s, "type", "value")
					case "var":
						onlyKeys(t, mn+".path", s, "type", "name")
					default:
						t.Errorf("%s: path segment %v", mn, seg)
					}
				}
				for _, k := range []string{"query", "body", "headers"} {
					if mm[k] != nil {
						checkExpr(t, mn+"."+k, mm[k], 0)
					}
				}
				switch r := mm["response"].(type) {
				case nil:
				case string:
					if !slices.Contains([]string{"single", "bare_list", "results_list", "items_list"}, r) {
						t.Errorf("%s: response shorthand %q", mn, r)
					}
				case yamap:
					onlyKeys(t, mn+".response", r, "items", "items_path", "single", "item_inner_key")
				default:
					t.Errorf("%s: response %v", mn, r)
				}
				if pg := m(mm["pagination"]); pg != nil {
					onlyKeys(t, mn+".pagination", pg, "params", "location", "response_prefix", "stop_when")
					for pn, p := range m(pg["params"]) {
						pp := m(p)
						onlyKeys(t, mn+".pagination."+pn, pp, "counter", "step", "max", "fixed", "from_response")
						n := 0
						for _, k := range []string{"counter", "fixed", "from_response"} {
							if _, ok := pp[k]; ok {
								n++
							}
						}
						if n != 1 {
							t.Errorf("%s.pagination.%s: want exactly one of counter, fixed, from_response", mn, pn)
						}
					}
					onlyKeys(t, mn+".pagination.stop_when", m(pg["stop_when"]), "field", "eq", "absent")
					if kind := m(caps[mn])["kind"]; kind != "query" && kind != "search" {
						t.Errorf("%s: pagination on a %v capability", mn, kind)
					}
				}
			}
		})
	}
}

func TestRebase(t *testing.T) {
	cases := []struct{ in, base, want string }{
		{"http://127.0.0.1:0/tracker/api", "http://127.0.0.1:41234", "http://127.0.0.1:41234/tracker/api"},
		{"http://127.0.0.1:0/kanban", "http://127.0.0.1:5/", "http://127.0.0.1:5/kanban"},
		{"http://127.0.0.1:0", "http://127.0.0.1:5", "http://127.0.0.1:5"},
		{"http://127.0.0.1:00/x", "http://127.0.0.1:5", "http://127.0.0.1:00/x"},
		{"http://127.0.0.1:0123/x", "http://127.0.0.1:5", "http://127.0.0.1:0123/x"},
		{"https://api.example.com/v1", "http://127.0.0.1:5", "https://api.example.com/v1"},
		{"", "http://127.0.0.1:5", ""},
	}
	for _, c := range cases {
		if got := Rebase(c.in, c.base); got != c.want {
			t.Errorf("Rebase(%q, %q) = %q, want %q", c.in, c.base, got, c.want)
		}
	}
}

// cmlEval evaluates the CML subset the demo catalogs use (var, const,
// object); null object values are omitted, as the format specifies.
func cmlEval(e any, env map[string]any) any {
	x := m(e)
	switch x["type"] {
	case "var":
		return env[x["name"].(string)]
	case "const":
		return x["value"]
	case "object":
		out := map[string]any{}
		for _, kv := range list(x["fields"]) {
			pair := list(kv)
			if v := cmlEval(pair[1], env); v != nil {
				out[pair[0].(string)] = v
			}
		}
		return out
	}
	return nil
}

func walk(v any, path []any) (any, bool) {
	for _, p := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[p.(string)]; !ok {
			return nil, false
		}
	}
	return v, true
}

// TestCatalogsAgainstBackend runs every mapping of both catalogs, compiled
// by hand, against a live Server, and checks that the wire answers where the
// catalog says: rows at items_path, each provided field at its path, paging
// fields under response_prefix, embedded relations in the GET response.
func TestCatalogsAgainstBackend(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL = %q", srv.URL())
	}
	client := &http.Client{Timeout: 10 * time.Second}

	envs := map[string]map[string]map[string]any{
		TrackerEntryID: {
			"project_query": {}, "project_get": {"id": "prj-1"}, "user_query": {"id": "usr-2"}, "user_get": {"id": "usr-1"},
			"label_query": {}, "comment_query": {"issue_id": "iss-1"}, "comment_create": {"issue_id": "iss-1", "body": "hi"},
			"issue_query": {"status": "open"}, "issue_search": {"q": "crashes"}, "issue_get": {"id": "iss-2"},
			"issue_create": {"title": "x", "labels": []any{"bug"}}, "issue_update": {"id": "iss-3", "priority": 2},
			"issue_delete": {"id": "iss-4"}, "issue_close": {"id": "iss-5"},
		},
		KanbanEntryID: {
			"team_query": {}, "team_get": {"id": "team-1"}, "user_query": {}, "issue_query": {"team_id": "team-1"},
			"issue_get": {"id": "kiss-1"}, "issue_create": {"team_id": "team-1", "title": "x", "estimate": 2},
		},
	}

	for _, c := range loadCatalogs(t) {
		if c.domain["module"] != nil {
			// Requests to a vendor-module catalog must be signed by its
			// module; ledger_test.go and server/vendor_test.go cover it.
			continue
		}
		base := Rebase(c.domain["http_backend"].(string), srv.URL())
		entities := m(c.domain["entities"])
		for _, capName := range sortedKeys(c.mappings) {
			t.Run(c.name+"/"+capName, func(t *testing.T) {
				if m(c.mappings[capName])["transport"] == "view" {
					t.Skip("a view sends no request of its own: its steps' capabilities are tested here, the view by the server's language matrix and taught rows")
				}
				env, ok := envs[c.name][capName]
				if !ok {
					t.Fatalf("no test environment for %s", capName)
				}
				mp := m(c.mappings[capName])
				cp := m(m(c.domain["capabilities"])[capName])
				var segs []string
				for _, s := range list(mp["path"]) {
					ss := m(s)
					if ss["type"] == "var" {
						segs = append(segs, url.PathEscape(fmt.Sprint(env[ss["name"].(string)])))
					} else {
						segs = append(segs, ss["value"].(string))
					}
				}
				u := base + "/" + strings.Join(segs, "/")
				q := url.Values{}
				if mp["query"] != nil {
					for k, v := range cmlEval(mp["query"], env).(map[string]any) {
						q.Set(k, fmt.Sprint(v))
					}
				}
				var body any
				if mp["body"] != nil {
					body = cmlEval(mp["body"], env)
				}
				// Apply the first page of pagination the way an executor would.
				pg := m(mp["pagination"])
				for pn, p := range m(pg["params"]) {
					var v any
					if ctr, ok := m(p)["counter"]; ok {
						v = ctr
					} else if f, ok := m(p)["fixed"]; ok {
						v = f
					} else {
						continue // from_response: absent on the first page
					}
					if pg["location"] == "body" {
						vars := body.(map[string]any)["variables"].(map[string]any)
						vars[pn] = v
					} else {
						q.Set(pn, fmt.Sprint(v))
					}
				}
				if len(q) > 0 {
					u += "?" + q.Encode()
				}
				var rd io.Reader
				if body != nil {
					data, _ := json.Marshal(body)
					rd = bytes.NewReader(data)
				}
				req, _ := http.NewRequest(mp["method"].(string), u, rd)
				if body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				if m(c.domain["auth"])["scheme"] == "bearer_token" {
					req.Header.Set("Authorization", "Bearer "+srv.Backend().Secrets()[m(c.domain["auth"])["env"].(string)])
				}
				res, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode/100 != 2 {
					t.Fatalf("%s %s → %d %s", req.Method, u, res.StatusCode, raw)
				}
				if cp["kind"] == "delete" {
					return
				}
				var doc any
				if err := json.Unmarshal(raw, &doc); err != nil {
					t.Fatalf("response is not JSON: %s", raw)
				}
				if errs, ok := walk(doc, []any{"errors"}); ok {
					t.Fatalf("GraphQL errors: %v", errs)
				}

				var single bool
				var itemsPath []any
				switch r := mp["response"].(type) {
				case string:
					single = r == "single"
					if r == "items_list" {
						itemsPath = []any{"items"}
					}
				case yamap:
					single, _ = r["single"].(bool)
					itemsPath = list(r["items_path"])
				}
				at, ok := walk(doc, itemsPath)
				if !ok {
					t.Fatalf("items_path %v not in %s", itemsPath, raw)
				}
				var rows []any
				if single {
					rows = []any{at}
				} else {
					rows = list(at)
				}
				if len(rows) == 0 || rows[0] == nil {
					t.Fatalf("no rows at %v in %s", itemsPath, raw)
				}
				ent := m(entities[cp["entity"].(string)])
				for _, row := range rows {
					for _, f := range list(cp["provides"]) {
						fd := m(m(ent["fields"])[f.(string)])
						path := list(fd["path"])
						if path == nil {
							path = []any{f}
						}
						// A nested path may stop at a null parent (unassigned issue).
						if _, ok := walk(row, path[:1]); !ok {
							t.Errorf("row lacks provided field %v (path %v): %v", f, path, row)
						}
					}
				}
				if cp["kind"] == "get" {
					for rn, r := range m(ent["relations"]) {
						mat := m(m(r)["materialize"])
						if mat["kind"] != "from_parent_get" {
							continue
						}
						key := m(list(mat["path"])[0])["key"]
						embedded, ok := walk(rows[0], []any{key})
						if !ok {
							t.Errorf("relation %s: key %v missing from GET row", rn, key)
						}
						// The embedded rows are handed out as rows of the
						// target entity, so they must carry its required
						// fields (a team without its key is not a Team row).
						target := m(entities[m(r)["target"].(string)])
						objs := list(embedded)
						if o, isObj := embedded.(yamap); isObj {
							objs = []any{o}
						}
						for _, o := range objs {
							for fn, fd := range m(target["fields"]) {
								if req, _ := m(fd)["required"].(bool); !req {
									continue
								}
								path := list(m(fd)["path"])
								if path == nil {
									path = []any{fn}
								}
								if v, ok := walk(o, path); !ok || v == nil {
									t.Errorf("relation %s: embedded %v lacks required %s.%s", rn, o, m(r)["target"], fn)
								}
							}
						}
					}
				}
				if pg != nil {
					scope, ok := walk(doc, list(pg["response_prefix"]))
					if !ok {
						t.Fatalf("response_prefix %v not in %s", pg["response_prefix"], raw)
					}
					if sw := m(pg["stop_when"]); sw != nil {
						if _, ok := walk(scope, []any{sw["field"]}); !ok {
							t.Errorf("stop_when field %v not in %v", sw["field"], scope)
						}
					}
					for _, p := range m(pg["params"]) {
						if f, ok := m(p)["from_response"]; ok {
							if _, ok := walk(scope, []any{f}); !ok {
								t.Errorf("from_response field %v not in %v", f, scope)
							}
						}
					}
				}
			})
		}
	}
}

func TestServerLifecycle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Start(ctx, Options{TrackerToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(srv.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("healthz = %d", res.StatusCode)
	}
	if srv.Backend().TrackerToken() != "tok" {
		t.Errorf("token not passed through")
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := http.Get(srv.URL() + "/healthz"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server still answers after its context was cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close after cancel: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if _, err := Start(cctx, Options{}); err == nil {
		t.Errorf("Start with a cancelled context succeeded")
	}
}

// viewOutputs reports whether a view of domain d outputs relation rel of
// entity: such a relation has no materialize, it is filled by the view.
func viewOutputs(d map[string]any, entity, rel string) bool {
	for _, v := range m(d["views"]) {
		vv := m(v)
		if vv["entity"] != entity {
			continue
		}
		for _, ro := range list(vv["relation_outputs"]) {
			if m(ro)["relation"] == rel {
				return true
			}
		}
	}
	return false
}

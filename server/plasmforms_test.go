package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
	"github.com/plasmd/plasmd/server"
)

// TestPlasmFormsThroughServer runs programs over plasmd's plasmforms catalog
// (one of each Plasm form) through the HTTP surface and the Wasm engine,
// against a loopback backend that requires the OAuth bearer token the
// catalog names as a tenant secret.
func TestPlasmFormsThroughServer(t *testing.T) {
	const token = "tok-from-tenant-secrets"
	var mu sync.Mutex
	var seen []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(body)))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "GET /v1/notes":
			if r.URL.Query().Get("page") == "2" {
				io.WriteString(w, `{"hits":[{"id":"n3","title":"third"}]}`)
				return
			}
			fmt.Fprintf(w, `{"hits":[{"id":"n1","title":"first","meta":{"k":1},"url":"https://code.example/repos/acme/widgets","headers":[{"name":"From","value":"ann@example.com"}]}],"next_url":"http://%s/v1/notes?page=2"}`, r.Host)
		case "GET /v1/notes/n1":
			io.WriteString(w, `{"id":"n1","title":"first"}`)
		case "GET /v1/me":
			io.WriteString(w, `{"login":"ann","plan":"pro","profile":{"uid":"u-7"}}`)
		case "GET /v1/maxnote.json":
			io.WriteString(w, `8863`)
		case "POST /v1/n1:archive":
			w.WriteHeader(http.StatusNoContent)
		case "PATCH /v1/notes/n1":
			fmt.Fprintf(w, `{"id":"n1","title":%q}`, strings.TrimSuffix(strings.TrimPrefix(string(body), `{"title":"`), `"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer backend.Close()

	cat, err := catalogdir.LoadPath("../testdata/catalogs/plasmforms")
	if err != nil {
		t.Fatal(err)
	}
	cat.HTTPBackend = backend.URL
	ctx := context.Background()
	app, err := server.New(ctx, server.Config{CacheDir: testCacheDir(), AnonymousSecrets: server.BindSecrets(map[string]string{cat.Auth.Env: token}, map[string][]string{cat.Auth.Env: {cat.EntryID}})}, []*catalog.Catalog{cat})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	defer func() { srv.Close(); app.Close(context.Background()) }()
	f := &fixture{app: app, srv: srv}
	path := f.open(t, "plasmforms", "Note", "Me", "MaxNote")

	tests := []struct {
		program string
		want    []string // "field=value" per row, joined by ","
		sent    []string
	}{
		{`Note{q="x"}[id,meta,repo,sender]`, []string{`id=n1,meta=map[k:1],repo=widgets,sender=ann@example.com`},
			[]string{"GET /v1/notes?q=x"}},
		{`Note("n1")[id,title]`, []string{"id=n1,title=first"}, []string{"GET /v1/notes/n1"}},
		{`Me[uid,login]`, []string{"uid=u-7,login=ann"}, []string{"GET /v1/me"}},
		{`MaxNote`, []string{"id=8863"}, []string{"GET /v1/maxnote.json"}},
		{`Note("n1").archive()`, nil, []string{`POST /v1/n1:archive {"tags":["archived","n1"]}`}},
		{`Note("n1").retitle()[id,title]`, []string{"id=n1,title=Re: first"}, []string{"GET /v1/notes/n1", `PATCH /v1/notes/n1 {"title":"Re: first"}`}},
	}
	for _, tt := range tests {
		mu.Lock()
		seen = nil
		mu.Unlock()
		r := f.do(t, "POST", path, "text/plain", tt.program, "Accept", "application/json")
		if r.status != http.StatusOK {
			t.Errorf("%s: status %d: %s", tt.program, r.status, r.body)
			continue
		}
		if strings.Contains(r.body, token) {
			t.Errorf("%s: the result shows the token", tt.program)
		}
		var got []string
		for _, row := range rows(t, r.json(t)["results"].([]any)[0].(map[string]any)) {
			var cells []string
			for _, col := range strings.Split(strings.Trim(tt.program[strings.LastIndex(tt.program, "[")+1:], "]"), ",") {
				if !strings.Contains(tt.program, "[") {
					col = "id"
				}
				cells = append(cells, fmt.Sprintf("%s=%v", col, row[col]))
			}
			got = append(got, strings.Join(cells, ","))
		}
		if tt.want != nil && strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s: rows\n%s\nwant\n%s", tt.program, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
		h, _ := r.json(t)["results"].([]any)[0].(map[string]any)["page_handle"].(string)
		if strings.HasPrefix(tt.program, "Note{") && h == "" {
			t.Errorf("%s: no page handle although the response names a next URL", tt.program)
		}
		if h != "" {
			// The next page follows the response's next_url field.
			next := rows(t, f.runJSON(t, path, "page("+h+")")[0])
			if len(next) != 1 || next[0]["id"] != "n3" {
				t.Errorf("%s: page(%s) = %v", tt.program, h, next)
			}
			tt.sent = append(tt.sent, "GET /v1/notes?page=2")
		}
		mu.Lock()
		if strings.Join(seen, "\n") != strings.Join(tt.sent, "\n") {
			t.Errorf("%s: backend saw\n%s\nwant\n%s", tt.program, strings.Join(seen, "\n"), strings.Join(tt.sent, "\n"))
		}
		mu.Unlock()
	}
}

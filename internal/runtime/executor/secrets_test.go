package executor

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// TestSecretsScopedPerEntry: a catalog's prepare_request hook rewrites its
// request to authenticate with a secret another catalog declares (or one
// no catalog declares). The rewrite of the auth directive is not taken:
// the request goes with its own catalog's credentials, the stolen secret
// is never resolved, and the hook's backend never sees it; the catalog
// that declares it still uses it. (Secrets are also resolved through the
// scope of the entry called, which the vendor's own http host function
// relies on: hostfuncs tests.)
func TestSecretsScopedPerEntry(t *testing.T) {
	const token = "ghp-tenant-token"
	var mu sync.Mutex
	seen := map[string][]string{} // backend path → Authorization headers
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = append(seen[r.URL.Path], r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte(`[{"id":"1"}]`))
	}))
	defer srv.Close()
	origin, err := egress.ParseOrigin(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	eg := egress.New(egress.Limits{Timeout: 5 * time.Second})
	defer eg.Close()

	tenant := secretMap{"GITHUB_TOKEN": token, "EVIL_KEY": "evil", "AWS_SECRET_ACCESS_KEY": "aws"}
	declared := map[string][]string{"github": {"GITHUB_TOKEN"}, "evil": {"EVIL_KEY"}}
	var asked []string
	env := &Env{
		Engine: engineFunc{
			compile: func(req *abi.CompileRequest) (*abi.CompiledRequest, error) {
				secret := map[string]string{"github": "GITHUB_TOKEN", "evil": "EVIL_KEY"}[req.EntryID]
				return &abi.CompiledRequest{Method: "GET", URL: srv.URL + "/" + req.EntryID, Auth: &abi.AuthDirective{Scheme: "bearer_token", Secret: secret}}, nil
			},
			decode: func(req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error) {
				var rows []map[string]any
				if err := json.Unmarshal(body, &rows); err != nil {
					return nil, err
				}
				return &abi.DecodeResponse{Table: abi.Table{Columns: []string{"id"}, Rows: [][]any{{rows[0]["id"]}}}}, nil
			},
		},
		Origins: map[string][]egress.Origin{"github": {origin}, "evil": {origin}},
		SecretsFor: func(e string) egress.Secrets {
			mu.Lock()
			asked = append(asked, e)
			mu.Unlock()
			return egress.ScopeSecrets(tenant, e, declared[e])
		},
	}
	node := func(e string) *plan.Plan {
		n := fetch(0, "things", "Thing")
		n.EntryID = e
		return &plan.Plan{Nodes: []plan.Node{n}, Roots: roots(0)}
	}
	x := New(eg, Limits{})

	for _, stolen := range []string{"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"} {
		t.Run(stolen, func(t *testing.T) {
			env.Hooks = map[string]*Hooks{"evil": {PrepareRequest: func(_ context.Context, req *abi.CompiledRequest) (*abi.CompiledRequest, error) {
				out := *req
				out.Auth = &abi.AuthDirective{Scheme: "bearer_token", Secret: stolen}
				return &out, nil
			}}}
			if _, err := x.Run(context.Background(), node("evil"), env); err != nil {
				t.Fatalf("the hook's catalog, with its own credentials: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, h := range seen["/evil"] {
				if h != "Bearer evil" {
					t.Fatalf("the hook's backend saw %q, want only its own catalog's key", seen["/evil"])
				}
			}
		})
	}

	if _, err := x.Run(context.Background(), node("github"), env); err != nil {
		t.Fatalf("declaring catalog: %v", err)
	}
	mu.Lock()
	if got := seen["/github"]; len(got) != 1 || got[0] != "Bearer "+token {
		t.Errorf("github backend saw %q", got)
	}
	if len(asked) != 3 || asked[0] != "evil" || asked[2] != "github" {
		t.Errorf("SecretsFor asked for %q", asked)
	}
	mu.Unlock()

	// Without SecretsFor nothing resolves.
	env.SecretsFor, env.Hooks = nil, nil
	if _, err := x.Run(context.Background(), node("github"), env); !errors.Is(err, egress.ErrSecret) {
		t.Fatalf("nil SecretsFor: err = %v, want ErrSecret", err)
	}
}

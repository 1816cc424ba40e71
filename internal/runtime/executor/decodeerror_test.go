package executor

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// TestDecodeErrorRedactedOnce: the standard decoder (extract.Apply) refuses
// 200 answers quoting the backend's words (an error sign beside a missing
// list, a GraphQL error); a backend that echoes the bearer token there
// must not put it in the run's error, and the error names the decode once
// ("decode things: decode things: …" before). A non-2xx answer is still a
// BackendError, redacted too.
func TestDecodeErrorRedactedOnce(t *testing.T) {
	const token = "s3cr3t-bearer-9931"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		said := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch r.URL.Path {
		case "/sign":
			w.Write([]byte(`{"error":"token ` + said + ` is rate limited"}`))
		case "/graphql":
			w.Write([]byte(`{"data":null,"errors":[{"message":"token ` + said + ` expired"}]}`))
		default:
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"token ` + said + ` refused"}`))
		}
	}))
	defer srv.Close()
	origin, err := egress.ParseOrigin(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	eg := egress.New(egress.Limits{Timeout: 5 * time.Second})
	defer eg.Close()

	for _, path := range []string{"/sign", "/graphql", "/status"} {
		t.Run(path, func(t *testing.T) {
			spec := &extract.Spec{Version: extract.Version, Capability: "things", Read: true, GraphQL: path == "/graphql",
				Columns:  []extract.Column{{Name: "id", Path: []string{"id"}, Type: "integer"}},
				Response: &catalog.Response{ItemsPath: []string{"data"}}}
			env := &Env{
				Engine: engineFunc{
					compile: func(req *abi.CompileRequest) (*abi.CompiledRequest, error) {
						return &abi.CompiledRequest{Method: "GET", URL: srv.URL + path, Auth: &abi.AuthDirective{Scheme: "bearer_token", Secret: "TOKEN"}}, nil
					},
					decode: func(req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error) {
						out, aerr := extract.Apply(spec, req, body, extract.Options{})
						if aerr != nil {
							return nil, aerr
						}
						return out, nil
					},
				},
				Origins:    map[string][]egress.Origin{entry: {origin}},
				SecretsFor: allSecrets(secretMap{"TOKEN": token}),
			}
			_, err := New(eg, Limits{}).Run(context.Background(), &plan.Plan{Nodes: []plan.Node{fetch(0, "things", "Thing")}, Roots: roots(0)}, env)
			if err == nil {
				t.Fatal("the backend's error was answered as rows")
			}
			msg := err.Error()
			var ae *abi.Error
			if errors.As(err, &ae) {
				msg += " | " + ae.Message + " | " + ae.Hint
			}
			if strings.Contains(msg, token) {
				t.Fatalf("the run's error leaks the token: %s", msg)
			}
			if !strings.Contains(msg, "[redacted]") {
				t.Errorf("the run's error does not show the redaction: %s", msg)
			}
			if path == "/status" {
				if !errors.Is(err, ErrBackend) {
					t.Errorf("a 400 answer: err %v, want a BackendError", err)
				}
				return
			}
			if ae == nil || ae.Code != abi.CodeDecode {
				t.Errorf("err %#v, want the decoder's *abi.Error", err)
			}
			if n := strings.Count(err.Error(), "decode things:"); n != 1 {
				t.Errorf("%q names the decode %d times, want once", err.Error(), n)
			}
		})
	}
}

package executor

import (
	"context"
	"errors"
	"fmt"
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

// TestDecodeErrorRedactsAccessToken: with oauth2_client_credentials the
// request carries the access token fetched from the token endpoint, not
// the client secret the catalog names, so a backend echoing the bearer it
// was sent (in a 200 error sign, a GraphQL error, a non-2xx body) must not
// put that token in the run's error. A token the guest's 200-byte cut
// (errorText) splits must not leak its first part either (/cut).
func TestDecodeErrorRedactsAccessToken(t *testing.T) {
	const access = "acc3ss-t0ken/+7731-zyxwvu"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"access_token":%q,"token_type":"bearer","expires_in":3600}`, access)
			return
		}
		said := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch r.URL.Path {
		case "/sign":
			w.Write([]byte(`{"error":"token ` + said + ` expired"}`))
		case "/cut":
			// errorText quotes the value: `"` + 180 bytes + " " puts the
			// token at byte 182 of a text cut at 200.
			w.Write([]byte(`{"error":"` + strings.Repeat("x", 180) + ` ` + said + ` expired"}`))
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
	auth := &abi.AuthDirective{Scheme: "oauth2_client_credentials", TokenURL: srv.URL + "/token", ClientID: "CID", Secret: "CSECRET"}

	for _, path := range []string{"/sign", "/cut", "/graphql", "/status"} {
		t.Run(path, func(t *testing.T) {
			spec := &extract.Spec{Version: extract.Version, Capability: "things", Read: true, GraphQL: path == "/graphql",
				Columns:  []extract.Column{{Name: "id", Path: []string{"id"}, Type: "integer"}},
				Response: &catalog.Response{ItemsPath: []string{"data"}}}
			env := &Env{
				Engine: engineFunc{
					compile: func(req *abi.CompileRequest) (*abi.CompiledRequest, error) {
						return &abi.CompiledRequest{Method: "GET", URL: srv.URL + path, Auth: auth}, nil
					},
					decode: func(req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error) {
						out, aerr := extract.Apply(spec, req, body, extract.Options{})
						if aerr != nil {
							return nil, aerr
						}
						return out, nil
					},
				},
				Origins:    map[string][]egress.Origin{entry: {origin, origin}},
				SecretsFor: allSecrets(secretMap{"CID": "client-1", "CSECRET": "client-s3cret"}),
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
			if strings.Contains(msg, access[:8]) || strings.Contains(msg, "acc3ss-t0ken%2F") {
				t.Fatalf("the run's error leaks the access token: %s", msg)
			}
			if !strings.Contains(msg, "[redacted]") {
				t.Errorf("the run's error does not show the redaction: %s", msg)
			}
			if path == "/status" && !errors.Is(err, ErrBackend) {
				t.Errorf("a 400 answer: err %v, want a BackendError", err)
			}
		})
	}
}

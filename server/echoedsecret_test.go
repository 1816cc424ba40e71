package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/server"
)

const echoDomain = `version: 1
http_backend: http://echo.invalid
auth: {scheme: bearer_token, env: ECHO_TOKEN}
values:
  id: {type: integer}
  text: {type: string}
entities:
  Ec: {id_field: id, fields: {id: {value_ref: id}}}
  Eg: {id_field: id, fields: {id: {value_ref: id}}}
capabilities:
  ec_query: {kind: query, entity: Ec, parameters: [{name: set, value_ref: text}]}
  eg_query: {kind: query, entity: Eg}
`

const echoMappings = `ec_query:
  method: GET
  path: [{type: literal, value: ec}]
  query: {type: object, fields: [[set, {type: var, name: set}]]}
  response: {items: data}
eg_query:
  method: POST
  transport: graphql
  path: [{type: literal, value: graphql}]
  body:
    type: object
    fields:
      - [query, {type: const, value: "query { eg { id } }"}]
  response: {items_path: [data, eg]}
`

// TestEchoedCredentialRedacted: a backend that quotes the request's
// bearer token in a 200 error answer (an error sign beside a missing list,
// an empty list beside an error, a GraphQL error) or in a non-2xx one must not leak the token into the run's error:
// every decode error is redacted whatever the status. Before, only non-2xx
// answers were.
func TestEchoedCredentialRedacted(t *testing.T) {
	const token = "s3cr3t-echo-token-4711"
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		said := strings.TrimPrefix(auth, "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path + "?" + r.URL.Query().Get("set") {
		case "/ec?sign":
			fmt.Fprintf(w, `{"error":"token %s is rate limited"}`, said)
		case "/ec?empty":
			fmt.Fprintf(w, `{"ok":false,"error":"bad %s","data":[]}`, said)
		case "/ec?msg":
			fmt.Fprintf(w, `{"success":false,"message":"%s over quota"}`, said)
		case "/ec?status":
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"%s"}`, said)
		case "/graphql?":
			fmt.Fprintf(w, `{"data":null,"errors":[{"message":"token %s expired"}]}`, said)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(backend.Close)
	f := catalogFixture(t, "echo", map[string]string{"domain.yaml": echoDomain, "mappings.yaml": echoMappings}, backend.URL,
		func(c *server.Config) {
			c.AnonymousSecrets = server.BindSecrets(map[string]string{"ECHO_TOKEN": token}, map[string][]string{"ECHO_TOKEN": {"echo"}})
		})
	path := f.open(t, "echo", "Ec", "Eg")
	for _, program := range []string{
		`Ec{set="sign"}[id]`, `Ec{set="empty"}[id]`, `Ec{set="msg"}[id]`, `Ec{set="status"}[id]`, `Eg[id]`,
	} {
		r := f.do(t, "POST", path, "text/plain", program, "Accept", "application/json")
		if r.status == http.StatusOK {
			t.Errorf("%s: answered 200 %s, want a refusal", program, r.body)
			continue
		}
		if strings.Contains(r.body, token) {
			t.Errorf("%s: the answer leaks the token: %s", program, r.body)
		}
		if !strings.Contains(r.body, "[redacted]") {
			t.Errorf("%s: the answer does not show the redaction: %s", program, r.body)
		}
	}
}

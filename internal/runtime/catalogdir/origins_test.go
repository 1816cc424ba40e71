package catalogdir

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// TestIPLiteralOrigins: the loader refuses origins no configuration dials
// and warns, at the literal's line and column, about IP literals whose
// reach depends on --egress-allow-private or that sit outside
// http_backend; a loopback http_backend (the demo's) loads silently.
func TestIPLiteralOrigins(t *testing.T) {
	const domain = `http_backend: %s
auth: {scheme: oauth2_client_credentials, token_url: "%s", client_id_env: CID, client_secret_env: CSEC}
values:
  text: {type: string}
entities:
  Hit:
    id_field: id
    fields:
      id: {value_ref: text, required: true}
capabilities:
  hit_search: {kind: query, entity: Hit}
version: 1
`
	const mappings = `hit_search:
  method: GET
  path: [{type: literal, value: "%s"}]
`
	tests := []struct {
		name                 string
		backend, token, path string
		err                  string // an error at this place and text
		warn                 string // else a warning at this place and text ("" = none)
		nwarn                int    // how many warnings in all (0: one)
	}{
		{name: "names only", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "https://search.example.test/q"},
		{name: "loopback http_backend", backend: "http://127.0.0.1:8080/api", token: "https://auth.example.test/t", path: "https://search.example.test/q"},
		{name: "path on http_backend's literal origin", backend: "http://10.0.0.5:8080/api", token: "https://auth.example.test/t", path: "http://10.0.0.5:8080/search"},
		{name: "metadata in a path", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "http://169.254.169.254/latest/meta-data/",
			warn: "mappings.yaml:3:33: hit_search.path[0].value: http://169.254.169.254:80 is a link-local or cloud metadata address"},
		{name: "metadata, v4-mapped", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "http://[::ffff:169.254.169.254]/x",
			warn: "mappings.yaml:3:33: hit_search.path[0].value: http://[::ffff:169.254.169.254]:80 is a link-local"},
		{name: "metadata, NAT64", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "http://[64:ff9b::a9fe:a9fe]/x",
			warn: "is a link-local or cloud metadata address (or reaches one)"},
		{name: "metadata as http_backend", backend: "http://169.254.169.254/latest", token: "https://auth.example.test/t", path: "https://search.example.test/q",
			warn: "domain.yaml:1:15: http_backend: http://169.254.169.254:80 is a link-local"},
		{name: "private literal in a path", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "http://10.0.0.5:8080/",
			warn: "mappings.yaml:3:33: hit_search.path[0].value: http://10.0.0.5:8080 is an IP literal on the host's own networks; an origin outside http_backend"},
		{name: "private token endpoint", backend: "https://api.example.test", token: "http://10.0.0.7/token", path: "https://search.example.test/q",
			warn: "domain.yaml:2:54: auth.token_url: http://10.0.0.7:80 is an IP literal on the host's own networks, dialled as declared"},
		// The token endpoint's literal is trusted for the token fetch only.
		{name: "path on the private token endpoint's origin", backend: "https://api.example.test", token: "http://10.0.0.7/token", path: "http://10.0.0.7/admin", nwarn: 2,
			warn: "mappings.yaml:3:33: hit_search.path[0].value: http://10.0.0.7:80 is an IP literal on the host's own networks; auth.token_url's origin is trusted for the token fetch only"},
		{name: "public literal in a path", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "https://[2001:db8::1]/q",
			warn: "hit_search.path[0].value: https://[2001:db8::1]:443 is an IP-literal origin"},
		{name: "unspecified", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "http://0.0.0.0:8080/",
			err: "mappings.yaml:3:33: hit_search.path[0].value: origin can never be dialled: 0.0.0.0 is an unspecified"},
		{name: "multicast http_backend", backend: "http://224.0.0.1/", token: "https://auth.example.test/t", path: "https://search.example.test/q",
			err: "domain.yaml:1:15: http_backend: origin can never be dialled"},
		{name: "zone", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "http://[fe80::1%25eth0]/",
			err: "carries a zone id"},
		{name: "decimal", backend: "http://2130706433/", token: "https://auth.example.test/t", path: "https://search.example.test/q",
			err: `domain.yaml:1:15: http_backend: origin can never be dialled: host "2130706433" is an IPv4 address in a form`},
		{name: "octal token endpoint", backend: "https://api.example.test", token: "http://0177.0.0.1/t", path: "https://search.example.test/q",
			err: "auth.token_url: origin can never be dialled"},
		{name: "hex", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "http://0x7f.0.0.1/",
			err: "hit_search.path[0].value: origin can never be dialled"},
		// net/http dials a non-ASCII host as IDNA maps it: an IP address
		// spelled so is refused, wherever it is declared.
		{name: "full-width loopback in a path", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "http://１２７.０.０.１:8080/admin",
			err: `mappings.yaml:3:33: hit_search.path[0].value: origin can never be dialled: host "１２７.０.０.１" is the IP address 127.0.0.1 written in non-ASCII characters`},
		{name: "ideographic dots as http_backend", backend: "http://127。0。0。1:8080/", token: "https://auth.example.test/t", path: "https://search.example.test/q",
			err: "domain.yaml:1:15: http_backend: origin can never be dialled: host \"127。0。0。1\" is the IP address 127.0.0.1"},
		{name: "percent-encoded ideographic dots", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "http://10%E3%80%820%E3%80%820%E3%80%825/x",
			err: "hit_search.path[0].value: origin can never be dialled"},
		{name: "full-width token endpoint", backend: "https://api.example.test", token: "http://１０.０.０.７/t", path: "https://search.example.test/q",
			err: "auth.token_url: origin can never be dialled"},
		{name: "host IDNA refuses, in a path", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "https://a\u200db.example/q",
			err: "hit_search.path[0].value: \"https://a\\u200db.example/q\" is not a plain absolute http(s) URL (a host, no user info): host \"a\\u200db.example\": not a valid internationalised domain name"},
		{name: "host IDNA refuses, as http_backend", backend: "https://a\u200db.example/", token: "https://auth.example.test/t", path: "https://search.example.test/q",
			err: "domain.yaml:1:15: http_backend: origin can never be dialled"},
		{name: "IDN name", backend: "https://bücher.example/api", token: "https://auth.example.test/t", path: "https://BÜCHER.example/q"},
		{name: "shortened", backend: "https://api.example.test", token: "https://auth.example.test/t", path: "http://127.1:9/",
			err: "hit_search.path[0].value: origin can never be dialled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"c/domain.yaml":   {Data: []byte(fmt.Sprintf(domain, tt.backend, tt.token))},
				"c/mappings.yaml": {Data: []byte(fmt.Sprintf(mappings, tt.path))},
			}
			var warns ErrorList
			_, err := load(fsys, "c", "", func(p string) string { return p }, &warns)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.warn == "" {
				if len(warns) != 0 {
					t.Fatalf("warnings %v, want none", warns)
				}
				return
			}
			n := max(tt.nwarn, 1)
			found := false
			for _, w := range warns {
				found = found || strings.Contains(w.Error(), tt.warn)
			}
			if len(warns) != n || !found {
				t.Fatalf("warnings %v, want %d, one containing %q", warns, n, tt.warn)
			}
		})
	}
}

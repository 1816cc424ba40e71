package tenant

import (
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/internal/runtime/sandbox"
)

var tokA, tokB = Digest("token-a"), Digest("token-b")

func TestParseLimits(t *testing.T) {
	file := `
defaults:
  limits:
    call_timeout: 3s
    max_queue: 8
    queue_timeout: 250ms
tenants:
  - id: acme
    token_sha256: [` + tokA + `]
    limits:
      memory_mib: 32
      call_timeout: 500ms
      max_instances: 2
      max_input_bytes: 1024
      max_output_bytes: 4096
  - id: globex
    token_sha256: [` + tokB + `]
`
	s, err := Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Defaults(); d != (Limits{CallTimeout: 3 * time.Second, MaxQueue: 8, QueueTimeout: 250 * time.Millisecond}) {
		t.Fatalf("defaults %+v", d)
	}
	tests := []struct {
		id   string
		want Limits
	}{
		{"acme", Limits{MemoryMiB: 32, CallTimeout: 500 * time.Millisecond, MaxInstances: 2, MaxQueue: 8,
			QueueTimeout: 250 * time.Millisecond, MaxInputBytes: 1024, MaxOutputBytes: 4096}},
		{"globex", Limits{CallTimeout: 3 * time.Second, MaxQueue: 8, QueueTimeout: 250 * time.Millisecond}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			tn, ok := s.Get(tc.id)
			if !ok {
				t.Fatal("missing")
			}
			if tn.Limits != tc.want {
				t.Fatalf("limits %+v, want %+v", tn.Limits, tc.want)
			}
		})
	}

	// Applied over the server's sandbox limits, set fields win and the
	// rest keep the server's values.
	acme, _ := s.Get("acme")
	base := sandbox.DefaultLimits()
	got := acme.Limits.Apply(base)
	want := sandbox.Limits{MemoryBytes: 32 << 20, CallTimeout: 500 * time.Millisecond, MaxInstances: 2, MaxQueue: 8,
		QueueTimeout: 250 * time.Millisecond, MaxInput: 1024, MaxOutput: 4096}
	if got != want {
		t.Fatalf("Apply = %+v, want %+v", got, want)
	}
	globex, _ := s.Get("globex")
	got = globex.Limits.Apply(base)
	want = base
	want.CallTimeout, want.MaxQueue, want.QueueTimeout = 3*time.Second, 8, 250*time.Millisecond
	if got != want {
		t.Fatalf("Apply = %+v, want %+v", got, want)
	}
	if (Limits{}).Apply(base) != base {
		t.Fatal("zero limits changed the base")
	}
}

func TestParseErrors(t *testing.T) {
	tenant := func(limits string) string {
		return "tenants:\n  - id: a\n    token_sha256: [" + tokA + "]\n    limits: {" + limits + "}\n"
	}
	secrets := func(s string) string {
		return "tenants:\n  - id: a\n    token_sha256: [" + tokA + "]\n    secrets: {" + s + "}\n"
	}
	tests := []struct {
		name, file, want string
	}{
		{"negative memory", tenant("memory_mib: -1"), "memory_mib -1"},
		{"memory past 4 GiB", tenant("memory_mib: 5000"), "memory_mib 5000"},
		{"negative timeout", tenant("call_timeout: -1s"), "call_timeout"},
		{"negative queue", tenant("max_queue: -2"), "max_queue -2"},
		{"negative queue timeout", tenant("queue_timeout: -1ms"), "queue_timeout"},
		{"negative instances", tenant("max_instances: -1"), "max_instances"},
		{"negative input", tenant("max_input_bytes: -1"), "max_input_bytes"},
		{"negative output", tenant("max_output_bytes: -1"), "max_output_bytes"},
		{"negative MCP sessions", tenant("max_mcp_sessions: -1"), "max_mcp_sessions"},
		{"bad duration", tenant("call_timeout: soon"), "soon"},
		{"unknown limit", tenant("max_cpus: 2"), "max_cpus"},
		{"bad defaults", "defaults:\n  limits:\n    max_queue: -1\ntenants: []\n", "defaults.limits"},
		{"missing id", "tenants:\n  - token_sha256: [" + tokA + "]\n", "id is required"},
		{"reserved id", "tenants:\n  - id: anonymous\n    token_sha256: [" + tokA + "]\n", "reserved"},
		{"no tokens", "tenants:\n  - id: a\n", "token_sha256"},
		{"bad digest", "tenants:\n  - id: a\n    token_sha256: [xyz]\n", "not a hex sha256"},
		{"shared digest", "tenants:\n  - id: a\n    token_sha256: [" + tokA + "]\n  - id: b\n    token_sha256: [" + tokA + "]\n", "also used"},
		{"flat secret", secrets("TOKEN: abc"), "bound to the catalogs"},
		{"secret without catalogs", secrets("TOKEN: {value: abc}"), "has no catalogs"},
		{"secret unknown field", secrets("TOKEN: {value: abc, catalogs: [t], scope: all}"), `unknown secret field "scope"`},
		{"secret bound to a catalog the tenant may not use", "tenants:\n  - id: a\n    token_sha256: [" + tokA + "]\n    catalogs: [tracker]\n    secrets: {TOKEN: {value: abc, catalogs: [kanban]}}\n", "bound to catalog kanban"},
		{"id with a brace", "tenants:\n  - id: \"a}b\"\n    token_sha256: [" + tokA + "]\n", "letters, digits"},
		{"id with a space", "tenants:\n  - id: \"a b\"\n    token_sha256: [" + tokA + "]\n", "letters, digits"},
		{"id starting with a dot", "tenants:\n  - id: .a\n    token_sha256: [" + tokA + "]\n", "letters, digits"},
		{"duplicate id", "tenants:\n  - id: a\n    token_sha256: [" + tokA + "]\n  - id: a\n    token_sha256: [" + tokB + "]\n", "duplicate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestAuthenticate(t *testing.T) {
	s, err := Parse([]byte("tenants:\n  - id: a\n    token_sha256: [" + tokA + "]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		token string
		want  string
	}{{"token-a", "a"}, {"token-b", ""}, {"", ""}} {
		got, err := s.Authenticate(tc.token)
		switch {
		case tc.want == "" && err != ErrUnauthorized:
			t.Errorf("%q: %v, %v", tc.token, got, err)
		case tc.want != "" && (err != nil || got.ID != tc.want):
			t.Errorf("%q: %v, %v", tc.token, got, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("tenants:\n  - id: a\n    token_sha256: [" + tokA + "]\n    limits: {memory_mib: 8, call_timeout: 1s}\n"))
	f.Add([]byte("defaults:\n  limits:\n    queue_timeout: 1ms\ntenants: []\n"))
	f.Add([]byte("{\"tenants\": [{\"id\": \"x\", \"token_sha256\": [\"00\"]}]}"))
	f.Add([]byte("tenants: [[[[[[[[[[]]]]]]]]]]"))
	f.Add([]byte("tenants:\n  - id: a\n    principal_credentials: [tracker]\n    rate_limits:\n      principal: {rate: 3, per: 1m}\n      capabilities: {\"tracker:issue_create\": {rate: 1, per: 1h}}\n" +
		"oauth:\n  resource: https://x.example.test/mcp\n  authorization_servers: [{issuer: https://as.example.test}]\n  rules: [{claim: team, equals: t, tenant: a}]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			return
		}
		if oc := s.OAuth(); oc != nil && oc.Validate(func(id string) bool { _, ok := s.Get(id); return ok }) != nil {
			t.Fatalf("accepted an invalid oauth section %+v", oc)
		}
		for _, tn := range s.All() {
			if tn.RateLimits.Validate() != nil {
				t.Fatalf("accepted invalid rate limits %+v", tn.RateLimits)
			}
			if tn.Limits.validate() != nil {
				t.Fatalf("accepted invalid limits %+v", tn.Limits)
			}
			_ = tn.Limits.Apply(sandbox.DefaultLimits())
		}
	})
}

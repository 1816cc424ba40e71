package server

import "testing"

func TestNegotiate(t *testing.T) {
	tests := []struct{ accept, want string }{
		{"", "text/markdown"},
		{"application/json", "application/json"},
		{"text/tab-separated-values, application/json", "text/tab-separated-values"},
		{"*/*", "text/markdown"},
		{"text/html, */*;q=0.1", "text/markdown"},
		// q=0 refuses a type; it used to be taken.
		{"application/json;q=0, text/markdown", "text/markdown"},
		{"application/json;q=0", ""},
		{"application/json;q=0.5, application/x-ndjson", "application/x-ndjson"},
		{"application/json;q=0.9, application/x-ndjson;q=0.9", "application/json"},
		{"application/json;q=nope, text/markdown;q=0.2", "text/markdown"},
		{"text/html", ""},
		// An explicit entry beats a wildcard for its own type.
		{"text/markdown;q=0, */*", "application/json"},
		{"text/markdown;q=0, text/*, application/json;q=0.5", "text/tab-separated-values"},
		{"*/*;q=0.1, application/json;q=0", "text/markdown"},
		{"text/*;q=0, */*", "application/json"},
		{"*/*;q=0", ""},
	}
	for _, tc := range tests {
		got, err := negotiate(tc.accept)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("negotiate(%q) = %q, %v; want %q", tc.accept, got, err, tc.want)
		}
	}
}

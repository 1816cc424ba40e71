package catalog

import "testing"

func TestOrigin(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{"https://pokeapi.co/api/v2/", "https://pokeapi.co:443"},
		{"HTTP://Example.COM:8080/x?y#z", "http://example.com:8080"},
		{"http://[::1]/", "http://[::1]:80"},
		{"https://user@example.com/", ""},
		{"https:///path", ""},
		{"ftp://example.com/", ""},
		{"https:example.com", ""},
		{"/relative", ""},
		{"https://exa mple.com/", ""},
		// The host net/http dials: IDNA for a non-ASCII host.
		{"http://１２７.０.０.１:8080/admin", "http://127.0.0.1:8080"},
		{"http://127。0。0。1/", "http://127.0.0.1:80"},
		{"http://127%E3%80%820%E3%80%820%E3%80%821/", "http://127.0.0.1:80"},
		{"https://BÜCHER.example/", "https://xn--bcher-kva.example:443"},
		{"https://a\u200db.example/", ""}, // IDNA refuses a joiner here
	} {
		got, ok := Origin(tt.raw)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Origin(%q) = %q, %v; want %q", tt.raw, got, ok, tt.want)
		}
	}
}

// FuzzOrigin: Origin never panics, and an origin it returns is its own
// origin (it names a scheme, host and port and nothing else).
func FuzzOrigin(f *testing.F) {
	for _, s := range []string{"https://a.example/x", "http://[::1]:80", "https://u@h/", "HTTP://H:1/?#", "https://%zz/"} {
		f.Add(s)
	}
	f.Add("http://１２７.０.０.１/")
	f.Fuzz(func(t *testing.T, raw string) {
		o, ok := Origin(raw)
		if !ok {
			return
		}
		if !IsAbsoluteURL(o) {
			t.Fatalf("Origin(%q) = %q, not absolute", raw, o)
		}
		if again, ok := Origin(o); !ok || again != o {
			t.Fatalf("Origin(%q) = %q, whose origin is %q, %v", raw, o, again, ok)
		}
	})
}

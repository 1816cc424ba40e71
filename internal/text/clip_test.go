package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short", "short", 10, "short"},
		{"exactly n", "0123456789", 10, "0123456789"},
		{"one over", "0123456789a", 10, "0123456789…"},
		{"empty", "", 0, ""},
		{"zero budget", "abc", 0, "…"},
		{"negative budget", "abc", -1, "…"},
		// é is 2 bytes, € 3, 𝄞 4: a cut inside one moves to its start.
		{"inside a 2-byte rune", "ééééé", 3, "é…"},
		{"inside a 3-byte rune, 1 in", "a€b", 2, "a…"},
		{"inside a 3-byte rune, 2 in", "a€b", 3, "a…"},
		{"after a 3-byte rune", "a€b", 4, "a€…"},
		{"inside a 4-byte rune, 3 in", "𝄞𝄞", 7, "𝄞…"},
		{"a rune at the start", "€€", 2, "…"},
		// Invalid UTF-8 keeps its bytes and its length bound.
		{"continuation bytes only", strings.Repeat("\x80", 20), 10, strings.Repeat("\x80", 10) + "…"},
		{"stray byte before the cut", "ab\xffcdef", 4, "ab\xffc…"},
		{"truncated rune before the cut", "ab\xe2\x82cdef", 4, "ab\xe2\x82…"},
		{"invalid bytes after the cut", "abcd\xff\xfe", 4, "abcd…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Clip(tc.in, tc.n)
			if got != tc.want {
				t.Fatalf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
			if utf8.ValidString(tc.in) && !utf8.ValidString(got) {
				t.Fatalf("Clip(%q, %d) = %q is not valid UTF-8", tc.in, tc.n, got)
			}
			if body := strings.TrimSuffix(got, Ellipsis); len(body) > max(tc.n, 0) {
				t.Fatalf("Clip(%q, %d) kept %d bytes", tc.in, tc.n, len(body))
			}
		})
	}
}

func FuzzClip(f *testing.F) {
	for _, s := range []string{"ééééé", "a€b", "𝄞𝄞", "\x80\x80\x80", "ab\xe2\x82cd"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 64
		got := Clip(s, n)
		if len(s) <= max(n, 0) {
			if got != s {
				t.Fatalf("Clip(%q, %d) changed short text: %q", s, n, got)
			}
			return
		}
		body, ok := strings.CutSuffix(got, Ellipsis)
		if !ok || !strings.HasPrefix(s, body) || len(body) > max(n, 0) || len(body) < max(n, 0)-(utf8.UTFMax-1) {
			t.Fatalf("Clip(%q, %d) = %q", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q is not valid UTF-8", s, n, got)
		}
	})
}

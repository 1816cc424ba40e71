package core

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckIntent(t *testing.T) {
	tests := []struct {
		intent string
		ok     bool
	}{
		{"", true},
		{"triage the login bugs", true},
		{strings.Repeat("é", MaxIntent/2), true},
		{strings.Repeat("x", MaxIntent+1), false},
		{"bad \xff byte", false},
	}
	for _, tc := range tests {
		if err := CheckIntent(tc.intent); (err == nil) != tc.ok {
			t.Errorf("CheckIntent(%.20q…) = %v, want ok=%v", tc.intent, err, tc.ok)
		}
	}
}

func TestClipForLog(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789abc", 10, "0123456789…"},
		{"ééééé", 3, "é…"}, // never cuts a rune in half
	}
	for _, tc := range tests {
		got := ClipForLog(tc.in, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("ClipForLog(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

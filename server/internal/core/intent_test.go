package core

import (
	"strings"
	"testing"
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

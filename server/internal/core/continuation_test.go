package core

import "testing"

// TestContinuation: wait(…) and cancel(…) are recognised with the ;;
// comments the language allows around them, and nothing else is.
func TestContinuation(t *testing.T) {
	tests := []struct {
		program, verb, handle string
	}{
		{"wait(s0_o1)", "wait", "s0_o1"},
		{"  cancel( s2_o13 )\r\n", "cancel", "s2_o13"},
		{";; poll the export\nwait(s0_o1)", "wait", "s0_o1"},
		{"wait(s0_o1) ;; again", "wait", "s0_o1"},
		{"cancel(s0_o1);;", "cancel", "s0_o1"},
		{";; one\n\n;; two\ncancel(s1_o2) ;; three\n;; four", "cancel", "s1_o2"},
		{"wait(s0_o1)\nIssue(\"iss-1\")", "", ""},
		{"wait(s0_o1), Issue(\"iss-1\")", "", ""},
		{";; wait(s0_o1)", "", ""},
		{"x = \"a;;\nwait(s0_o1)", "", ""},
		{"Issue(\";;\")\nwait(s0_o1)", "", ""},
		{"wait(s0_o1) wait(s0_o2)", "", ""},
		{"", "", ""},
	}
	for _, tc := range tests {
		verb, handle, ok := continuation(tc.program)
		if ok != (tc.verb != "") || verb != tc.verb || handle != tc.handle {
			t.Errorf("continuation(%q) = %q, %q, %v; want %q, %q", tc.program, verb, handle, ok, tc.verb, tc.handle)
		}
	}
}

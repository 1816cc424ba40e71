package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestFlagHelp: each command's -h names flag arguments as words a user
// types, and describes the demo it serves. Before, -metered-module was
// listed as "-metered-module plasmd module check" (flag's backquote rule
// took the command quoted in its text for the argument's name) and -demo
// named two of the three demo catalogs.
func TestFlagHelp(t *testing.T) {
	for _, cmd := range []string{"serve", "stdio", "run"} {
		var out, errb bytes.Buffer
		run([]string{cmd, "-h"}, &out, &errb)
		help := out.String() + errb.String()
		for _, want := range []string{"-metered-module SHA256", "(tracker, kanban, ledger)"} {
			if !strings.Contains(help, want) {
				t.Errorf("%s -h lacks %q:\n%s", cmd, want, help)
			}
		}
		if strings.Contains(help, "-metered-module plasmd") {
			t.Errorf("%s -h names the -metered-module argument after a command", cmd)
		}
	}
}

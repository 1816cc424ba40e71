package rendering

import (
	"regexp"
	"strings"
)

// text/template reports a failed execution in Go's terms:
//
//	executing "t" at <.a.deeper>: nil pointer evaluating interface {}.deeper
//
// The author of a row template wrote JSON-shaped rows, not Go, so the
// message is restated in those terms: where (the action as written),
// then what went wrong with the row's values.
var (
	execAt      = regexp.MustCompile(`^executing "[^"]*" at <(.*?)>: (.*)$`)
	nilField    = regexp.MustCompile(`^nil pointer evaluating [^.]*\.(\S+)$`)
	noField     = regexp.MustCompile(`^can't evaluate field (\S+) in type (.+)$`)
	callFailed  = regexp.MustCompile(`^error calling (\w+): (.*)$`)
	goTypeNames = strings.NewReplacer(
		"map[string]interface {}", "an object",
		"[]interface {}", "a list",
		"interface {}", "a value",
		"rendering.integer", "a number",
		"rendering.bigInt", "a number",
		"float64", "a number",
		"string", "a string",
		"bool", "a boolean",
	)
)

// execMessage restates an execution error of a row template; a message
// it does not know is returned with only its Go type names replaced.
func execMessage(msg string) string {
	m := execAt.FindStringSubmatch(msg)
	if m == nil {
		return goTypeNames.Replace(msg)
	}
	at, what := m[1], m[2]
	switch {
	case nilField.MatchString(what):
		f := nilField.FindStringSubmatch(what)[1]
		what = "the value holding ." + f + " is missing (null or absent), so it has no field " + f + "; guard it with {{with}} or {{if}}"
	case noField.MatchString(what):
		f := noField.FindStringSubmatch(what)
		what = "." + f[1] + " is read from a value that is not an object"
		if f[2] != "interface {}" {
			what += " but " + goTypeNames.Replace(f[2])
		}
	case callFailed.MatchString(what):
		c := callFailed.FindStringSubmatch(what)
		detail := c[2]
		if t, ok := strings.CutPrefix(detail, "len of type "); ok {
			detail = "cannot take the length of " + t
		}
		what = c[1] + ": " + goTypeNames.Replace(detail)
	default:
		what = goTypeNames.Replace(what)
	}
	return "in {{" + at + "}}: " + what
}

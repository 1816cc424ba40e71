// Package text holds small helpers for text that plasmd quotes back to
// people: in log lines, error messages and problem details. It sits below
// the runtime and the server so both clip the same way.
package text

import "unicode/utf8"

// Ellipsis marks text that Clip shortened.
const Ellipsis = "…"

// Clip shortens s to at most n bytes followed by Ellipsis, cutting at a
// rune boundary so valid UTF-8 stays valid: a caller-supplied id or path
// (which may be kilobytes) is quoted whole only when it is short. Text of
// at most n bytes is returned as is. The cut moves back at most
// utf8.UTFMax-1 bytes, to the start of the rune it falls in; invalid
// UTF-8 has no such start, and is cut at n bytes, bytes kept as they are
// (Clip bounds length; it does not repair encodings).
func Clip(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	cut := n
	for back := 0; back < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); back++ {
		cut--
	}
	if !utf8.RuneStart(s[cut]) {
		cut = n // not inside a rune: invalid bytes
	}
	return s[:cut] + Ellipsis
}

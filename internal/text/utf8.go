package text

import (
	"fmt"
	"unicode/utf8"
)

// InvalidUTF8 finds the first byte of s that is not UTF-8: its byte
// offset and its 1-based line and column (columns count characters, as
// program positions do, an invalid byte as one). ok is false when s is
// valid. Programs must be refused there: decoding them anyway turns each
// bad byte into U+FFFD, which then went to the backend as %EF%BF%BD in a
// URL the caller never wrote.
func InvalidUTF8(s string) (off, line, col int, ok bool) {
	if utf8.ValidString(s) {
		return 0, 0, 0, false
	}
	line, col = 1, 1
	for off < len(s) {
		r, n := utf8.DecodeRuneInString(s[off:])
		if r == utf8.RuneError && n <= 1 {
			return off, line, col, true
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		off += n
	}
	return 0, 0, 0, false // unreachable: ValidString said there is one
}

// InvalidUTF8Message is the message for the byte InvalidUTF8 found.
func InvalidUTF8Message(s string, off int) string {
	return fmt.Sprintf("invalid UTF-8: byte 0x%02x is not part of a UTF-8 character", s[off])
}

// InvalidUTF8Hint says what to do about it.
const InvalidUTF8Hint = "send the program as UTF-8 text; invalid bytes are refused, not replaced"

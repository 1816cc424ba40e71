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

// LoneSurrogate finds the first \u escape in JSON text s that names half
// of a UTF-16 surrogate pair without its other half (\ud800 alone, or a
// low half first), and returns the escape's byte offset. Such text is
// valid UTF-8, so InvalidUTF8 passes it, but every JSON decoder turns the
// escape into U+FFFD: a program sent as {"program": "…\ud800…"} would run
// with text the client never wrote. Only escapes count; a backslash
// escaping a backslash is skipped with it.
func LoneSurrogate(s string) (off int, ok bool) {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if s[i+1] != 'u' {
			i++ // \\ \" \n …: the escaped byte is not a backslash that starts an escape
			continue
		}
		r, valid := hexEscape(s, i)
		if !valid || r < 0xD800 || r > 0xDFFF {
			i += 1
			continue
		}
		if r >= 0xDC00 { // a low half with no high half before it
			return i, true
		}
		if lo, valid := hexEscape(s, i+6); !valid || lo < 0xDC00 || lo > 0xDFFF {
			return i, true
		}
		i += 11 // the pair's two escapes
	}
	return 0, false
}

// hexEscape reads the \uXXXX escape at s[i:].
func hexEscape(s string, i int) (rune, bool) {
	if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i+2 : i+6]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

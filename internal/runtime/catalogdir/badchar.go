package catalogdir

import (
	"fmt"
	"unicode/utf8"
)

// firstBadChar finds the first byte sequence YAML's reader refuses, for
// the errors it reports without a line: bytes that are not UTF-8, and
// characters outside YAML's printable set (control characters other than
// tab, line feed and carriage return; DEL; C1 controls but NEL;
// surrogates; U+FFFE and U+FFFF). A file that starts with a UTF-16 byte
// order mark is left to the library. line and col count from 1, col in
// characters.
func firstBadChar(data []byte) (line, col int, what string, found bool) {
	if len(data) >= 2 && (data[0] == 0xFE && data[1] == 0xFF || data[0] == 0xFF && data[1] == 0xFE) {
		return 0, 0, "", false
	}
	line, col = 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return line, col, fmt.Sprintf("the file is not UTF-8 text (byte 0x%02x)", data[i]), true
		case !yamlPrintable(r):
			return line, col, fmt.Sprintf("control character %U is not allowed", r), true
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return 0, 0, "", false
}

// yamlPrintable is YAML 1.2's c-printable (with the byte order mark).
func yamlPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return true
	case r >= 0x20 && r <= 0x7E:
		return true
	case r == 0x85 || r >= 0xA0 && r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return true
	case r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

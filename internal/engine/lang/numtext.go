package lang

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/plasmd/plasmd/guest/abi"
)

// Number literals as written.
//
// A number token's value forgets how it was written: -0 is the integer 0
// and 1.0 the float 1. Where a number stands for text (a text id named by
// a whole number, or an error quoting the value back), the program's own
// spelling is what the agent meant, so it is read back from the source at
// the value's position. Plasm (v0.1.66) turns such literals into their
// normalised text ("0", "1") and sends that; plasmd never sends a value
// other than the one written: it refuses the literal with a hint to quote
// it.

// literalText is the source text of the number literal at at when it
// holds v, else v's canonical text.
func (p *planner) literalText(at pos, v any) string {
	canon := canonicalNumber(v)
	off, ok := offsetOf(p.src, at)
	if !ok {
		return canon
	}
	s := p.src[off:]
	n := 0
	if n < len(s) && s[n] == '-' {
		n++
	}
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	if n+1 < len(s) && s[n] == '.' && isDigit(s[n+1]) {
		n++
		for n < len(s) && isDigit(s[n]) {
			n++
		}
	}
	text := s[:n]
	switch x := v.(type) {
	case int64:
		if i, err := strconv.ParseInt(text, 10, 64); err == nil && i == x {
			return text
		}
	case float64:
		if f, err := strconv.ParseFloat(text, 64); err == nil && f == x && strings.Contains(text, ".") {
			return text
		}
	}
	return canon
}

// canonicalNumber is how a number value is sent as text.
func canonicalNumber(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return describe(v)
}

// describeAt is describe, with a number shown as the program wrote it.
func (p *planner) describeAt(at pos, v any) string {
	switch v.(type) {
	case int64, float64:
		return p.literalText(at, v)
	}
	return describe(v)
}

// spellAt is fmt.Sprint(v), with a number as the program wrote it.
func (p *planner) spellAt(at pos, v any) string {
	switch v.(type) {
	case int64, float64:
		return p.literalText(at, v)
	}
	return fmt.Sprint(v)
}

// checkWholeID refuses a whole number naming a text id when its spelling
// is not the text it would be sent as (-0 for "0").
func (p *planner) checkWholeID(entity string, id int64, at pos) *abi.Error {
	written := p.literalText(at, id)
	if sent := strconv.FormatInt(id, 10); written != sent {
		return errAt(at, abi.CodeType, entity+" id "+written+" is the number "+sent+", and would be sent as \""+sent+"\"",
			`quote the id as written: `+entity+`("`+written+`"), or write `+entity+`(`+sent+`)`)
	}
	return nil
}

// offsetOf is the byte offset of at (columns count runes) in src.
func offsetOf(src string, at pos) (int, bool) {
	off := 0
	for line := 1; line < at.line; line++ {
		i := strings.IndexByte(src[off:], '\n')
		if i < 0 {
			return 0, false
		}
		off += i + 1
	}
	for col := 1; col < at.col; col++ {
		if off >= len(src) || src[off] == '\n' {
			return 0, false
		}
		_, n := utf8.DecodeRuneInString(src[off:])
		off += n
	}
	return off, off <= len(src)
}

package viewtemplate

import (
	"fmt"
	"strings"
	"unicode"
)

// Segments of a template: literal text, {{ output }} and {% tags %}.
type segKind int

const (
	segText segKind = iota
	segOut
	segTag
)

type segment struct {
	kind segKind
	text string // text, or the inside of the delimiters
	pos  int    // byte offset of text (inside the delimiters for out/tag)
}

// scan splits src into segments, applying `-` whitespace control.
func scan(src string) ([]segment, error) {
	var segs []segment
	i := 0
	trimNext := false
	for i < len(src) {
		j := strings.IndexByte(src[i:], '{')
		if j < 0 || i+j+1 >= len(src) {
			segs = appendText(segs, src[i:], i, trimNext)
			break
		}
		j += i
		open := src[j+1]
		var closeDelim string
		switch open {
		case '{':
			closeDelim = "}}"
		case '%':
			closeDelim = "%}"
		case '#':
			closeDelim = "#}"
		default:
			segs = appendText(segs, src[i:j+1], i, trimNext)
			trimNext = false
			i = j + 1
			continue
		}
		text := src[i:j]
		start := j + 2
		trimPrev := start < len(src) && src[start] == '-'
		if trimPrev {
			text = strings.TrimRightFunc(text, unicode.IsSpace)
			start++
		}
		segs = appendText(segs, text, i, trimNext)
		k := strings.Index(src[start:], closeDelim)
		if k < 0 {
			l, c := lineCol(src, j)
			return nil, &Error{Line: l, Column: c, Msg: fmt.Sprintf("%q is never closed with %q", src[j:j+2], closeDelim)}
		}
		end := start + k
		inner := src[start:end]
		trimNext = strings.HasSuffix(inner, "-")
		if trimNext {
			inner = inner[:len(inner)-1]
		}
		switch open {
		case '{':
			segs = append(segs, segment{kind: segOut, text: inner, pos: start})
		case '%':
			segs = append(segs, segment{kind: segTag, text: inner, pos: start})
		}
		i = end + 2
	}
	return segs, nil
}

func appendText(segs []segment, text string, pos int, trimLeft bool) []segment {
	if trimLeft {
		n := len(text)
		text = strings.TrimLeftFunc(text, unicode.IsSpace)
		pos += n - len(text)
	}
	if text == "" {
		return segs
	}
	return append(segs, segment{kind: segText, text: text, pos: pos})
}

// Expression tokens.
type tokKind int

const (
	tEOF tokKind = iota
	tName
	tString
	tNumber
	tOp
)

type token struct {
	kind tokKind
	text string
	pos  int // byte offset in the template
}

// lex tokenizes an expression that starts at byte offset base.
func lex(src string, s string, base int) ([]token, error) {
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '_' || unicode.IsLetter(rune(c)):
			j := i + 1
			for j < len(s) && (s[j] == '_' || unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
				j++
			}
			out = append(out, token{tName, s[i:j], base + i})
			i = j
		case c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			out = append(out, token{tNumber, s[i:j], base + i})
			i = j
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
					switch s[j] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					default:
						b.WriteByte(s[j])
					}
					continue
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				l, col := lineCol(src, base+i)
				return nil, &Error{Line: l, Column: col, Msg: "unterminated string"}
			}
			out = append(out, token{tString, b.String(), base + i})
			i = j + 1
		default:
			two := ""
			if i+1 < len(s) {
				two = s[i : i+2]
			}
			switch two {
			case "==", "!=", "<=", ">=", "//", "**":
				out = append(out, token{tOp, two, base + i})
				i += 2
				continue
			}
			// * / % : { } are Jinja this subset does not run; the parser
			// reports them as unsupported rather than as typos.
			if strings.IndexByte("()[].,|~<>=+-*/%:{}", c) < 0 {
				l, col := lineCol(src, base+i)
				return nil, &Error{Line: l, Column: col, Msg: fmt.Sprintf("unexpected character %q", c)}
			}
			out = append(out, token{tOp, string(c), base + i})
			i++
		}
	}
	return append(out, token{tEOF, "", base + len(s)}), nil
}

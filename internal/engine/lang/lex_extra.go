package lang

import (
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
)

// Lexing of the forms that Plasm's wider grammar adds (comments) and of the
// mistakes agents make when they copy teaching rows or escape programs: each
// gets its own message and hint, at the position of the offending text.

// comment skips `;;` to the end of the line; the newline itself still
// separates statements.
func (lx *lexer) comment() {
	for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
		lx.advance()
	}
	lx.spaced = true
}

// dollar explains a `$` copied from a teaching row. `e#~$` (a search row
// copied whole) gets its own hint, because the fix there is quoting words,
// not picking a value.
func (lx *lexer) dollar(p pos) *abi.Error {
	if n := len(lx.toks); n > 0 && lx.toks[n-1].kind == tTilde {
		return errAt(p, abi.CodeSyntax, "`~$` was copied from the teaching table: `$` stands for the words to search for",
			`write the words in quotes after ~, e.g. Issue~"login timeout"`)
	}
	return errAt(p, abi.CodeSyntax, "`$` is a fill-in cue from the teaching table, not a value",
		`replace $ with an actual value, e.g. status="open"`)
}

// strayTag refuses a line holding only the tag of a heredoc that already
// closed: the text contained its own closing tag, so the heredoc ended early
// and the rest of the text was read as program. The identifier just lexed
// spans [start, lx.off).
func (lx *lexer) strayTag(start int, p pos) *abi.Error {
	if lx.closed == nil || !lx.lineStart {
		return nil
	}
	tag := lx.src[start:lx.off]
	at, ok := lx.closed[tag]
	if !ok || !closesLine(lx.src[lx.off:]) {
		return nil
	}
	if lx.depth == 0 && lastLine(lx.src[lx.off:]) {
		// A label alone on the last line is a root, even when it is
		// spelled like an earlier heredoc's tag.
		return nil
	}
	return tagReused(p, tag, at)
}

// closesLine reports whether rest (the text after a tag) would close a
// heredoc: blanks and closing delimiters up to the end of the line.
func closesLine(rest string) bool {
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	return strings.Trim(rest, " \t\r),]}") == ""
}

// lastLine reports whether nothing but blanks follows the current line.
func lastLine(rest string) bool {
	i := strings.IndexByte(rest, '\n')
	return i < 0 || strings.TrimSpace(rest[i:]) == ""
}

func tagReused(p pos, tag string, closedAt int) *abi.Error {
	return errAt(p, abi.CodeSyntax, "this line is only the tag "+tag+", but heredoc <<"+tag+" already closed at line "+itoa(closedAt)+": its text contains its own closing tag",
		"the first line equal to the tag ends a heredoc; pick a tag that never appears alone on a line of the text, e.g. "+tag+"_END_7F3")
}

// strayAfter looks, after a lexing error, for a line that is only the tag
// of a heredoc closed earlier: when there is one, the error is a symptom of
// the heredoc having closed too early, and that is the error to report.
func (lx *lexer) strayAfter(err *abi.Error) *abi.Error {
	if lx.lastTag == "" {
		return err
	}
	off, line := lx.off, lx.line
	for off < len(lx.src) {
		end := strings.IndexByte(lx.src[off:], '\n')
		text := lx.src[off:]
		if end >= 0 {
			text = text[:end]
		}
		trimmed := strings.TrimLeft(text, " \t")
		if rest, ok := strings.CutPrefix(trimmed, lx.lastTag); ok && closesLine(rest) && line > lx.lastAt {
			return tagReused(pos{line, len(text) - len(trimmed) + 1}, lx.lastTag, lx.lastAt)
		}
		if end < 0 {
			break
		}
		off += end + 1
		line++
	}
	return err
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

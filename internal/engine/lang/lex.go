package lang

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/text"
)

// pos is a 1-based line:column in the program; columns count characters.
type pos struct{ line, col int }

type tokKind uint8

const (
	tEOF tokKind = iota
	tNL
	tIdent
	tString
	tHeredoc
	tNumber
	tLParen
	tRParen
	tLBrace
	tRBrace
	tLBrack
	tRBrack
	tComma
	tDot
	tColon
	tEq
	tNe
	tGt
	tLt
	tGe
	tLe
	tTilde
	tArrow
	tDotDot // `..`: only valid as the last argument of a method call
	tCaret  // `^` in `.^Entity` (reverse traversal)
)

var tokNames = [...]string{
	tEOF: "end of program", tNL: "newline", tIdent: "name", tString: "string",
	tHeredoc: "heredoc", tNumber: "number", tLParen: "(", tRParen: ")",
	tLBrace: "{", tRBrace: "}", tLBrack: "[", tRBrack: "]", tComma: ",",
	tDot: ".", tColon: ":", tEq: "=", tNe: "!=", tGt: ">", tLt: "<",
	tGe: ">=", tLe: "<=", tTilde: "~", tArrow: "=>", tDotDot: "..", tCaret: "^",
}

func (k tokKind) String() string { return tokNames[k] }

// token is one lexeme. For identifiers text is the wire name after symbol
// expansion and raw is what the program said; for strings and heredocs text
// is the decoded value.
type token struct {
	kind  tokKind
	space bool // next to kind: the struct is copied per token
	text  string
	raw   string
	num   any
	p     pos
	off   int // byte offset of the first character
	end   int // byte offset after the last character
	sym   *symRef
	// symErr is set on a symbol-shaped word the session does not know; it
	// is raised if the word is used as a name (see expand).
	symErr *abi.Error
}

func (t *token) describe() string {
	switch t.kind {
	case tIdent:
		return strconv.Quote(t.raw)
	case tNumber:
		return t.raw
	case tString, tHeredoc:
		return t.kind.String()
	}
	return strconv.Quote(t.kind.String())
}

type lexer struct {
	src  string
	off  int
	line int
	col  int
	toks []token
	// depth counts open brackets: newlines inside them are layout, not
	// statement separators, so arguments may span lines.
	depth  int
	opens  []pos
	spaced bool
	// closed maps each heredoc tag to the line its body closed on, so a
	// later line holding only that tag can be explained (see strayTag).
	closed map[string]int
	// lastTag and lastAt are the most recently closed heredoc.
	lastTag string
	lastAt  int
	// lineStart is true until something other than blanks is seen on the
	// current line.
	lineStart bool
}

func lex(src string) ([]token, *abi.Error) {
	lx := &lexer{src: src, line: 1, col: 1, lineStart: true}
	return lx.lex()
}

// lex lexes lx.src, appending to lx.toks (which may be a reused buffer).
func (lx *lexer) lex() ([]token, *abi.Error) {
	// Invalid UTF-8 is refused where it stands: lexed on, each bad byte
	// became U+FFFD and reached the backend as text nobody wrote.
	if off, line, col, bad := text.InvalidUTF8(lx.src); bad {
		return nil, errAt(pos{line, col}, abi.CodeSyntax, text.InvalidUTF8Message(lx.src, off), text.InvalidUTF8Hint)
	}
	if want := len(lx.src)/2 + 2; cap(lx.toks) < want {
		lx.toks = make([]token, 0, want)
	}
	if err := lx.run(); err != nil {
		return nil, lx.strayAfter(err)
	}
	return lx.toks, nil
}

func (lx *lexer) here() pos { return pos{lx.line, lx.col} }

// advance consumes one character (a rune, or one byte of invalid UTF-8).
// Hot paths that know they stand on ASCII other than a newline use step
// instead: in the Wasm guest a call costs more than the work.
func (lx *lexer) advance() {
	c := lx.src[lx.off]
	if c == '\n' {
		lx.off++
		lx.line++
		lx.col = 1
		return
	}
	if c < utf8.RuneSelf {
		lx.off++
	} else {
		_, n := utf8.DecodeRuneInString(lx.src[lx.off:])
		lx.off += n
	}
	lx.col++
}

// step consumes n ASCII characters, none of them a newline.
func (lx *lexer) step(n int) {
	lx.off += n
	lx.col += n
}

func (lx *lexer) peekAt(i int) byte {
	if lx.off+i < len(lx.src) {
		return lx.src[lx.off+i]
	}
	return 0
}

func (lx *lexer) emit(k tokKind, start int, p pos, text string) *token {
	// Every field is stored into the slot, which is not zeroed first: a
	// composite literal would be built in a temporary and copied, and in
	// the Wasm guest zeroing a token (memory.fill, which wazero runs as a
	// loop of memmove calls) costs more than the rest of emitting it.
	if len(lx.toks) < cap(lx.toks) {
		lx.toks = lx.toks[:len(lx.toks)+1]
	} else {
		lx.toks = append(lx.toks, token{})
	}
	t := &lx.toks[len(lx.toks)-1]
	t.kind, t.space, t.text, t.raw, t.num = k, lx.spaced, text, lx.src[start:lx.off], nil
	t.p, t.off, t.end, t.sym, t.symErr = p, start, lx.off, nil, nil
	lx.spaced = false
	lx.lineStart = k == tNL
	return t
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '-' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (lx *lexer) run() *abi.Error {
	for lx.off < len(lx.src) {
		c := lx.src[lx.off]
		p := lx.here()
		start := lx.off
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			lx.step(1)
			lx.spaced = true
		case c == '\n':
			lx.advance()
			if lx.depth == 0 {
				lx.emit(tNL, start, p, "")
			}
			lx.spaced = true
			lx.lineStart = true
		case c == ';' && lx.peekAt(1) == ';':
			lx.comment()
		case isIdentStart(c):
			// Identifier characters are ASCII and never a newline, so the
			// column moves by the byte count.
			n := 0
			for start+n < len(lx.src) && isIdentPart(lx.src[start+n]) {
				n++
			}
			lx.step(n)
			if lx.closed != nil { // only after a heredoc; saves a call per name
				if err := lx.strayTag(start, p); err != nil {
					return err
				}
			}
			lx.emit(tIdent, start, p, lx.src[start:lx.off])
		case isDigit(c) || c == '-' && isDigit(lx.peekAt(1)):
			if err := lx.number(start, p); err != nil {
				return err
			}
		case c == '"':
			if err := lx.str(start, p); err != nil {
				return err
			}
		case c == '<' && lx.peekAt(1) == '<':
			if err := lx.heredoc(start, p); err != nil {
				return err
			}
		case c == '.' && lx.peekAt(1) == '.':
			lx.step(2)
			lx.emit(tDotDot, start, p, "")
		case c == '$':
			return lx.dollar(p)
		case c == '\\':
			if lx.peekAt(1) == 'n' || lx.peekAt(1) == 'r' && lx.peekAt(2) == '\\' && lx.peekAt(3) == 'n' {
				return errAt(p, abi.CodeSyntax, `the program contains a literal two-character "\n" between statements`,
					"separate statements with real newlines (in JSON, the string escape \\n, not \\\\n)")
			}
			hint := "backslash escapes are only valid inside double-quoted strings"
			if lx.peekAt(1) == '"' {
				hint = `the program looks escaped twice; send quotes as plain " characters`
			}
			return errAt(p, abi.CodeSyntax, "unexpected `\\` outside a string", hint)
		default:
			if err := lx.punct(c, start, p); err != nil {
				return err
			}
		}
	}
	if lx.depth > 0 {
		o := lx.opens[len(lx.opens)-1]
		return errAt(o, abi.CodeSyntax, "bracket opened here is never closed", "add the matching closing bracket")
	}
	lx.emit(tEOF, lx.off, lx.here(), "")
	return nil
}

// punct lexes one operator or bracket. Each case only picks the kind and
// width and a single emit follows: every inlined emit adds its own
// temporaries to the frame, which the Wasm guest clears on every call.
func (lx *lexer) punct(c byte, start int, p pos) *abi.Error {
	k, n := tEOF, 1 // every punctuation character is ASCII
	switch c {
	case '(', '{', '[':
		if lx.depth >= maxDepth {
			return errAt(p, abi.CodeBadRequest, "program nests brackets more than 64 deep", "flatten the expression")
		}
		lx.depth++
		lx.opens = append(lx.opens, p)
		k = bracketKind(c)
	case ')', '}', ']':
		if lx.depth == 0 {
			return errAt(p, abi.CodeSyntax, "unexpected `"+string(c)+"` with no matching opening bracket", "")
		}
		lx.depth--
		lx.opens = lx.opens[:len(lx.opens)-1]
		k = bracketKind(c)
	case ',':
		k = tComma
	case '.':
		k = tDot
	case ':':
		k = tColon
	case '~':
		k = tTilde
	case '^':
		k = tCaret
	case ';':
		return errAt(p, abi.CodeSyntax, "unexpected `;`", "comments start with ;; and run to the end of the line; statements are separated by newlines")
	case '=':
		if k = tEq; lx.peekAt(1) == '>' {
			k, n = tArrow, 2
		}
	case '!':
		if lx.peekAt(1) != '=' {
			return errAt(p, abi.CodeSyntax, "unexpected `!`", "the only operator starting with ! is !=")
		}
		k, n = tNe, 2
	case '>':
		if k = tGt; lx.peekAt(1) == '=' {
			k, n = tGe, 2
		}
	case '<':
		if k = tLt; lx.peekAt(1) == '=' {
			k, n = tLe, 2
		}
	default:
		r, _ := utf8.DecodeRuneInString(lx.src[lx.off:])
		return errAt(p, abi.CodeSyntax, "unexpected character "+strconv.QuoteRune(r), "")
	}
	lx.step(n)
	lx.emit(k, start, p, "")
	return nil
}

func bracketKind(c byte) tokKind {
	switch c {
	case '(':
		return tLParen
	case ')':
		return tRParen
	case '{':
		return tLBrace
	case '}':
		return tRBrace
	case '[':
		return tLBrack
	}
	return tRBrack
}

func (lx *lexer) number(start int, p pos) *abi.Error {
	if lx.src[lx.off] == '-' {
		lx.advance()
	}
	for lx.off < len(lx.src) && isDigit(lx.src[lx.off]) {
		lx.advance()
	}
	decimal := false
	if lx.peekAt(0) == '.' && isDigit(lx.peekAt(1)) {
		decimal = true
		lx.advance()
		for lx.off < len(lx.src) && isDigit(lx.src[lx.off]) {
			lx.advance()
		}
	}
	if lx.off < len(lx.src) && isIdentStart(lx.src[lx.off]) {
		return errAt(p, abi.CodeSyntax, "malformed number "+strconv.Quote(lx.src[start:lx.off+1]),
			`quote values that are not plain numbers, e.g. "`+lx.src[start:lx.off+1]+`…"`)
	}
	text := lx.src[start:lx.off]
	if !decimal || leadingZero(text) {
		// A whole number is exact or has no value: beyond int64 it used to
		// become a float64 (12345678901234567890 was sent as
		// 12345678901234567000), and 007 became 7 (Issue(007) asked for id
		// "7"). Such a token keeps num nil; a phrase may still use its raw
		// text, and the parser refuses it as a value (numberProblem).
		var v any
		if n, err := strconv.ParseInt(text, 10, 64); err == nil && !leadingZero(text) {
			v = n
		}
		lx.emit(tNumber, start, p, text).num = v
		return nil
	}
	var v any
	{
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return errAt(p, abi.CodeSyntax, "number "+text+" is out of range", "quote it to pass it as text")
		}
		v = f
	}
	lx.emit(tNumber, start, p, text).num = v
	return nil
}

func (lx *lexer) str(start int, p pos) *abi.Error {
	lx.advance() // opening quote
	// Most strings have no escape: their value is the text between the
	// quotes, taken without copying.
	for i := lx.off; i < len(lx.src); i++ {
		if c := lx.src[i]; c == '"' {
			lx.col += utf8.RuneCountInString(lx.src[lx.off:i]) + 1
			body := lx.src[lx.off:i]
			lx.off = i + 1
			lx.emit(tString, start, p, body)
			return nil
		} else if c == '\\' || c == '\n' {
			break
		}
	}
	var b strings.Builder
	for {
		if lx.off >= len(lx.src) || lx.src[lx.off] == '\n' {
			return errAt(p, abi.CodeSyntax, "unterminated string", `close it with ", or use \n or a heredoc (<<TAG … TAG) for multi-line text`)
		}
		c := lx.src[lx.off]
		if c == '"' {
			lx.advance()
			lx.emit(tString, start, p, b.String())
			return nil
		}
		if c != '\\' {
			i := lx.off
			lx.advance()
			b.WriteString(lx.src[i:lx.off])
			continue
		}
		ep := lx.here()
		lx.advance()
		if lx.off >= len(lx.src) {
			return errAt(p, abi.CodeSyntax, "unterminated string", "")
		}
		e := lx.src[lx.off]
		lx.advance()
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'u':
			r, ok := lx.hex4()
			if !ok {
				return errAt(ep, abi.CodeSyntax, `malformed \u escape`, `write \u followed by four hex digits, e.g. \u00e9`)
			}
			if utf16.IsSurrogate(r) && lx.peekAt(0) == '\\' && lx.peekAt(1) == 'u' {
				save, sl, sc := lx.off, lx.line, lx.col
				lx.advance()
				lx.advance()
				if r2, ok := lx.hex4(); ok && utf16.DecodeRune(r, r2) != utf8.RuneError {
					r = utf16.DecodeRune(r, r2)
				} else {
					lx.off, lx.line, lx.col = save, sl, sc
				}
			}
			b.WriteRune(r)
		default:
			return errAt(ep, abi.CodeSyntax, "unknown escape \\"+string(rune(e))+" in string", `valid escapes: \" \\ \n \t \uXXXX`)
		}
	}
}

func (lx *lexer) hex4() (rune, bool) {
	if lx.off+4 > len(lx.src) {
		return 0, false
	}
	n, err := strconv.ParseUint(lx.src[lx.off:lx.off+4], 16, 32)
	if err != nil {
		return 0, false
	}
	for range 4 {
		lx.advance()
	}
	return rune(n), true
}

// heredoc lexes <<TAG NL body NL TAG. The closing line is the first whose
// trimmed text is TAG; it may continue with ), , or } so a heredoc can end an
// argument list inline.
func (lx *lexer) heredoc(start int, p pos) *abi.Error {
	lx.advance()
	lx.advance()
	tagStart := lx.off
	if lx.off >= len(lx.src) || !isIdentStart(lx.src[lx.off]) {
		return errAt(p, abi.CodeSyntax, "`<<` must be followed by a tag name", "write <<TAG, the text on the following lines, then TAG alone on a line")
	}
	for lx.off < len(lx.src) && isIdentPart(lx.src[lx.off]) {
		lx.advance()
	}
	tag := lx.src[tagStart:lx.off]
	for lx.off < len(lx.src) && (lx.src[lx.off] == ' ' || lx.src[lx.off] == '\t' || lx.src[lx.off] == '\r') {
		lx.advance()
	}
	if lx.off >= len(lx.src) || lx.src[lx.off] != '\n' {
		return errAt(lx.here(), abi.CodeSyntax, "heredoc <<"+tag+" must end its line", "start the text on the next line")
	}
	lx.advance()
	var body []string
	for lx.off < len(lx.src) {
		lineStart := lx.off
		nl := strings.IndexByte(lx.src[lineStart:], '\n')
		lineEnd := len(lx.src)
		if nl >= 0 {
			lineEnd = lineStart + nl
		}
		line := lx.src[lineStart:lineEnd]
		trimmed := strings.TrimLeft(line, " \t")
		if rest, ok := strings.CutPrefix(trimmed, tag); ok {
			restT := strings.TrimRight(rest, " \t\r")
			if restT == "" || restT[0] == ')' || restT[0] == ',' || restT[0] == '}' {
				// Consume through the closing tag only; what follows is lexed normally.
				stop := lineStart + (len(line) - len(trimmed)) + len(tag)
				for lx.off < stop {
					lx.advance()
				}
				lx.emit(tHeredoc, start, p, strings.Join(body, "\n"))
				if lx.closed == nil {
					lx.closed = map[string]int{}
				}
				lx.closed[tag] = lx.line
				lx.lastTag, lx.lastAt = tag, lx.line
				return nil
			}
		}
		body = append(body, strings.TrimSuffix(line, "\r"))
		for lx.off < lineEnd {
			lx.advance()
		}
		if lx.off < len(lx.src) {
			lx.advance()
		}
	}
	return errAt(p, abi.CodeSyntax, "heredoc <<"+tag+" is never closed", "end it with a line containing only "+tag)
}

// leadingZero reports a number written with a zero before another digit
// (007, -01.5): JSON forbids them, and the value such a literal meant,
// number or text, cannot be told.
func leadingZero(text string) bool {
	text = strings.TrimPrefix(text, "-")
	return len(text) > 1 && text[0] == '0' && isDigit(text[1])
}

// numberProblem says why a number token has no value (see number).
func numberProblem(t *token) *abi.Error {
	if leadingZero(t.raw) {
		digits := strings.TrimLeft(strings.TrimPrefix(t.raw, "-"), "0")
		if digits == "" || digits[0] == '.' {
			digits = "0" + digits
		}
		if strings.HasPrefix(t.raw, "-") {
			digits = "-" + digits
		}
		return errAt(t.p, abi.CodeSyntax, "number "+t.raw+" has a leading zero",
			"write "+digits+" for the number, or \""+t.raw+"\" (quoted) for text such as an id")
	}
	return errAt(t.p, abi.CodeSyntax, "whole number "+t.raw+" is out of range (at most 9223372036854775807 either side of zero)",
		"quote it (\""+t.raw+"\") to pass it as text, or write it with a decimal point ("+t.raw+".0) for an approximate number")
}

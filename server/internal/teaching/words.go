package teaching

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxWordRunes bounds one token: longer runs of letters are not words an
// intent and a catalog could plausibly share, and the bound keeps hostile
// input from producing huge map keys.
const maxWordRunes = 64

// stopwords carry no signal about which capability an intent wants. "new" is
// here because create descriptions nearly all say "a new X", which would
// otherwise expose create to any intent mentioning new things.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true,
	"to": true, "in": true, "on": true, "for": true, "with": true, "by": true,
	"from": true, "at": true, "as": true, "is": true, "are": true, "be": true,
	"it": true, "its": true, "this": true, "that": true, "these": true,
	"those": true, "my": true, "our": true, "your": true, "their": true,
	"all": true, "any": true, "some": true, "me": true, "i": true, "we": true,
	"you": true, "them": true, "they": true, "into": true, "via": true,
	"new": true, "given": true, "each": true, "then": true, "than": true,
	"if": true, "so": true, "not": true, "no": true, "do": true, "does": true,
	"was": true, "were": true, "has": true, "have": true, "had": true,
	"will": true, "can": true, "should": true, "please": true, "about": true,
	"which": true, "what": true, "who": true, "whose": true, "when": true,
	"where": true, "how": true, "s": true,
}

// Words turns text into the comparison tokens shared by intent exposure and
// discovery ranking: split on anything that is not a letter or digit and at
// camel-case boundaries (IssueComment → issue, comment), lower-cased,
// stopwords dropped, then crudely stemmed so that "issues", "issue",
// "closing" and "closed" meet their base forms. Order and repeats are kept
// because ranking counts term frequency.
func Words(text string) []string {
	var out []string
	for _, raw := range splitWords(text) {
		w := strings.ToLower(raw)
		if stopwords[w] {
			continue
		}
		w = stem(w)
		if w == "" || stopwords[w] {
			continue
		}
		out = append(out, w)
	}
	return out
}

// splitWords cuts text into runs of letters and digits, breaking runs at
// lower→upper transitions and before the last capital of an acronym
// (HTTPServer → HTTP, Server).
func splitWords(text string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 && len(cur) <= maxWordRunes {
			words = append(words, string(cur))
		}
		cur = cur[:0]
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 {
			prev := cur[len(cur)-1]
			next, _ := utf8.DecodeRuneInString(text[i:])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) ||
				(unicode.IsUpper(prev) && unicode.IsLower(next)) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// stemSuffixes are tried in order; the first whose removal leaves at least
// three runes wins. Stripping a trailing "e" as well makes "issue"/"issues"
// and "close"/"closed"/"closing" collide, which is all this needs to do.
var stemSuffixes = []string{"ing", "ies", "es", "ed", "s", "e"}

func stem(w string) string {
	for _, suf := range stemSuffixes {
		if !strings.HasSuffix(w, suf) {
			continue
		}
		base := w[:len(w)-len(suf)]
		if utf8.RuneCountInString(base) < 3 {
			continue
		}
		switch suf {
		case "ies":
			return base + "y"
		case "s":
			// "class", "address": a double s is part of the word.
			if strings.HasSuffix(base, "s") {
				return w
			}
		}
		return base
	}
	return w
}

// Size reports the byte length of a teaching text and an estimate of its
// token count. The estimate is bytes/4 rounded up: the usual rule of thumb
// for English-like text under BPE tokenisers; TSV with many short symbols
// tokenises a little worse, so treat it as a lower bound when comparing
// against a model's context budget.
func Size(text string) (bytes, tokens int) {
	bytes = len(text)
	return bytes, (bytes + 3) / 4
}

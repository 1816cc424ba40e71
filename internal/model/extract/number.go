package extract

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// How a JSON number becomes a cell (docs/catalog-format.md, "Numbers"):
//
//   - In a text column (value type string, uuid or select) it is the
//     number's literal text exactly as the body wrote it: 12345678901234567891
//     stays "12345678901234567891", 1e3 stays "1e3" and 1.0 stays "1.0".
//     A text id is an opaque key; any rewriting (rounding through float64,
//     or normalising 1e3 to 1000) would name a different row in the get
//     that hydrates it. Plasm (v0.1.66) writes serde_json's text instead,
//     exact only up to u64, and 1e3 as "1000.0".
//   - Elsewhere an integer that fits int64 is an int64. An integer that
//     does not is carried as json.Number with its exact digits, never
//     rounded to a float64: encoding/json writes it back verbatim, and the
//     request compilers write its digits into paths and queries. A float64
//     holds integers exactly only up to 2^53, so rounding would silently
//     change ids and amounts; refusing the row instead would fail a whole
//     page over a value that can be carried exactly.
//   - Other numbers are float64 (non-integral, as JSON means them), or
//     their text when they overflow a float64 (1e400).

// isText reports whether a column of type typ holds text (string, uuid,
// select): a number found in one is kept as its literal. A switch, not a
// map: it runs for every cell.
func isText(typ string) bool {
	switch typ {
	case "string", "uuid", "select":
		return true
	}
	return false
}

// ValueIsText reports whether values of val are text, so that a JSON
// number found in one is its literal text: a text type, or a reference to
// an entity whose id is text (it names that id). The decode spec and the
// rows a vendor module decodes (server/internal/core) follow this rule.
func ValueIsText(cat *catalog.Catalog, val *catalog.Value) bool {
	if val == nil {
		return false
	}
	if val.Type != "entity_ref" {
		return isText(val.Type)
	}
	if cat == nil {
		return false
	}
	if t := cat.Entities[val.Target]; t != nil {
		if f := t.Fields[t.IDField]; f != nil {
			if idv := cat.Values[f.ValueRef]; idv != nil {
				return isText(idv.Type)
			}
		}
	}
	return false
}

// coerce converts a decoded value for a column of type typ.
func coerce(v any, typ string) any {
	switch {
	case typ == "integer":
		return asInteger(v)
	case typ == "number":
		return asFloat(v)
	case isText(typ):
		return asText(v)
	}
	return plain(v)
}

// asText keeps a number in a text column as its literal text.
func asText(v any) any {
	if n, ok := v.(json.Number); ok {
		return string(n)
	}
	return plain(v)
}

// integerLiteral reports whether s is written as a JSON integer: an
// optional minus and digits without a leading zero, no fraction or
// exponent. Such a literal names one exact integer, which is what must
// survive whatever its size, and encoding/json writes it back as is.
func integerLiteral(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// bigInteger is the exact form of an integer literal that does not fit an
// int64; ok is false for anything else.
func bigInteger(n json.Number) (json.Number, bool) {
	if !integerLiteral(string(n)) {
		return "", false
	}
	if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return "", false
	}
	return n, true
}

// maxExponent bounds, together with the literal's own length, the
// exponents decimalInteger reasons about exactly; beyond that only the sign
// of the exponent matters (the value is huge or tiny), so no literal is
// ever expanded.
const maxExponent = 1 << 20

// decimalInteger reads a JSON number literal exactly: integral says it
// denotes an integer (3, 3.0, 1e3, 12345678901234567891, 1.5e19), and
// fits that the integer is i. Nothing is expanded: 1e999999 is found
// integral and not fitting without writing its digits. A literal outside
// JSON's grammar is not integral.
func decimalInteger(s string) (i int64, fits, integral bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	intPart, rest := leadingDigits(s)
	if intPart == "" || (intPart[0] == '0' && len(intPart) > 1) {
		return 0, false, false
	}
	var frac string
	if strings.HasPrefix(rest, ".") {
		if frac, rest = leadingDigits(rest[1:]); frac == "" {
			return 0, false, false
		}
	}
	exp := 0
	if rest != "" {
		if rest[0] != 'e' && rest[0] != 'E' {
			return 0, false, false
		}
		rest = rest[1:]
		sign := 1
		if rest != "" && (rest[0] == '+' || rest[0] == '-') {
			if rest[0] == '-' {
				sign = -1
			}
			rest = rest[1:]
		}
		digits, tail := leadingDigits(rest)
		if digits == "" || tail != "" {
			return 0, false, false
		}
		// The clamp grows with the literal: the mantissa may itself be
		// longer than maxExponent digits (1 followed by 2^20 zeros, then
		// e-1048581, is 0.1), and the decimal point must stay exact for
		// every exponent it can bring back into range. Beyond this bound
		// the point lies more than maxExponent digits outside the mantissa
		// whatever its length, so only the exponent's sign matters.
		limit := maxExponent + len(s)
		for _, c := range digits {
			if exp = exp*10 + int(c-'0'); exp > limit {
				exp = limit
				break
			}
		}
		exp *= sign
	}
	// The value is 0.mant × 10^point once leading zeros are gone.
	mant := intPart + frac
	point := len(intPart) + exp
	for mant != "" && mant[0] == '0' {
		mant, point = mant[1:], point-1
	}
	mant = strings.TrimRight(mant, "0")
	if mant == "" {
		return 0, true, true
	}
	if point < len(mant) {
		return 0, false, false
	}
	if point > 19 {
		return 0, false, true
	}
	digits := mant + strings.Repeat("0", point-len(mant))
	if neg {
		digits = "-" + digits
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false, true
	}
	return v, true, true
}

func leadingDigits(s string) (digits, rest string) {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return s[:n], s[n:]
}

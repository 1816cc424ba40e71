package extract

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/decimal"
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
//     request compilers write its digits into paths and queries. In an
//     integer column those are its canonical digits (1.5e19 and
//     15000000000000000000.0 are 15000000000000000000) when they are at
//     most maxExpansion bytes longer than the literal, so every spelling
//     names one row (a longer one, 1e400, keeps its literal). A float64
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

// ColumnType is the type a column holding values of val is coerced by
// (Column.Type): val's own, except that a reference to an entity whose id
// is text is text, so a number written for it keeps its literal like the
// id it names. "" (no declared value) coerces nothing but plain numbers.
// The decode spec and the rows a vendor module decodes
// (server/internal/core) both take a column's type from here.
func ColumnType(cat *catalog.Catalog, val *catalog.Value) string {
	if val == nil {
		return ""
	}
	if val.Type == "entity_ref" && ValueIsText(cat, val) {
		return "string"
	}
	return val.Type
}

// Cell is v, a value read from JSON with json.Number, as a cell of a
// column of type typ: exactly what Apply puts in a row. Rows a vendor
// module decodes go through it so that they carry the same cells as the
// standard decoder's (one rule for integers, text and numbers).
func Cell(v any, typ string) any { return coerce(v, typ) }

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

// maxExponent is decimal.MaxExponent, named here for the tests.
const maxExponent = decimal.MaxExponent

// decimalInteger reads a JSON number literal exactly: integral says it
// denotes an integer (3, 3.0, 1e3, 12345678901234567891, 1.5e19), and
// fits that the integer is i. Nothing is expanded: 1e999999 is found
// integral and not fitting without writing its digits. A literal outside
// JSON's grammar is not integral.
func decimalInteger(s string) (i int64, fits, integral bool) {
	neg, mant, point, ok := decimal.Parse(s)
	if !ok {
		return 0, false, false
	}
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

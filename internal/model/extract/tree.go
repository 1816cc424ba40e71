package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/decimal"
)

// Limits on response bodies. The depth cap is checked before decoding, which
// is what makes every later recursive walk over the document safe.
const (
	MaxBodyBytes = 32 << 20
	maxJSONDepth = 128
)

var (
	errTooLarge = fmt.Errorf("response body exceeds %d bytes", MaxBodyBytes)
	errTooDeep  = fmt.Errorf("response JSON nests deeper than %d levels", maxJSONDepth)
)

// ParseJSON decodes one JSON document with numbers kept as json.Number (so
// large integer ids survive) and rejects trailing data. encoding/json is
// the parser on purpose: its reading of a body (duplicate keys, invalid
// UTF-8, escapes) is the one plasmd has always had, and measured against
// encoding/json into []map[string]any of the same bytes this costs little
// more (docs/decisions.md).
func ParseJSON(body []byte) (any, error) {
	if len(body) > MaxBodyBytes {
		return nil, errTooLarge
	}
	if err := checkDepth(body); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("response is not valid JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("response is not valid JSON: trailing data after the document")
	}
	return v, nil
}

// checkDepth scans for bracket nesting outside strings. It does not
// validate; the decoder does that afterwards. Strings are skipped with
// bytes.IndexByte (vectorised), since they are most of a typical body.
func checkDepth(b []byte) error {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			// Find the closing quote: one preceded by an even number of
			// backslashes.
			for {
				j := bytes.IndexByte(b[i+1:], '"')
				if j < 0 {
					return nil // unterminated: the decoder reports it
				}
				i += 1 + j
				k := i - 1
				for b[k] == '\\' {
					k--
				}
				if (i-1-k)%2 == 0 {
					break
				}
			}
		case '{', '[':
			if depth++; depth > maxJSONDepth {
				return errTooDeep
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// plain converts a decoded value for output: json.Number becomes int64 when
// it is an integer that fits, stays json.Number (exact digits) when it is
// an integer that does not, else becomes float64 (number.go). Containers are copied, not
// converted in place: another column may read inside the same object
// later (a "number" column must see the body's json.Number whichever
// column came first), and two cells must never share one map.
func plain(v any) any {
	switch t := v.(type) {
	case json.Number:
		return numberValue(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = plain(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

// numberValue is a number where no type is declared (an untyped column,
// or inside an object or list). An integer beyond int64 is carried
// exactly, as in an integer column, however it is written: its canonical
// digits for 1.2345678901234567891e19 or 123456789012345678901e0, which a
// float64 would round (the literal itself when much longer written out:
// canonicalInteger), and
// an int64 for 9007199254740993.0. Other numbers, 3.0 and 1e3 included,
// read as they always did: a float64 holds them exactly.
func numberValue(n json.Number) any {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	if big, ok := bigInteger(n); ok {
		return big
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err == nil && math.Abs(f) < 1<<53 {
		// Every integer below 2^53 is a float64 exactly, and one that
		// reads as below it is below it: nothing to round here.
		return f
	}
	if i, fits, integral := decimalInteger(string(n)); integral {
		if !fits {
			return canonicalInteger(n)
		}
		if i < -1<<53 || i > 1<<53 {
			return i // 9007199254740993.0: a float64 holds only 9007199254740992
		}
	}
	if err != nil {
		// Out-of-range magnitudes: keep the digits rather than lose them.
		return string(n)
	}
	return f
}

// maxExpansion is decimal.MaxExpansion, named here for the tests.
const maxExpansion = decimal.MaxExpansion

// canonicalInteger is the integer literal n (integral, beyond int64) as
// decimal.Compact keeps it: its canonical digits, so that
// 12345678901234567891.0 and 1.2345678901234567891e19 become the same
// cell as 12345678901234567891 and the request compiler writes that id,
// only while they stay near the literal's length (1e4095 would turn 6
// bytes of body into 4096 for every row, before MaxOutput is checked).
// Such a literal, and 1e999999, keeps its text; equal still compares it
// exactly, and the request compiler writes its digits or refuses past
// decimal.MaxDigits.
func canonicalInteger(n json.Number) json.Number {
	if form, integral, _ := decimal.Compact(string(n)); integral {
		return json.Number(form)
	}
	return n
}

// asInteger coerces a value of an integer domain: integral numbers (also
// written 3.0 or 1e3) become int64, integral ones beyond int64 keep their
// literal as json.Number (never a rounded float64), anything non-integral
// stays float64. Text that is exactly an integer literal within ±2^53
// ("42") is that integer: kept as text, "42" would sort before "5" and
// compare with 5 as text. Larger integer text ("12345678901234567891")
// stays text: backends write such ids as strings because a JavaScript
// number cannot hold them, and a bare JSON number in our output would be
// rounded silently by such a client. Other text ("1e3", "042", "abc") is
// kept.
func asInteger(v any) any {
	if s, ok := v.(string); ok && integerLiteral(s) {
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil || i < -1<<53 || i > 1<<53 {
			return s
		}
		return i
	}
	n, ok := v.(json.Number)
	if !ok {
		return plain(v)
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	// Decided on the literal, not on a float64: 9007199254740993.0 is
	// that integer, which a float64 would round.
	if i, fits, integral := decimalInteger(string(n)); integral {
		if fits {
			return i
		}
		return canonicalInteger(n)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return string(n)
	}
	return f
}

// asFloat coerces a value of a number domain.
func asFloat(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return plain(v)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return string(n)
	}
	return f
}

// selectItems finds the row objects in a decoded body according to the
// mapping's response shape. An empty list is an empty page, and so is an
// explicit null on the way to it or in its place (the backend said there
// is nothing; Plasm too reads a null object on the path as no rows),
// unless an error sign sits beside it (emptylist.go). A read's answer that
// lacks the key its list is declared under is an empty first page (Gmail)
// but refused beside an error sign or on a later page (later, see
// laterPage and nullOrMissing): there it is an error answered with 200, not a
// page without rows. A collection of the wrong kind is an error too (the
// catalog does not describe this backend's answer).
func selectItems(doc any, r *catalog.Response, read, later bool) ([]any, error) {
	if r == nil {
		return either(doc, "the response")
	}
	node := doc
	// Plasm wraps a bare list body under the one key it expected the list
	// at ({"results": body}), so such a list is the rows.
	_, bare := doc.([]any)
	for i, k := range r.ItemsPath {
		if bare && !r.Single && len(r.ItemsPath) == 1 && !isIndex(k) {
			break
		}
		if node == nil {
			if read && !r.Single && i > 0 {
				return nil, nullAt(doc, r.ItemsPath, i-1)
			}
			return nil, nil
		}
		if arr, ok := node.([]any); ok && isIndex(k) {
			// Plasm: a digit-only segment indexes a list (Reddit's
			// [post listing, comment listing] answer, items_path [1, data, children]).
			n, _ := strconv.Atoi(k)
			if n >= len(arr) {
				if read && !r.Single {
					return nil, noListError(fmt.Sprintf("the list is expected at %s, and this answer's list at %s has no index %s (its length: %d)", where(r.ItemsPath), where(r.ItemsPath[:i]), k, len(arr)))
				}
				return nil, nil
			}
			node = arr[n]
			continue
		}
		obj, ok := node.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("expected an object at %s, got %s", where(r.ItemsPath[:i]), kindOf(node))
		}
		if _, has := obj[k]; !has {
			if r.Default {
				return nil, fmt.Errorf("the mapping names no response, so its rows are read under %q (Plasm's default), and this answer has no %q (its keys: %s); name the list with response: {items: <key>}",
					k, k, keyList(obj))
			}
			if read && !r.Single {
				return nil, nullOrMissing(doc, obj, r.ItemsPath, i, true, later)
			}
			return nil, nil
		}
		node = obj[k]
	}
	at := where(r.ItemsPath)
	var items []any
	switch {
	case r.Single:
		switch t := node.(type) {
		case nil:
		case map[string]any:
			items = []any{t}
		default:
			return nil, fmt.Errorf("expected one object at %s, got %s", at, kindOf(node))
		}
	case r.Items || len(r.ItemsPath) > 0:
		switch t := node.(type) {
		case nil:
			if read && len(r.ItemsPath) > 0 {
				if err := nullAt(doc, r.ItemsPath, len(r.ItemsPath)-1); err != nil {
					return nil, err
				}
			}
		case []any:
			if len(t) == 0 && read && len(r.ItemsPath) > 0 {
				if err := emptyAt(doc, r.ItemsPath); err != nil {
					return nil, err
				}
			}
			items = t
		default:
			return nil, fmt.Errorf("expected an array at %s, got %s", at, kindOf(node))
		}
	default:
		var err error
		if items, err = either(node, at); err != nil {
			return nil, err
		}
	}
	if r.ItemInnerKey == "" {
		return items, nil
	}
	inner := make([]any, 0, len(items))
	for i, it := range items {
		switch t := it.(type) {
		case nil:
		case map[string]any:
			inner = append(inner, t[r.ItemInnerKey])
		default:
			return nil, fmt.Errorf("item %d at %s is %s, expected an object holding %q", i, at, kindOf(it), r.ItemInnerKey)
		}
	}
	return inner, nil
}

// either treats an array as a list of rows and an object as one row.
func either(node any, at string) ([]any, error) {
	switch t := node.(type) {
	case nil:
		return nil, nil
	case []any:
		return t, nil
	case map[string]any:
		return []any{t}, nil
	}
	return nil, fmt.Errorf("expected an object or an array at %s, got %s", at, kindOf(node))
}

// walk follows object keys; ok is false when a step is missing or lands on
// something that is not an object.
// isIndex reports a path segment that indexes a list: digits only, short
// enough to be an int.
func isIndex(k string) bool {
	if k == "" || len(k) > 9 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return false
		}
	}
	return true
}

// walkIndexed is walk that also indexes lists by digit-only segments, for
// the paths Plasm reads that way: items_path and response_prefix.
func walkIndexed(v any, path []string) (any, bool) {
	for _, k := range path {
		if arr, ok := v.([]any); ok && isIndex(k) {
			n, _ := strconv.Atoi(k)
			if n >= len(arr) {
				return nil, false
			}
			v = arr[n]
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func walk(v any, path []string) (any, bool) {
	for _, k := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func where(path []string) string {
	if len(path) == 0 {
		return "the top level"
	}
	return strings.Join(path, ".")
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, int64, float64:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}

// keyList names an object's keys, sorted and at most 8 of them.
func keyList(obj map[string]any) string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > 8 {
		keys = append(keys[:8], "…")
	}
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}

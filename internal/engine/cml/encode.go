package cml

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// appendJSON encodes v as JSON. Object expressions keep their key order;
// maps encode with sorted keys, so the same inputs always give the same
// bytes (the host may hash or cache request bodies).
func appendJSON(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return b, errTooDeep
	}
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendJSONString(b, t), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	case object:
		b = append(b, '{')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, e.key)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, e.val, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case map[string]any:
		o, _ := asObject(t)
		return appendJSON(b, o, depth)
	}
	if l, ok := asList(v); ok {
		b = append(b, '[')
		for i, e := range l {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	}
	n, ok, err := asNumber(v)
	if !ok {
		return b, fmt.Errorf("cannot encode a value of type %T", v)
	}
	if err != nil {
		return b, err
	}
	if n.big != "" {
		return append(b, n.big...), nil // an integer beyond int64, exactly
	}
	if n.isInt {
		return strconv.AppendInt(b, n.i, 10), nil
	}
	// Exponent form only at the extremes, where the plain form would be
	// dozens of digits; JSON accepts both.
	if a := math.Abs(n.f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.AppendFloat(b, n.f, 'g', -1, 64), nil
	}
	return strconv.AppendFloat(b, n.f, 'f', -1, 64), nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as a JSON string. Invalid UTF-8 becomes U+FFFD
// and U+2028/U+2029 are escaped so the body is safe to embed anywhere.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028':
			b = append(b, `\u2028`...)
		case r == '\u2029':
			b = append(b, `\u2029`...)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// pair is one flattened key/value of a query, form, multipart body or
// header set.
type pair struct{ key, val string }

// flatten turns an object value into ordered key/value text pairs: scalars
// give one pair, arrays one pair per non-null element, null keys nothing.
// Nested objects (and arrays inside arrays) have no canonical flat form and
// are rejected rather than guessed at.
func flatten(v any, what string) ([]pair, error) {
	if v == nil {
		return nil, nil
	}
	o, ok := asObject(v)
	if !ok {
		return nil, fmt.Errorf("%s must evaluate to an object, got %s", what, kindOf(v))
	}
	var out []pair
	for _, e := range o {
		ps, err := flattenValue(e.key, e.val, what)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

func flattenValue(key string, v any, what string) ([]pair, error) {
	if v == nil {
		return nil, nil
	}
	if l, ok := asList(v); ok {
		out := make([]pair, 0, len(l))
		for i, it := range l {
			if it == nil {
				continue
			}
			s, scalar, err := scalarText(it)
			if err != nil {
				return nil, fmt.Errorf("%s key %q item %d: %w", what, key, i, err)
			}
			if !scalar {
				return nil, fmt.Errorf("%s key %q item %d is %s; only scalars can be encoded", what, key, i, kindOf(it))
			}
			out = append(out, pair{key, s})
		}
		return out, nil
	}
	s, scalar, err := scalarText(v)
	if err != nil {
		return nil, fmt.Errorf("%s key %q: %w", what, key, err)
	}
	if !scalar {
		return nil, fmt.Errorf("%s key %q holds %s; only scalars and arrays of scalars can be encoded", what, key, kindOf(v))
	}
	return []pair{{key, s}}, nil
}

// encodeForm encodes pairs with url.Values semantics: keys sorted, repeated
// keys keeping their relative order.
func encodeForm(ps []pair) string {
	sorted := make([]pair, len(ps))
	copy(sorted, ps)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].key < sorted[j].key })
	var b strings.Builder
	for i, p := range sorted {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(p.key))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(p.val))
	}
	return b.String()
}

var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// encodeMultipart renders pairs as multipart/form-data. The boundary is
// derived from a hash of the content so identical requests are identical
// bytes; it is re-derived in the (astronomically unlikely) case a value
// contains it.
func encodeMultipart(ps []pair) (body, contentType string, err error) {
	for _, p := range ps {
		if strings.ContainsAny(p.key, "\r\n") {
			return "", "", fmt.Errorf("multipart field name %q contains a line break", p.key)
		}
	}
	h := sha256.New()
	for _, p := range ps {
		h.Write([]byte(p.key))
		h.Write([]byte{0})
		h.Write([]byte(p.val))
		h.Write([]byte{0})
	}
	sum := h.Sum(nil)
	var boundary string
	for attempt := 0; ; attempt++ {
		boundary = "plasmd-" + hex.EncodeToString(sum[:16])
		clash := false
		for _, p := range ps {
			if strings.Contains(p.val, boundary) || strings.Contains(p.key, boundary) {
				clash = true
				break
			}
		}
		if !clash {
			break
		}
		next := sha256.Sum256(append(sum, byte(attempt)))
		sum = next[:]
	}
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("--")
		b.WriteString(boundary)
		b.WriteString("\r\nContent-Disposition: form-data; name=\"")
		b.WriteString(quoteEscaper.Replace(p.key))
		b.WriteString("\"\r\n\r\n")
		b.WriteString(p.val)
		b.WriteString("\r\n")
	}
	b.WriteString("--")
	b.WriteString(boundary)
	b.WriteString("--\r\n")
	return b.String(), "multipart/form-data; boundary=" + boundary, nil
}

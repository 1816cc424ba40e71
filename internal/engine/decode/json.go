package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Limits on response bodies. The depth cap is checked before decoding, which
// is what makes every later recursive walk over the document safe.
const (
	maxBodyBytes = 32 << 20
	maxJSONDepth = 128
)

var (
	errTooLarge = fmt.Errorf("response body exceeds %d bytes", maxBodyBytes)
	errTooDeep  = fmt.Errorf("response JSON nests deeper than %d levels", maxJSONDepth)
)

// parseJSON decodes one JSON document with numbers kept as json.Number (so
// large integer ids survive) and rejects trailing data.
func parseJSON(body []byte) (any, error) {
	if len(body) > maxBodyBytes {
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
// validate; the decoder does that afterwards.
func checkDepth(b []byte) error {
	depth := 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
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
// it is an integer that fits, else float64; containers are converted in
// place (the document is ours).
func plain(v any) any {
	switch t := v.(type) {
	case json.Number:
		return numberValue(t)
	case map[string]any:
		for k, e := range t {
			t[k] = plain(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = plain(e)
		}
		return t
	}
	return v
}

func numberValue(n json.Number) any {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		// Out-of-range magnitudes: keep the digits rather than lose them.
		return string(n)
	}
	return f
}

// asInteger coerces a value of an integer domain: integral numbers (also
// written 3.0 or 1e3) become int64, anything non-integral stays float64.
func asInteger(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return plain(v)
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return string(n)
	}
	if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return int64(f)
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

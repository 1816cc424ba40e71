package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/plasmd/plasmd/internal/text"
	"github.com/plasmd/plasmd/server/internal/problem"
)

// decodeJSONBody decodes exactly one JSON value of the shape v into v and
// answers what is wrong in the client's terms. encoding/json's own
// messages name Go types ("cannot unmarshal array into Go value of type
// struct { EntryID string "json:\"entry_id\"" … }"), which tells a client
// nothing and shows the server's internals; and Decode alone stops after
// the first value, so `{…}{…}` or `{…} trailing` was accepted with the
// rest ignored. Unknown fields are refused: a field the route does not
// read (say "mode": "plan" beside a program) must not be silently dropped.
//
// The body must be UTF-8 (RFC 8259): encoding/json replaces each invalid
// byte by U+FFFD, so a program in {"program": …} went to the backend with
// text the client never wrote. A key may appear once per object (see
// duplicateKey): the decoder would keep the last silently.
func decodeJSONBody(body []byte, v any) error {
	if off, line, col, bad := text.InvalidUTF8(string(body)); bad {
		p := problem.BadRequest("malformed-json", "the JSON body is not UTF-8 at byte %d (line %d, column %d): %s", off, line, col, text.InvalidUTF8Message(string(body), off))
		p.Hint = "send JSON encoded as UTF-8; invalid bytes are refused, not replaced"
		return p
	}
	if p := loneSurrogateProblem("JSON body", body); p != nil {
		return p
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return problem.BadRequest("malformed-json", "%s", describeJSONError(err, v))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return problem.BadRequest("malformed-json", "the body holds more than one JSON value; send a single object")
	}
	if key, dup := duplicateKey(body); dup {
		p := problem.BadRequest("malformed-json", "the JSON body repeats the key %q; each field may appear once", key)
		p.Hint = "send each field once (a repeated key is ambiguous: some readers take the first, others the last)"
		return p
	}
	if key, bad := inexactField(body, v); bad {
		p := problem.BadRequest("malformed-json", "the JSON body's key %q is not a field of this route as written: field names are case-sensitive", key)
		p.Hint = "spell each field exactly as documented (entry_id, not ENTRY_ID)"
		return p
	}
	return nil
}

// describeJSONError turns a decoding error into a sentence about the body.
func describeJSONError(err error, v any) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return "the body is empty; send a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON body ends early (truncated?)"
	case errors.As(err, &syn):
		return fmt.Sprintf("the body is not valid JSON at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Sprintf("the body must be a JSON object, not %s", jsonArticle(typ.Value))
		}
		return fmt.Sprintf("field %q must be %s, not %s", typ.Field, jsonWant(typ.Type), jsonArticle(typ.Value))
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, `json: unknown field `); ok {
		return fmt.Sprintf("unknown field %s; this route reads %s", name, jsonFields(v))
	}
	return "the body is not valid JSON: " + strings.TrimPrefix(msg, "json: ")
}

// jsonArticle names a JSON value kind as encoding/json reports it
// ("array", "number", "string", "bool", "object"), or the value itself
// when it reports one ("number 1.5": a number that did not fit).
func jsonArticle(kind string) string {
	word, value, _ := strings.Cut(kind, " ")
	if value != "" {
		return value
	}
	switch word {
	case "array", "object":
		return "an " + word
	case "bool":
		return "true/false"
	case "":
		return "this value"
	}
	return "a " + word
}

// jsonWant describes the Go type a field decodes into as JSON.
func jsonWant(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(jsonWant(t.Elem()), "a "), "an ") + "s"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another kind of value"
}

// jsonFields lists the JSON field names of the struct v points at.
func jsonFields(v any) string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return "other fields"
	}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// loneSurrogateProblem refuses JSON text escaping half a UTF-16 surrogate
// pair (\ud800 alone): valid UTF-8, but every JSON decoder turns it into
// U+FFFD, so a program would run with text the client never wrote.
func loneSurrogateProblem(what string, body []byte) *problem.Problem {
	off, lone := text.LoneSurrogate(string(body))
	if !lone {
		return nil
	}
	p := problem.BadRequest("malformed-json", "the %s escapes half a UTF-16 surrogate pair at byte %d (%s) without its other half", what, off, body[off:off+6])
	p.Hint = "escape a character outside the Basic Multilingual Plane as a high and a low surrogate together, or send it as UTF-8"
	return p
}

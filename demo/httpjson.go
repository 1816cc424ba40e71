package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxBodyBytes caps every request body the demo reads.
const maxBodyBytes = 1 << 20

// apiError is a failed request as the demo APIs report it: an HTTP status
// and the JSON body {"error": Message, "field": Field}. Handlers return it
// instead of error so that the status travels with the message.
type apiError struct {
	Status  int
	Message string
	Field   string // the offending input field, when there is one
}

func (e *apiError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%d %s: %s", e.Status, e.Field, e.Message)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Message)
}

func errorf(status int, format string, args ...any) *apiError {
	return &apiError{Status: status, Message: fmt.Sprintf(format, args...)}
}

func fieldError(field, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Field: field, Message: fmt.Sprintf(format, args...)}
}

type errorJSON struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every value written here is built from plain structs; failing to
		// encode one is a programming error, reported as a server error.
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":"internal error encoding the response"}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func writeError(w http.ResponseWriter, err *apiError) {
	writeJSON(w, err.Status, errorJSON{Error: err.Message, Field: err.Field})
}

func methodNotAllowed(w http.ResponseWriter, allow ...string) {
	w.Header().Set("Allow", strings.Join(allow, ", "))
	writeError(w, errorf(http.StatusMethodNotAllowed, "method not allowed; use %s", strings.Join(allow, " or ")))
}

// bodyFields is a decoded JSON object body. Values stay raw so that a field
// that is absent, null, or of the wrong type can each be told apart.
type bodyFields map[string]json.RawMessage

// readBody reads the request body, at most maxBodyBytes of it.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, errorf(http.StatusRequestEntityTooLarge, "request body exceeds %d bytes", maxBodyBytes)
		}
		return nil, errorf(http.StatusBadRequest, "reading request body: %v", err)
	}
	return data, nil
}

// readObject decodes the request body as one JSON object.
func readObject(w http.ResponseWriter, r *http.Request) (bodyFields, *apiError) {
	data, err := readBody(w, r)
	if err != nil {
		return nil, err
	}
	return decodeObject(data)
}

// decodeObject parses data as exactly one JSON object.
func decodeObject(data []byte) (bodyFields, *apiError) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errorf(http.StatusBadRequest, "request body is empty; send a JSON object")
	}
	if trimmed[0] != '{' {
		return nil, errorf(http.StatusBadRequest, "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var m bodyFields
	if err := dec.Decode(&m); err != nil {
		return nil, errorf(http.StatusBadRequest, "invalid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errorf(http.StatusBadRequest, "invalid JSON: trailing data after the object")
	}
	if m == nil {
		m = bodyFields{}
	}
	return m, nil
}

// onlyKeys rejects fields the endpoint does not understand, so that a typo
// ("assigne_id") fails loudly instead of being ignored.
func (b bodyFields) onlyKeys(allowed ...string) *apiError {
	for k := range b {
		ok := false
		for _, a := range allowed {
			if k == a {
				ok = true
				break
			}
		}
		if !ok {
			return fieldError(k, "unknown field; accepted fields are %s", strings.Join(allowed, ", "))
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// str reads a string field. set reports presence; v is nil for an explicit null.
func (b bodyFields) str(key string) (v *string, set bool, err *apiError) {
	raw, ok := b[key]
	if !ok {
		return nil, false, nil
	}
	if isNull(raw) {
		return nil, true, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, true, fieldError(key, "must be a string")
	}
	return &s, true, nil
}

// integer reads an integer field; a numeric string is accepted too, because
// agents often quote numbers.
func (b bodyFields) integer(key string) (v *int, set bool, err *apiError) {
	raw, ok := b[key]
	if !ok {
		return nil, false, nil
	}
	if isNull(raw) {
		return nil, true, nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, true, fieldError(key, "must be an integer")
		}
		n = json.Number(strings.TrimSpace(s))
	}
	i, perr := strconv.Atoi(n.String())
	if perr != nil {
		return nil, true, fieldError(key, "must be an integer")
	}
	return &i, true, nil
}

// strList reads an array of strings; a single string counts as a one-element list.
func (b bodyFields) strList(key string) (v []string, set bool, err *apiError) {
	raw, ok := b[key]
	if !ok {
		return nil, false, nil
	}
	if isNull(raw) {
		return []string{}, true, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		return nil, true, fieldError(key, "must be an array of strings")
	}
	return list, true, nil
}

// checkText enforces a size cap and valid UTF-8 on client text.
func checkText(field, s string, maxLen int) *apiError {
	if !utf8.ValidString(s) {
		return fieldError(field, "must be valid UTF-8")
	}
	if utf8.RuneCountInString(s) > maxLen {
		return fieldError(field, "must be at most %d characters", maxLen)
	}
	return nil
}

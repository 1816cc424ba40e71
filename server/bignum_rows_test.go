package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const bigRowsDomain = `version: 1
http_backend: http://bigrows.invalid
values:
  text: {type: string}
  count: {type: integer}
  blob: {type: json}
entities:
  Thing:
    id_field: id
    fields:
      id: {value_ref: text}
      n: {value_ref: count}
      raw: {value_ref: blob}
capabilities:
  thing_query: {kind: query, entity: Thing}
`

const bigRowsMappings = `thing_query:
  method: GET
  path: [{type: literal, value: things}]
  response: {items: data}
`

// TestBigIntegerRows: integers beyond int64 however the backend writes
// them (digits, a fraction, an exponent) stay exact end to end: in an
// integer column (1.2345678901234567892e19 is that integer, so it sorts
// as one) and in an untyped one (1.2345678901234567891e19), through the
// sort and into a row template, whose gt compares them as numbers. Text
// the backend wrote for an integer beyond 2^53 ("12345678901234567893")
// stays text, as it came: a JavaScript client would round the number.
func TestBigIntegerRows(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[`+
			`{"id":"a","n":12345678901234567891,"raw":1.2345678901234567891e19},`+
			`{"id":"b","n":1.2345678901234567892e19,"raw":9},`+
			`{"id":"c","n":9999999999999999999.0,"raw":123456789012345678901e0},`+
			`{"id":"d","n":"12345678901234567893","raw":1}]}`)
	}))
	defer backend.Close()
	f := catalogFixture(t, "bigrows", map[string]string{"domain.yaml": bigRowsDomain, "mappings.yaml": bigRowsMappings}, backend.URL)
	path := f.open(t, "bigrows", "Thing")

	r := f.do(t, "POST", path, "text/plain", `Thing.sort(n, desc)[id,n,raw]`, "Accept", "application/json")
	if r.status != http.StatusOK {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
	b, a, c := strings.Index(r.body, `{"id":"b","n":12345678901234567892,"raw":9}`),
		strings.Index(r.body, `{"id":"a","n":12345678901234567891,"raw":12345678901234567891}`),
		strings.Index(r.body, `{"id":"c","n":9999999999999999999,"raw":123456789012345678901}`)
	if a < 0 || b < 0 || c < 0 || !(b < a && a < c) {
		t.Errorf("rows not exact or not sorted by n descending (b, a, c):\n%s", r.body)
	}
	if !strings.Contains(r.body, `{"id":"d","n":"12345678901234567893","raw":1}`) {
		t.Errorf("integer text beyond 2^53 not kept as text:\n%s", r.body)
	}

	program := "t = Thing[id,n,raw] <<T\n" +
		`{{range .rows}}{{.id}}:{{.n}}:{{if gt .n "12345678901234567891"}}gt{{else}}le{{end}}:{{if gt .raw .n}}rawgt{{else}}rawle{{end}};{{end}}` +
		"\nT\nt"
	r = f.do(t, "POST", path, "text/plain", program, "Accept", "application/json")
	want := `a:12345678901234567891:le:rawle;b:12345678901234567892:gt:rawle;c:9999999999999999999:le:rawgt;d:12345678901234567893:gt:rawle;`
	if r.status != http.StatusOK || !strings.Contains(r.body, want) {
		t.Errorf("row template: %d\n%s\nwant it to contain %s", r.status, r.body, want)
	}
}

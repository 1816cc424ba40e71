package demo

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// fakeClock advances one second per reading, so that written rows get
// distinct, reproducible timestamps.
func fakeClock() func() time.Time {
	var n atomic.Int64
	base := time.Date(2025, time.June, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Second) }
}

func newTestBackend(t testing.TB) *Backend {
	t.Helper()
	return NewBackend(Options{Now: fakeClock()})
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// call sends one request straight to the handler. body may be nil, a string
// (sent verbatim) or any value (sent as JSON).
func call(t testing.TB, h http.Handler, method, path string, body any, token string) resp {
	t.Helper()
	var rd *bytes.Reader
	switch b := body.(type) {
	case nil:
		rd = bytes.NewReader(nil)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return resp{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// api calls the tracker with the default token.
func api(t testing.TB, h http.Handler, method, path string, body any) resp {
	t.Helper()
	return call(t, h, method, TrackerPrefix+path, body, DefaultTrackerToken)
}

func mustStatus(t testing.TB, r resp, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status = %d, want %d; body: %s", r.status, want, r.body)
	}
}

type issueList struct {
	Items   []issueJSON `json:"items"`
	Total   int         `json:"total"`
	Offset  int         `json:"offset"`
	Limit   int         `json:"limit"`
	HasMore bool        `json:"has_more"`
}

func listIssues(t testing.TB, h http.Handler, query string) issueList {
	t.Helper()
	r := api(t, h, "GET", "/issues"+query, nil)
	mustStatus(t, r, http.StatusOK)
	var l issueList
	r.decode(t, &l)
	return l
}

// allIssues walks every page of an issue list.
func allIssues(t testing.TB, h http.Handler, path, filter string) []issueJSON {
	t.Helper()
	var out []issueJSON
	for offset := 0; ; offset += MaxPageLimit {
		r := api(t, h, "GET", path+"?limit=100&offset="+itoa(offset)+filter, nil)
		mustStatus(t, r, http.StatusOK)
		var l issueList
		r.decode(t, &l)
		out = append(out, l.Items...)
		if !l.HasMore {
			return out
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file; run `go test ./demo -run %s -update` if the change is intended\n got: %.600s", name, t.Name(), got)
	}
}

package decode

import (
	"net/url"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/cml"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// resolveCatalog is testCatalog with a backend whose path differs from the
// request's, so resolving against the wrong base shows.
func resolveCatalog() *catalog.Catalog {
	cat := testCatalog()
	cat.HTTPBackend = "https://api.example.com/v1"
	return cat
}

const resolveRequestURL = "https://api.example.com/v1/items?page=1"

// TestNextURLResolvesAgainstRequest checks RFC 3986 §5 resolution of next
// references against the request URL, for both link_header and
// response_next_url pagination, and that the compiler then follows the
// result or refuses it when it leaves the catalog's origin.
func TestNextURLResolvesAgainstRequest(t *testing.T) {
	cases := []struct {
		name       string
		requestURL string // resolveRequestURL unless "-" (none sent)
		ref        string
		want       string // "" means pagination stops
		refused    bool   // cml refuses the continuation
	}{
		{name: "absolute", ref: "https://api.example.com/v1/items?page=2", want: "https://api.example.com/v1/items?page=2"},
		{name: "absolute_path", ref: "/v1/items?page=2", want: "https://api.example.com/v1/items?page=2"},
		{name: "relative_path", ref: "items?page=2", want: "https://api.example.com/v1/items?page=2"},
		{name: "relative_sibling", ref: "archived?page=2", want: "https://api.example.com/v1/archived?page=2"},
		{name: "dot_segments", ref: "../v2/items?page=2", want: "https://api.example.com/v2/items?page=2"},
		{name: "query_only", ref: "?page=2", want: "https://api.example.com/v1/items?page=2"},
		{name: "fragment_dropped", ref: "items?page=2#results", want: "https://api.example.com/v1/items?page=2"},
		{name: "fragment_only_is_this_page", ref: "#results"},
		{name: "same_page_stops", ref: "https://api.example.com/v1/items?page=1"},
		{name: "request_fragment_ignored", requestURL: resolveRequestURL + "#x", ref: "?page=1"},
		{name: "no_request_url_falls_back_to_backend", requestURL: "-", ref: "?page=2", want: "https://api.example.com/v1?page=2"},
		{name: "bad_request_url_falls_back_to_backend", requestURL: "items?page=1", ref: "?page=2", want: "https://api.example.com/v1?page=2"},
		{name: "other_origin", ref: "https://evil.example.net/v1/items?page=2", want: "https://evil.example.net/v1/items?page=2", refused: true},
		{name: "network_path_other_origin", ref: "//evil.example.net/items?page=2", want: "https://evil.example.net/items?page=2", refused: true},
		{name: "scheme_downgrade", ref: "http://api.example.com/v1/items?page=2", want: "http://api.example.com/v1/items?page=2", refused: true},
		{name: "user_info", ref: "https://u:p@api.example.com/v1/items?page=2", want: "https://u:p@api.example.com/v1/items?page=2", refused: true},
	}
	cat := resolveCatalog()
	for _, tc := range cases {
		reqURL := tc.requestURL
		switch reqURL {
		case "":
			reqURL = resolveRequestURL
		case "-":
			reqURL = ""
		}
		for _, via := range []struct {
			kind, cap, body string
			headers         map[string]string
		}{
			{kind: "link_header", cap: "issue_links", body: `[{"id":"i1"}]`,
				headers: map[string]string{"Link": "<" + tc.ref + `>; rel="next"`}},
			{kind: "response_next_url", cap: "issue_nexturl", body: `{"next":` + quote(tc.ref) + `,"results":[{"id":"i1"}]}`},
		} {
			t.Run(tc.name+"/"+via.kind, func(t *testing.T) {
				req := &abi.DecodeRequest{EntryID: cat.EntryID, Capability: via.cap, Status: 200,
					Headers: via.headers, RequestURL: reqURL}
				got, aerr := Decode(cat, req, []byte(via.body))
				if aerr != nil {
					t.Fatalf("decode: %+v", aerr)
				}
				next, _ := got.Next[cml.NextURLKey].(string)
				if next != tc.want {
					t.Fatalf("next_url = %q, want %q (next = %#v)", next, tc.want, got.Next)
				}
				if tc.want == "" {
					if got.Next != nil {
						t.Fatalf("next = %#v, want nil (pagination stops)", got.Next)
					}
					return
				}
				creq, cerr := cml.Compile(cat, &abi.CompileRequest{EntryID: cat.EntryID, Capability: via.cap, Page: got.Next})
				if tc.refused {
					if cerr == nil {
						t.Fatalf("compile followed %q to %s; want it refused as off-origin", next, creq.URL)
					}
					if !strings.Contains(cerr.Message, "origin") {
						t.Fatalf("compile error %q does not name the origin", cerr.Message)
					}
					return
				}
				if cerr != nil {
					t.Fatalf("compile: %+v", cerr)
				}
				if creq.URL != tc.want {
					t.Fatalf("continuation URL = %q, want %q", creq.URL, tc.want)
				}
			})
		}
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func FuzzResolve(f *testing.F) {
	for _, s := range [][2]string{
		{resolveRequestURL, "?page=2"},
		{resolveRequestURL, "items?page=2#x"},
		{resolveRequestURL, "../../../../a"},
		{"", "//evil.example.net/"},
		{"%zz", "?q=%zz"},
		{"https://api.example.com/a/b/c", "#"},
		{"mailto:x@y", "z"},
		{resolveRequestURL, "https://[::1]:99999/x"},
	} {
		f.Add(s[0], s[1])
	}
	cat := resolveCatalog()
	f.Fuzz(func(t *testing.T, requestURL, ref string) {
		req := &abi.DecodeRequest{EntryID: cat.EntryID, Capability: "issue_links", Status: 200,
			Headers: map[string]string{"Link": "<" + ref + ">; rel=next"}, RequestURL: requestURL}
		got, aerr := Decode(cat, req, []byte(`[{"id":"i1"}]`))
		if aerr != nil {
			t.Fatalf("decode: %+v", aerr)
		}
		next, _ := got.Next[cml.NextURLKey].(string)
		if next == "" {
			return
		}
		// Whatever the guest hands on, a URL it could read must not carry a
		// fragment, and the compiler must answer (follow or refuse), not panic.
		if u, err := url.Parse(next); err == nil && u.Fragment != "" {
			t.Fatalf("next_url %q keeps fragment %q", next, u.Fragment)
		}
		_, _ = cml.Compile(cat, &abi.CompileRequest{EntryID: cat.EntryID, Capability: "issue_links", Page: got.Next})
	})
}

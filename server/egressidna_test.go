package server_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/server"
)

// TestNonASCIILiteralOrigin: the search origin is the loopback fake's
// address written with full-width digits in a mapping's path, which
// net/http dials as 127.0.0.1. It used to pass as a DNS name: the catalog
// loaded without a warning, server.New started with no allowed range, and
// the call was served from loopback. Now the loader refuses it at the
// literal's line, and server.New refuses an embedder's catalog that
// carries it past the loader.
func TestNonASCIILiteralOrigin(t *testing.T) {
	search := newOrigin(t, func(_ *origin, w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"hits":[{"id":1,"title":"about %s"}]}`, r.URL.Query().Get("query"))
	})
	api := newOrigin(t, func(_ *origin, w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"url":"%s/chain/3/","id":3}`, "http://"+r.Host)
	})
	host, port, _ := strings.Cut(strings.TrimPrefix(search.URL, "http://"), ":")
	wide := "http://" + strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r - '0' + '０'
		}
		return r
	}, host) + ":" + port
	load := func(searchOrigin string) error {
		_, err := writeCatalog(t, "literals", map[string]string{
			"domain.yaml":   fmt.Sprintf(absDomain, api.URL, searchOrigin),
			"mappings.yaml": fmt.Sprintf(absMappings, api.URL, searchOrigin),
		})
		return err
	}
	if err := load(wide); err == nil || !strings.Contains(err.Error(), "mappings.yaml:") || !strings.Contains(err.Error(), "written in non-ASCII characters") {
		t.Fatalf("load: %v, want a refusal at the literal's line", err)
	}

	// An embedder's catalog that did not come through the loader.
	l, err := writeCatalog(t, "literals", map[string]string{
		"domain.yaml":   fmt.Sprintf(absDomain, api.URL, "https://search.example.test"),
		"mappings.yaml": fmt.Sprintf(absMappings, api.URL, "https://search.example.test"),
	})
	if err != nil {
		t.Fatal(err)
	}
	seg := &l.Catalog.Mappings["hit_search"].Path[0]
	seg.Value = strings.Replace(seg.Value, "https://search.example.test", wide, 1)
	f, err := serveCatalogs(t, server.Config{}, l.Catalog)
	if !errors.Is(err, egress.ErrUndialable) || !strings.Contains(err.Error(), "mapping hit_search's path") {
		if err == nil {
			r := f.do(t, "POST", f.open(t, "literals", "Chain", "Hit"), "text/plain", `Hit~"go"[id,title]`, "Accept", "application/json")
			t.Fatalf("server.New started; the call answered %d %s", r.status, r.body)
		}
		t.Fatalf("server.New: %v, want ErrUndialable naming the mapping", err)
	}
}

package server

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// TestCheckDeclaredOriginsTokenSlot: auth.token_url's private literal is
// trusted for the token fetch only, so server.New accepts it as the token
// endpoint but refuses a mapping path on its origin (which egress would
// refuse on every call) unless an allowed range covers it.
func TestCheckDeclaredOriginsTokenSlot(t *testing.T) {
	cat := func(paths ...string) *catalog.Catalog {
		c := &catalog.Catalog{EntryID: "tok", HTTPBackend: "http://127.0.0.1:8080/api", Mappings: map[string]*catalog.Mapping{}}
		c.Auth.TokenURL = "http://10.0.0.7/token"
		for i, p := range paths {
			c.Mappings[string(rune('a'+i))] = &catalog.Mapping{Path: []catalog.Segment{{Type: "literal", Value: p}}}
		}
		return c
	}
	if err := checkDeclaredOrigins([]*catalog.Catalog{cat("http://127.0.0.1:8080/other")}, nil); err != nil {
		t.Fatalf("token endpoint and http_backend literals: %v", err)
	}
	err := checkDeclaredOrigins([]*catalog.Catalog{cat("http://10.0.0.7/admin")}, nil)
	if !errors.Is(err, egress.ErrUndialable) || !strings.Contains(err.Error(), "mapping a's path") {
		t.Fatalf("a mapping path on the token endpoint's private origin: %v, want ErrUndialable naming the mapping", err)
	}
	if err := checkDeclaredOrigins([]*catalog.Catalog{cat("http://10.0.0.7/admin")}, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}); err != nil {
		t.Fatalf("inside an allowed range: %v", err)
	}
}

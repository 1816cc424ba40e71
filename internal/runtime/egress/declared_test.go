package egress

import (
	"testing"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// The guest's compiler checks URL values with catalog.Origin and the host
// sends with ParseOrigin: the two must name the same origin, or a URL the
// compiler let through would be refused here (or the reverse).
func TestOriginAgreesWithCatalog(t *testing.T) {
	for _, raw := range []string{
		"https://pokeapi.co/api/v2/evolution-chain/5/",
		"HTTPS://PokeAPI.co:443/x",
		"http://127.0.0.1:8080/a?b=c#d",
		"http://[::1]:9/x",
		"https://[2001:db8::1]/",
		"http://example.com",
		"https://BÜCHER.example/x", // IDNA: xn--bcher-kva.example
		"http://bücher.example:8080/",
	} {
		o, err := ParseOrigin(raw)
		if err != nil {
			t.Fatalf("ParseOrigin(%q): %v", raw, err)
		}
		c, ok := catalog.Origin(raw)
		if !ok || c != o.String() {
			t.Errorf("%q: catalog.Origin = %q, %v; egress = %q", raw, c, ok, o)
		}
	}
}

package authz_test

import (
	"context"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plasmd/plasmd/server/internal/authz"
	"github.com/plasmd/plasmd/server/internal/authz/authztest"
)

// BenchmarkVerify measures a full access-token check with a warm JWKS
// cache (issuer lookup, kid lookup, RS256 signature, claims, audience,
// rule) against the baseline of the bare library call: jwt.Parse with the
// key in hand.
func BenchmarkVerify(b *testing.B) {
	as := authztest.New(b)
	cfg := authz.Config{Resource: resource, AuthorizationServers: []authz.Issuer{{Issuer: as.Issuer(), JWKSURI: as.URL + "/jwks"}},
		Rules: []authz.Rule{{Claim: "groups", Equals: "staff", Tenant: "acme"}}}
	v := authz.NewVerifier(cfg, authz.Options{Client: as.Client()})
	tok := as.Mint(b, authztest.Token{Subject: "alice", Audience: []string{resource}, Extra: map[string]any{"groups": []any{"staff"}}})
	ctx := context.Background()
	if _, err := v.Verify(ctx, tok); err != nil {
		b.Fatal(err)
	}
	b.Run("direct-jwt-parse", func(b *testing.B) {
		key := as.PublicKey()
		for b.Loop() {
			if _, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return key, nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("verifier", func(b *testing.B) {
		for b.Loop() {
			if _, err := v.Verify(ctx, tok); err != nil {
				b.Fatal(err)
			}
		}
	})
}

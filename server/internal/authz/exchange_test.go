package authz_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/plasmd/plasmd/server/internal/authz"
	"github.com/plasmd/plasmd/server/internal/authz/authztest"
	"github.com/plasmd/plasmd/server/internal/oauthconfig"
)

func TestExchanger(t *testing.T) {
	as := authztest.New(t)
	as.ExchangeClientID, as.ExchangeClientSecret = "c", "s"
	as.Exchange = func(sub string) string { return "up-" + sub }
	clk := &clock{t: time.Now()}
	ex := authz.NewExchanger(as.Client(), clk.Now)
	x := oauthconfig.Exchange{TokenEndpoint: as.URL + "/token", ClientIDEnv: "ID", Audience: "api", Resource: "https://api.example.test"}
	ctx := context.Background()
	alice := as.Mint(t, authztest.Token{Subject: "alice", Audience: []string{resource}})
	bob := as.Mint(t, authztest.Token{Subject: "bob", Audience: []string{resource}})
	for _, tc := range []struct {
		subject, want string
		calls         int
	}{{alice, "up-alice", 1}, {alice, "up-alice", 1}, {bob, "up-bob", 2}} {
		got, err := ex.Exchange(ctx, tc.subject, x, "c", "s")
		if err != nil || got != tc.want || ex.Calls() != tc.calls {
			t.Fatalf("got %q %v, calls %d (want %q, %d)", got, err, ex.Calls(), tc.want, tc.calls)
		}
	}
	// Near expiry (the test server issues 1h tokens) the token is renewed.
	clk.Advance(59*time.Minute + time.Second)
	if _, err := ex.Exchange(ctx, alice, x, "c", "s"); err != nil || ex.Calls() != 3 {
		t.Fatalf("renewal: %v, calls %d", err, ex.Calls())
	}
	for name, call := range map[string]func() error{
		"wrong client secret": func() error { _, err := ex.Exchange(ctx, bob+"x", x, "c", "wrong"); return err },
		"no subject":          func() error { _, err := ex.Exchange(ctx, "", x, "c", "s"); return err },
		"no client":           func() error { _, err := ex.Exchange(ctx, alice, x, "", "s"); return err },
	} {
		if err := call(); !errors.Is(err, authz.ErrExchange) {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

package egress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
)

// oauthFixture is a token endpoint and an API that accepts only the token
// it issued last.
type oauthFixture struct {
	fetches     atomic.Int32
	current     atomic.Value // string: the token the API accepts
	tokenStatus int
}

func (f *oauthFixture) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	_ = r.ParseForm()
	if !ok || id != "client-1" || secret != "s3cret-value" || r.Form.Get("grant_type") != "client_credentials" || r.Form.Get("scope") != "read write" {
		http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
		return
	}
	if f.tokenStatus != 0 {
		w.WriteHeader(f.tokenStatus)
		io.WriteString(w, `{"error":"temporarily_unavailable","error_description":"s3cret-value"}`)
		return
	}
	n := f.fetches.Add(1)
	tok := fmt.Sprintf("tok-%d", n)
	f.current.Store(tok)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"access_token":%q,"token_type":"bearer","expires_in":3600}`, tok)
}

func (f *oauthFixture) api(w http.ResponseWriter, r *http.Request) {
	cur, _ := f.current.Load().(string)
	if r.Header.Get("Authorization") != "Bearer "+cur {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	io.WriteString(w, "ok")
}

func TestClientCredentials(t *testing.T) {
	f := &oauthFixture{}
	tokSrv, tokOrigin := backend(t, f.token)
	apiSrv, apiOrigin := backend(t, f.api)
	c := newClient(t, Limits{})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.tokens.now = func() time.Time { return now }
	sec := secrets{"CID": "client-1", "CSECRET": "s3cret-value"}
	auth := &abi.AuthDirective{Scheme: "oauth2_client_credentials", TokenURL: tokSrv.URL + "/token", ClientID: "CID", Secret: "CSECRET", Scopes: []string{"read", "write"}}
	req := &abi.CompiledRequest{Method: "GET", URL: apiSrv.URL + "/things", Auth: auth}
	allowed := []Origin{apiOrigin, tokOrigin}
	do := func() (*Response, error) { return c.Do(context.Background(), req, allowed, sec) }

	for i := 0; i < 3; i++ {
		resp, err := do()
		if err != nil || resp.Status != 200 {
			t.Fatalf("call %d: %v", i, err)
		}
		// The executor redacts what was sent, the access token, from a
		// backend's error text; it is never serialised.
		if cur, _ := f.current.Load().(string); resp.Credential != cur {
			t.Errorf("call %d: Credential %q, want the access token sent, %q", i, resp.Credential, cur)
		}
		if b, _ := json.Marshal(resp); strings.Contains(string(b), "tok-") {
			t.Errorf("the response serialises its credential: %s", b)
		}
	}
	if n := f.fetches.Load(); n != 1 {
		t.Errorf("token fetched %d times for 3 calls, want 1 (cached)", n)
	}
	// Within the refresh margin of expiry, a new token is fetched first.
	now = now.Add(3600*time.Second - refreshMargin + time.Second)
	if resp, err := do(); err != nil || resp.Status != 200 {
		t.Fatalf("after refresh: %v %v", resp, err)
	}
	if n := f.fetches.Load(); n != 2 {
		t.Errorf("token fetched %d times, want 2 (refreshed before expiry)", n)
	}
	// A revoked token (the API now wants another): one 401, one refetch.
	f.current.Store("rotated")
	f.fetches.Store(10)
	if resp, err := do(); err != nil || resp.Status != 200 {
		t.Fatalf("after revocation: %v %v", resp, err)
	}
	if n := f.fetches.Load(); n != 11 {
		t.Errorf("fetches = %d, want one refetch after the 401", n)
	}
}

func TestClientCredentialsRefusals(t *testing.T) {
	f := &oauthFixture{}
	tokSrv, tokOrigin := backend(t, f.token)
	apiSrv, apiOrigin := backend(t, f.api)
	c := newClient(t, Limits{})
	// The third-party slot below is a loopback literal, which needs an
	// allowed range (literal.go) before the token slot is even checked.
	c.AllowPrivate = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	good := secrets{"CID": "client-1", "CSECRET": "s3cret-value"}
	auth := func() *abi.AuthDirective {
		return &abi.AuthDirective{Scheme: "oauth2_client_credentials", TokenURL: tokSrv.URL + "/token", ClientID: "CID", Secret: "CSECRET", Scopes: []string{"read", "write"}}
	}
	tests := []struct {
		name    string
		allowed []Origin
		sec     secrets
		status  int
		is      error
		want    string
	}{
		{"token origin not declared", []Origin{apiOrigin}, good, 0, ErrDenied, "token_url"},
		// Declared, but as a third-party origin, not the token endpoint's
		// slot (allowed[1]): a rewritten directive gets no credentials.
		{"token origin declared but not the token endpoint", []Origin{apiOrigin, {}, tokOrigin}, good, 0, ErrDenied, "not the catalog's token endpoint"},
		{"missing client secret", []Origin{apiOrigin, tokOrigin}, secrets{"CID": "client-1"}, 0, ErrSecret, "CSECRET"},
		{"missing client id", []Origin{apiOrigin, tokOrigin}, secrets{"CSECRET": "s3cret-value"}, 0, ErrSecret, "CID"},
		{"wrong credentials", []Origin{apiOrigin, tokOrigin}, secrets{"CID": "client-1", "CSECRET": "wrong"}, 0, ErrToken, "401"},
		{"endpoint failure is redacted", []Origin{apiOrigin, tokOrigin}, good, http.StatusServiceUnavailable, ErrToken, "503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.tokenStatus = tt.status
			before := f.fetches.Load()
			req := &abi.CompiledRequest{Method: "GET", URL: apiSrv.URL + "/things", Auth: auth()}
			_, err := c.Do(context.Background(), req, tt.allowed, tt.sec)
			if err == nil || !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tt.is, tt.want)
			}
			if strings.Contains(err.Error(), "s3cret-value") {
				t.Errorf("error shows the client secret: %v", err)
			}
			if f.fetches.Load() != before {
				t.Errorf("a token was issued")
			}
		})
	}
}

package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/server/internal/authz"
	"github.com/plasmd/plasmd/server/internal/core"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// callerKey carries the resolved caller (tenant, and principal when
// delegated) on a request's context, so /mcp need not verify the token
// twice.
type callerKey struct{}

// tokenInfoCaller is the TokenInfo.Extra key holding the caller.
const tokenInfoCaller = "plasmd.caller"

// newVerifier builds the OAuth verifier when the tenants file has an
// oauth section.
func newVerifier(set *tenant.Set, cfg Config) *authz.Verifier {
	oc := set.OAuth()
	if oc == nil {
		return nil
	}
	return authz.NewVerifier(*oc, authz.Options{Client: cfg.AuthClient})
}

// identify resolves a request's bearer token: a static tenant token (its
// sha256 in the tenants file) or, when OAuth is configured, a JWT access
// token whose claims name a tenant and a principal.
func (a *App) identify(r *http.Request) (*tenant.Tenant, error) {
	if a.tenants == nil {
		return a.anonymous, nil
	}
	if t, ok := r.Context().Value(callerKey{}).(*tenant.Tenant); ok {
		return t, nil
	}
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
		return nil, tenant.ErrUnauthorized
	}
	tok := fields[1]
	t, err := a.tenants.Authenticate(tok)
	if err == nil || a.verifier == nil || !authz.LooksLikeJWT(tok) {
		return t, err
	}
	id, err := a.verifier.Verify(r.Context(), tok)
	if err != nil {
		a.log.Info("access token refused", "err", err)
		return nil, err
	}
	t, ok := a.tenants.Get(id.Tenant)
	if !ok {
		return nil, authz.ErrNoRule
	}
	return t.WithPrincipal(id.Principal, tok), nil
}

// unauthorized answers a failed authentication: 401 with a challenge
// naming the protected-resource metadata (so MCP clients can discover the
// authorization server), 403 for a missing scope, 503 when the issuer's
// keys cannot be fetched.
func (a *App) unauthorized(c echo.Context, err error) error {
	h := c.Response().Header()
	if a.verifier == nil {
		h.Set("WWW-Authenticate", `Bearer realm="plasmd"`)
		return problem.New(http.StatusUnauthorized, "unauthorized", "a valid bearer token is required")
	}
	switch {
	case errors.Is(err, authz.ErrUnavailable):
		return problem.New(http.StatusServiceUnavailable, "authorization-server-unavailable", "the authorization server's keys could not be fetched; retry later")
	case errors.Is(err, authz.ErrScope):
		h.Set("WWW-Authenticate", a.verifier.Challenge(err))
		return problem.New(http.StatusForbidden, "insufficient-scope", "the access token lacks a required scope")
	}
	h.Set("WWW-Authenticate", a.verifier.Challenge(err))
	p := problem.New(http.StatusUnauthorized, "unauthorized", "a valid bearer token is required")
	if errors.Is(err, authz.ErrInvalidToken) {
		p.Detail = "the access token was refused: " + strings.TrimPrefix(err.Error(), authz.ErrInvalidToken.Error()+": ")
		// The detail names the failed check; cap it so no claim value
		// an attacker chose is echoed at length.
		if len(p.Detail) > 300 {
			p.Detail = p.Detail[:300]
		}
	}
	p.Hint = "get an access token for " + a.verifier.Config().Resource + " from the authorization server named in " + a.verifier.Config().MetadataURL()
	return p
}

// withCaller stores the caller on the request for handlers that read the
// request itself (the MCP handler).
func withCaller(c echo.Context, t *tenant.Tenant) {
	r := c.Request()
	c.SetRequest(r.WithContext(context.WithValue(r.Context(), callerKey{}, t)))
}

// bindMCPSessions wraps the MCP handler so every request carries a
// TokenInfo whose UserID is the caller's tenant and principal: the go-sdk
// then refuses a request on a session created by anyone else (session
// hijacking), and tool handlers read the caller from it.
func (a *App) bindMCPSessions(h http.Handler) http.Handler {
	if a.tenants == nil {
		return h
	}
	return auth.RequireBearerToken(func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		t, ok := r.Context().Value(callerKey{}).(*tenant.Tenant)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: t.Scope(), Extra: map[string]any{tokenInfoCaller: t}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
}

// callerFromExtra returns the caller a bound MCP request carries.
func callerFromExtra(extra *mcp.RequestExtra) (*tenant.Tenant, bool) {
	if extra == nil || extra.TokenInfo == nil {
		return nil, false
	}
	t, ok := extra.TokenInfo.Extra[tokenInfoCaller].(*tenant.Tenant)
	return t, ok
}

// metadataRoutes serves RFC 9728 protected-resource metadata at the
// well-known URI (and its path-suffixed form for the /mcp resource).
func (a *App) metadataRoutes(e *echo.Echo) {
	if a.verifier == nil {
		return
	}
	h := echo.WrapHandler(a.verifier.MetadataHandler())
	for _, p := range []string{authz.WellKnown, a.verifier.Config().MetadataPath()} {
		e.GET(p, h)
		e.OPTIONS(p, h)
	}
}

// exchangeFor adapts authz's token exchange to the core: the client
// credentials are the tenant's secrets named by its token_exchange entry.
func exchangeFor(cfg Config) core.TokenExchanger {
	if cfg.Tenants == nil {
		return nil
	}
	ex := authz.NewExchanger(cfg.AuthClient, nil)
	return func(ctx context.Context, t *tenant.Tenant, entryID string) (string, error) {
		x, ok := t.TokenExchange[entryID]
		if !ok {
			return "", fmt.Errorf("%w: catalog %s has no token_exchange", authz.ErrExchange, entryID)
		}
		id, _ := t.SecretFor(entryID, x.ClientIDEnv)
		secret := ""
		if x.ClientSecretEnv != "" {
			secret, _ = t.SecretFor(entryID, x.ClientSecretEnv)
		}
		return ex.Exchange(ctx, t.AccessToken, x, id, secret)
	}
}

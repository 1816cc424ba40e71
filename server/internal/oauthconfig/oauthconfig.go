// Package oauthconfig is the tenants file's `oauth:` section: the resource
// identifier, trusted authorization servers and claim rules that package
// authz enforces. It is separate so the tenants file (and the core, which
// reads tenants) does not depend on the MCP SDK's auth packages.
package oauthconfig

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Config is the tenants file's `oauth:` section.
type Config struct {
	// Resource is this server's canonical URI (RFC 8707 resource
	// indicator, RFC 9728 `resource`), e.g. https://plasmd.example.com/mcp.
	// Access tokens must name it in `aud`.
	Resource string `yaml:"resource" json:"resource"`
	// AuthorizationServers are the issuers whose tokens are accepted.
	AuthorizationServers []Issuer `yaml:"authorization_servers" json:"authorization_servers"`
	// ScopesSupported is advertised in the metadata and the 401 challenge.
	ScopesSupported []string `yaml:"scopes_supported" json:"scopes_supported,omitempty"`
	// RequiredScopes must all be granted by a token (403 otherwise).
	RequiredScopes []string `yaml:"required_scopes" json:"required_scopes,omitempty"`
	// Rules map claims to a tenant and a principal; the first match wins.
	Rules []Rule `yaml:"rules" json:"rules"`
	// Leeway tolerates clock skew on exp / nbf / iat (default 30s).
	Leeway time.Duration `yaml:"leeway" json:"leeway,omitempty"`
	// JWKSMinRefresh is the least time between two JWKS fetches of one
	// issuer (default 30s): a token with an unknown key id triggers a
	// refetch (key rotation) at most this often, so forged kids cannot
	// make plasmd hammer the issuer.
	JWKSMinRefresh time.Duration `yaml:"jwks_min_refresh" json:"jwks_min_refresh,omitempty"`
}

// Issuer is one trusted authorization server.
type Issuer struct {
	// Issuer is the exact `iss` value of its tokens (RFC 8414 issuer).
	Issuer string `yaml:"issuer" json:"issuer"`
	// JWKSURI is where its signing keys are published. Empty means: read
	// `jwks_uri` from the issuer's RFC 8414 metadata on first use.
	JWKSURI string `yaml:"jwks_uri" json:"jwks_uri,omitempty"`
}

// Rule maps a token's claims to a tenant. A rule matches when its issuer
// (if set) equals the token's and its claim (if set) equals the value (a
// string claim, or any element of a string-array claim such as groups).
type Rule struct {
	Issuer string `yaml:"issuer" json:"issuer,omitempty"`
	Claim  string `yaml:"claim" json:"claim,omitempty"`
	Equals string `yaml:"equals" json:"equals,omitempty"`
	Tenant string `yaml:"tenant" json:"tenant"`
	// PrincipalClaim names the claim that identifies the person (default
	// "sub"); it must be a non-empty string.
	PrincipalClaim string `yaml:"principal_claim" json:"principal_claim,omitempty"`
}

// ErrConfig marks an invalid oauth section.
var ErrConfig = errors.New("oauth config")

// Validate checks the section; tenantExists says whether a rule's tenant
// is defined in the same file.
func (c *Config) Validate(tenantExists func(id string) bool) error {
	if err := absoluteURL(c.Resource, false); err != nil {
		return fmt.Errorf("%w: resource: %v", ErrConfig, err)
	}
	if len(c.AuthorizationServers) == 0 {
		return fmt.Errorf("%w: authorization_servers needs at least one issuer", ErrConfig)
	}
	seen := map[string]bool{}
	for i, is := range c.AuthorizationServers {
		if err := absoluteURL(is.Issuer, true); err != nil {
			return fmt.Errorf("%w: authorization_servers[%d].issuer: %v", ErrConfig, i, err)
		}
		if seen[is.Issuer] {
			return fmt.Errorf("%w: authorization_servers[%d]: issuer %s is listed twice", ErrConfig, i, is.Issuer)
		}
		seen[is.Issuer] = true
		if is.JWKSURI != "" {
			if err := absoluteURL(is.JWKSURI, true); err != nil {
				return fmt.Errorf("%w: authorization_servers[%d].jwks_uri: %v", ErrConfig, i, err)
			}
		}
	}
	if len(c.Rules) == 0 {
		return fmt.Errorf("%w: rules needs at least one claim → tenant rule", ErrConfig)
	}
	for i, r := range c.Rules {
		switch {
		case r.Tenant == "":
			return fmt.Errorf("%w: rules[%d]: tenant is required", ErrConfig, i)
		case tenantExists != nil && !tenantExists(r.Tenant):
			return fmt.Errorf("%w: rules[%d]: tenant %q is not defined in this file", ErrConfig, i, r.Tenant)
		case r.Issuer != "" && !seen[r.Issuer]:
			return fmt.Errorf("%w: rules[%d]: issuer %s is not among authorization_servers", ErrConfig, i, r.Issuer)
		case (r.Claim == "") != (r.Equals == ""):
			return fmt.Errorf("%w: rules[%d]: claim and equals go together", ErrConfig, i)
		}
	}
	if c.Leeway < 0 || c.JWKSMinRefresh < 0 {
		return fmt.Errorf("%w: leeway and jwks_min_refresh must not be negative", ErrConfig)
	}
	return nil
}

// absoluteURL accepts https URLs, and http ones only on loopback (local
// development and tests), as OAuth 2.1 requires.
func absoluteURL(s string, issuer bool) error {
	if s == "" {
		return errors.New("is required")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	if u.Fragment != "" || (issuer && u.RawQuery != "") {
		return fmt.Errorf("%q must not carry a query or fragment", s)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return fmt.Errorf("%q must use https (http is allowed on loopback only)", s)
	}
	return nil
}

func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1" || strings.HasPrefix(host, "127.")
}

// MetadataPath is where RFC 9728 §3.1 puts the metadata of a resource: the
// well-known prefix inserted before the resource's path.
func (c *Config) MetadataPath() string {
	u, err := url.Parse(c.Resource)
	if err != nil {
		return WellKnown
	}
	return WellKnown + strings.TrimSuffix(u.EscapedPath(), "/")
}

// MetadataURL is the absolute URL of MetadataPath, named in 401 challenges.
func (c *Config) MetadataURL() string {
	u, err := url.Parse(c.Resource)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + c.MetadataPath()
}

// WellKnown is the RFC 9728 well-known URI suffix.
const WellKnown = "/.well-known/oauth-protected-resource"

// Exchange configures RFC 8693 token exchange for one catalog: a person's
// access token is exchanged at the catalog's token endpoint for an
// upstream token of that person. Client credentials are tenant secret
// names (they never appear in the file in clear).
type Exchange struct {
	TokenEndpoint   string   `yaml:"token_endpoint" json:"token_endpoint"`
	ClientIDEnv     string   `yaml:"client_id_env" json:"client_id_env"`
	ClientSecretEnv string   `yaml:"client_secret_env" json:"client_secret_env,omitempty"`
	Audience        string   `yaml:"audience" json:"audience"`
	Resource        string   `yaml:"resource" json:"resource"`
	Scopes          []string `yaml:"scopes" json:"scopes,omitempty"`
}

// Validate checks one exchange.
func (x *Exchange) Validate() error {
	if err := absoluteURL(x.TokenEndpoint, false); err != nil {
		return fmt.Errorf("%w: token_endpoint: %v", ErrConfig, err)
	}
	if x.ClientIDEnv == "" {
		return fmt.Errorf("%w: client_id_env is required", ErrConfig)
	}
	if x.Audience == "" {
		return fmt.Errorf("%w: audience is required", ErrConfig)
	}
	if err := absoluteURL(x.Resource, false); err != nil {
		return fmt.Errorf("%w: resource: %v", ErrConfig, err)
	}
	return nil
}

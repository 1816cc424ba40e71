package tenant

import (
	"fmt"

	"github.com/plasmd/plasmd/server/internal/oauthconfig"
)

// oauthNames reports whether an oauth section maps tokens to tenant id; such
// a tenant needs no static token.
func oauthNames(c *oauthconfig.Config, id string) bool {
	if c == nil {
		return false
	}
	for _, r := range c.Rules {
		if r.Tenant == id {
			return true
		}
	}
	return false
}

func (s *Set) setOAuth(c *oauthconfig.Config) error {
	if c == nil {
		return nil
	}
	if err := c.Validate(func(id string) bool { _, ok := s.byID[id]; return ok }); err != nil {
		return err
	}
	s.oauth = c
	return nil
}

// OAuth returns the file's oauth section, or nil when only static tokens
// are accepted.
func (s *Set) OAuth() *oauthconfig.Config {
	if s == nil {
		return nil
	}
	return s.oauth
}

// WithPrincipal returns a copy of t acting for principal: what a delegated
// credential (accessToken) resolves to. The copy shares t's read-only
// configuration.
func (t *Tenant) WithPrincipal(principal, accessToken string) *Tenant {
	c := *t
	c.Principal = principal
	c.AccessToken = accessToken
	return &c
}

// Scope names the tenant and, when delegated, the principal: the identity
// an MCP transport session is bound to.
func (t *Tenant) Scope() string {
	if t.Principal == "" {
		return t.ID
	}
	return fmt.Sprintf("%s/%q", t.ID, t.Principal)
}

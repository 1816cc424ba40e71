package core

import (
	"strings"

	"github.com/plasmd/plasmd/server/internal/discovery"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// Discover ranks the tenant's catalog entities for one intent sentence.
func (s *Service) Discover(t *tenant.Tenant, intent string, max int, allowed []string) (string, []discovery.Option, error) {
	if strings.TrimSpace(intent) == "" {
		return "", nil, problem.BadRequest("missing-intent", "intent is required: one sentence describing the whole goal")
	}
	if err := CheckIntent(intent); err != nil {
		return "", nil, err
	}
	if max <= 0 {
		max = 12
	}
	if max > 100 {
		max = 100
	}
	opts := discovery.Rank(s.registry.Visible(t.Allows), intent, max, allowed)
	if len(opts) == 0 {
		return "_No catalog entity matches this intent. Try other words, or list catalogs with GET /v1/registry._", nil, nil
	}
	return discovery.RenderTSV(opts), opts, nil
}

package core

import (
	"context"

	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// checkPageHandles resolves every page(…) handle of a plan before the
// review gate looks at it: a continuation is planned as an unbounded read,
// so a bad handle was first answered 428 review-required, and only a
// forced run told the caller the handle did not exist. Resolving is a
// store read; the executor resolves the handle again when it runs.
func (s *Service) checkPageHandles(ctx context.Context, t *tenant.Tenant, sc RunScope, p *plan.Plan) error {
	for i := range p.Nodes {
		if n := &p.Nodes[i]; n.Op == plan.OpPage && n.Page != nil {
			if _, err := s.resolvePage(ctx, t, sc, n.Page.Handle); err != nil {
				return err
			}
		}
	}
	return nil
}

package executor

import (
	"fmt"

	"github.com/plasmd/plasmd/internal/model/plan"
)

// Reads describes, one line per reading node, which pages a plan may read
// when it runs, and ends with the run budget that bounds them. A dry run
// shows it so an agent knows before running whether a program reads one
// page, every page, or only until a limit is filled.
func Reads(p *plan.Plan, b Budget) []string {
	if p == nil {
		return nil
	}
	b = b.Or(DefaultBudget())
	paged := pagedNodes(p)
	var out []string
	for i := range p.Nodes {
		n := &p.Nodes[i]
		var what string
		switch n.Op {
		case plan.OpFetch:
			switch {
			case !n.Many:
				what = "one read"
			case paged[i]:
				what = "the first page; a page(…) handle continues it when the backend has more"
			case untilLimit(n.Filters, n.Transforms, nil) != nil:
				what = "pages until its .limit is filled (or the list ends)"
			default:
				what = "every page (the whole list)"
			}
		case plan.OpPage:
			switch {
			case !paged[i]:
				what = "every remaining page of the handle's list"
			case n.Page != nil && n.Page.Limit > 0:
				what = fmt.Sprintf("the handle's next %d rows, from as many pages as that takes", n.Page.Limit)
			default:
				what = "the handle's next page"
			}
		case plan.OpHop:
			what = "every page of the related rows, once per parent row"
			if n.Hop != nil && n.Hop.Materialize == plan.MaterializeView {
				continue // the view's step already read them
			}
		case plan.OpView:
			what = viewReads(n)
		case plan.OpHydrate:
			what = "one read per row lacking the asked-for fields"
		default:
			continue
		}
		out = append(out, fmt.Sprintf("n%d %s: %s", n.ID, n.Entity, what))
	}
	if len(out) > 0 {
		out = append(out, fmt.Sprintf("budget: at most %d pages and %d rows per run; a run that needs more is refused (run-budget), never cut short", b.Pages, b.Rows))
	}
	return out
}

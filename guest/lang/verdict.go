package lang

import (
	"fmt"
	"slices"

	"github.com/plasmd/plasmd/guest/plan"
)

// finish completes the plan: order, roots, verdict and summary.
func (p *planner) finish(roots []plan.Root) *plan.Plan {
	pl := &plan.Plan{Nodes: p.nodes, Roots: roots, Order: make([]int, len(p.nodes))}
	// Nodes only ever depend on earlier nodes, so creation order is topological.
	for i := range pl.Order {
		pl.Order[i] = i
	}
	var reasons []string
	add := func(r string) {
		if !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	for _, r := range roots {
		n := &p.nodes[r.Node]
		if n.Effect != plan.EffectRead || !n.Many {
			continue
		}
		what := n.Entity
		if n.Op == plan.OpPage {
			what = "page " + n.Page.Handle
		} else if !hasTransform(n, plan.TProject) {
			add("unprojected read: " + what)
		}
		if !hasTransform(n, plan.TLimit) && (n.Page == nil || n.Page.Limit == 0) {
			add("unbounded read: " + what)
		}
	}
	for i := range p.nodes {
		if n := &p.nodes[i]; n.Op == plan.OpMutate {
			add("mutation: " + n.Capability)
		}
	}
	pl.Verdict = plan.VerdictOK
	if len(reasons) > 0 {
		pl.Verdict, pl.Reasons = plan.VerdictReview, reasons
	}
	pl.Summary = fmt.Sprintf("plan %s · %dn %dr → %s", pl.Verdict, len(p.nodes), len(roots), shape(p.nodes, roots))
	return pl
}

func hasTransform(n *plan.Node, kind string) bool {
	for _, t := range n.Transforms {
		if t.Kind == kind {
			return true
		}
	}
	return false
}

// shape is single for one node, parallel(k) when the k roots share no
// nodes, else sequence(d) with d the longest dependency chain.
func shape(nodes []plan.Node, roots []plan.Root) string {
	if len(nodes) == 1 {
		return "single"
	}
	depth := make([]int, len(nodes))
	for i := range nodes {
		depth[i] = 1
		for _, d := range nodes[i].Deps {
			depth[i] = max(depth[i], depth[d]+1)
		}
	}
	if len(roots) > 1 {
		owner := make([]int, len(nodes))
		for i := range owner {
			owner[i] = -1
		}
		independent := true
		for ri, r := range roots {
			stack := []int{r.Node}
			seen := map[int]bool{}
			for len(stack) > 0 && independent {
				id := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if seen[id] {
					continue
				}
				seen[id] = true
				if owner[id] >= 0 && owner[id] != ri {
					independent = false
				}
				owner[id] = ri
				stack = append(stack, nodes[id].Deps...)
			}
		}
		if independent {
			return fmt.Sprintf("parallel(%d)", len(roots))
		}
	}
	return fmt.Sprintf("sequence(%d)", slices.Max(depth))
}

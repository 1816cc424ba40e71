package lang

import (
	"slices"
	"strconv"

	"github.com/plasmd/plasmd/internal/model/plan"
)

// finish completes the plan: order, roots, verdict and summary.
func (p *planner) finish(roots []plan.Root) *plan.Plan {
	pl := p.pa.plans.put(plan.Plan{Nodes: p.nodes, Roots: roots, Order: p.pa.ints.take(len(p.nodes))})
	// Nodes only ever depend on earlier nodes, so creation order is topological.
	for i := range pl.Order {
		pl.Order[i] = i
	}
	var reasons []string
	add := func(r string) {
		if !slices.Contains(reasons, r) {
			if reasons == nil {
				reasons = p.pa.strs.slice(4)
			}
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
		} else if !hasTransform(n, plan.TProject) && !isComputed(n) {
			add("unprojected read: " + what)
		}
		if !bounded(p.nodes, r.Node) && !isComputed(n) {
			add("unbounded read: " + what)
		}
	}
	for i := range p.nodes {
		n := &p.nodes[i]
		if n.Op == plan.OpMutate {
			add("mutation: " + n.Capability)
		}
		// A hop or a for-each mutation runs once per input row, so an
		// unbounded input means an unbounded number of calls, whatever
		// limit is applied to what comes out.
		fansOut := n.Op == plan.OpHop || n.Op == plan.OpHydrate || n.Op == plan.OpMutate && n.ForEach != nil
		if fansOut && n.Input >= 0 && !bounded(p.nodes, n.Input) {
			what := n.Capability
			if n.Hop != nil {
				what = p.nodes[n.Input].Entity + "." + n.Hop.Relation
			}
			add("fan-out over unbounded input: " + what)
		}
	}
	computeReasons(p.nodes, add)
	pl.Verdict = plan.VerdictOK
	if len(reasons) > 0 {
		pl.Verdict, pl.Reasons = plan.VerdictReview, reasons
	}
	// Concatenation, not fmt: every plan pays for this line, and fmt is
	// among the slowest code in the Wasm guest.
	pl.Summary = "plan " + pl.Verdict + " · " + strconv.Itoa(len(p.nodes)) + "n " + strconv.Itoa(len(roots)) + "r → " + shape(p.nodes, roots, p.pa)
	return pl
}

// bounded reports whether a node yields a bounded number of rows: one row,
// a .limit, a page limit, or a transform, hydrate or for-each over a bounded
// input.
// Fetches and hops without a limit are unbounded; a hop over a bounded input
// still is, because each parent may have any number of children.
func bounded(nodes []plan.Node, id int) bool {
	for range len(nodes) {
		n := &nodes[id]
		if !n.Many || hasTransform(n, plan.TLimit) || hasTransform(n, plan.TSingleton) || n.PageSize > 0 || n.Page != nil && n.Page.Limit > 0 {
			return true
		}
		if n.Input < 0 || n.Op != plan.OpTransform && n.Op != plan.OpHydrate && (n.Op != plan.OpMutate || n.ForEach == nil && n.EachRow == nil) {
			return false
		}
		id = n.Input
	}
	return false
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
func shape(nodes []plan.Node, roots []plan.Root, pa *planArena) string {
	if len(nodes) == 1 {
		return "single"
	}
	depth := pa.ints.take(len(nodes))
	for i := range nodes {
		depth[i] = 1
		for _, d := range nodes[i].Deps {
			depth[i] = max(depth[i], depth[d]+1)
		}
	}
	if len(roots) > 1 {
		owner := pa.ints.take(len(nodes))
		for i := range owner {
			owner[i] = -1
		}
		independent := true
		seen := pa.bools.take(len(nodes))
		stack := pa.ints.slice(len(nodes))
		for ri, r := range roots {
			stack = append(stack[:0], r.Node)
			clear(seen)
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
			return "parallel(" + strconv.Itoa(len(roots)) + ")"
		}
	}
	return "sequence(" + strconv.Itoa(slices.Max(depth)) + ")"
}

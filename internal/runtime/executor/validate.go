package executor

import (
	"fmt"

	"github.com/plasmd/plasmd/internal/model/plan"
)

// Plan validation: a plan comes from a guest, so its shape is checked
// (references in range, no cycles) before any step runs.

func deps(n *plan.Node) []int {
	out := append([]int(nil), n.Deps...)
	if n.Input >= 0 {
		out = append(out, n.Input)
	}
	for _, r := range n.ArgRefs {
		out = append(out, r.Node)
	}
	return out
}

// validate checks a plan's structure: node ids match positions, every
// dependency and root names an existing node, and the graph is acyclic.
// Plans come out of a guest, so nothing here may panic or recurse deeply.
func validate(p *plan.Plan) error {
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if n.ID != i {
			return fmt.Errorf("malformed plan: node %d has id %d", i, n.ID)
		}
		for _, d := range deps(n) {
			if d < 0 || d >= len(p.Nodes) || d == i {
				return fmt.Errorf("malformed plan: node %d depends on %d", i, d)
			}
		}
	}
	for _, root := range p.Roots {
		if root.Node < 0 || root.Node >= len(p.Nodes) {
			return fmt.Errorf("malformed plan: root %q names node %d", root.Label, root.Node)
		}
	}
	return checkAcyclic(p)
}

// checkAcyclic runs Kahn's algorithm: iterative, so a long hostile chain
// cannot exhaust the stack.
func checkAcyclic(p *plan.Plan) error {
	pending := make([]int, len(p.Nodes)) // unfinished dependencies per node
	dependents := make([][]int, len(p.Nodes))
	for i := range p.Nodes {
		for _, d := range deps(&p.Nodes[i]) {
			pending[i]++
			dependents[d] = append(dependents[d], i)
		}
	}
	var ready []int
	for i, n := range pending {
		if n == 0 {
			ready = append(ready, i)
		}
	}
	done := 0
	for len(ready) > 0 {
		i := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		done++
		for _, j := range dependents[i] {
			if pending[j]--; pending[j] == 0 {
				ready = append(ready, j)
			}
		}
	}
	if done != len(p.Nodes) {
		for i, n := range pending {
			if n > 0 {
				return fmt.Errorf("malformed plan: cycle through node %d", i)
			}
		}
	}
	return nil
}

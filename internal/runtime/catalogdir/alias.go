package catalogdir

import (
	"go.yaml.in/yaml/v3"
)

// maxExpanded bounds the YAML nodes of one file once every alias is
// expanded. Catalogs use anchors for a shared pagination or header block;
// a "billion laughs" document (aliases of aliases of lists) would expand
// exponentially, so the expanded size is computed first, in linear time
// over the unexpanded tree, and the file refused when it is over.
const maxExpanded = maxNodes

// expandAliases checks that the tree rooted at root expands to at most
// maxExpanded nodes, then replaces every alias by the node it names and
// applies YAML merge keys (<<: *anchor), so the structured walk never sees
// an alias. Expanded subtrees are shared, not copied: the walk only reads.
func (p *parser) expandAliases(root *yaml.Node) bool {
	const (
		visiting = -1
	)
	size := map[*yaml.Node]int{}
	var failed bool
	// measure returns the expanded node count of n, memoised so that a DAG
	// of aliases costs one visit per distinct node. Recursion depth is that
	// of the unexpanded document, which yaml.v3 bounds.
	var measure func(n *yaml.Node) int
	measure = func(n *yaml.Node) int {
		if failed {
			return 0
		}
		target := n
		if n.Kind == yaml.AliasNode {
			target = n.Alias
			if target == nil {
				p.errorf(n, "YAML alias *%s names no anchor", n.Value)
				failed = true
				return 0
			}
		}
		switch s, ok := size[target]; {
		case ok && s == visiting:
			p.errorf(n, "YAML alias *%s refers to a node that contains it", n.Value)
			failed = true
			return 0
		case ok:
			return s
		}
		size[target] = visiting
		total := 1
		for _, c := range target.Content {
			total += measure(c)
			if total > maxExpanded {
				total = maxExpanded + 1 // saturate: no overflow, early stop
				break
			}
		}
		size[target] = total
		return total
	}
	if n := measure(root); failed {
		return false
	} else if n > maxExpanded {
		p.errorf(root, "YAML aliases expand to more than %d nodes; write the repeated values out or share less", maxExpanded)
		return false
	}
	done := map[*yaml.Node]bool{}
	var resolve func(n *yaml.Node)
	resolve = func(n *yaml.Node) {
		if done[n] {
			return
		}
		done[n] = true
		for i, c := range n.Content {
			if c.Kind == yaml.AliasNode {
				n.Content[i] = c.Alias
				c = c.Alias
			}
			resolve(c)
		}
		if n.Kind == yaml.MappingNode {
			applyMerge(n)
		}
	}
	resolve(root)
	return true
}

// applyMerge implements YAML merge keys: the pairs of each mapping named by
// "<<" are added to n unless n already has the key (explicit keys win, and
// earlier merged mappings win over later ones, as the merge-key spec says).
// Children are already resolved, so merged mappings are alias-free.
func applyMerge(n *yaml.Node) {
	hasMerge := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isMergeKey(n.Content[i]) {
			hasMerge = true
			break
		}
	}
	if !hasMerge {
		return
	}
	var own, merged []*yaml.Node
	var sources []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) {
			own = append(own, k, v)
			continue
		}
		switch v.Kind {
		case yaml.MappingNode:
			sources = append(sources, v)
		case yaml.SequenceNode:
			for _, s := range v.Content {
				if s.Kind == yaml.MappingNode {
					sources = append(sources, s)
				}
			}
		default:
			// Not mergeable: keep it so the walk reports the stray key.
			own = append(own, k, v)
		}
	}
	seen := map[string]bool{}
	for i := 0; i < len(own); i += 2 {
		seen[own[i].Value] = true
	}
	for _, src := range sources {
		for i := 0; i+1 < len(src.Content); i += 2 {
			k := src.Content[i]
			if isMergeKey(k) || seen[k.Value] {
				continue
			}
			seen[k.Value] = true
			merged = append(merged, k, src.Content[i+1])
		}
	}
	n.Content = append(own, merged...)
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "!!merge" || k.Tag == "" || k.ShortTag() == "!!merge")
}

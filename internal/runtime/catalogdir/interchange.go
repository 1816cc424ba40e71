package catalogdir

import "go.yaml.in/yaml/v3"

// interchangeSite finds the first sign that a single-file catalog is
// Plasm's CGS interchange form (a serialized CGS, as Plasm's extract
// pipelines write it: field_type on values and fields, a mapping block on
// each capability) rather than the authoring form plasmd reads, so the
// file is refused with one error saying so instead of a list of missing
// keys. Nil when there is none.
func interchangeSite(root *yaml.Node) *yaml.Node {
	if root == nil || root.Kind != yaml.MappingNode {
		return nil
	}
	hasKey := func(n *yaml.Node, key string) *yaml.Node {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i]
			}
		}
		return nil
	}
	valueOf := func(n *yaml.Node, key string) *yaml.Node {
		if k := hasKey(n, key); k != nil {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i] == k {
					return n.Content[i+1]
				}
			}
		}
		return nil
	}
	each := func(n *yaml.Node, f func(v *yaml.Node) *yaml.Node) *yaml.Node {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 1; i < len(n.Content); i += 2 {
			if s := f(n.Content[i]); s != nil {
				return s
			}
		}
		return nil
	}
	if s := each(valueOf(root, "values"), func(v *yaml.Node) *yaml.Node { return hasKey(v, "field_type") }); s != nil {
		return s
	}
	if s := each(valueOf(root, "entities"), func(e *yaml.Node) *yaml.Node {
		return each(valueOf(e, "fields"), func(f *yaml.Node) *yaml.Node { return hasKey(f, "field_type") })
	}); s != nil {
		return s
	}
	return each(valueOf(root, "capabilities"), func(c *yaml.Node) *yaml.Node { return hasKey(c, "mapping") })
}

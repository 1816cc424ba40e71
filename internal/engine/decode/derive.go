package decode

import (
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/tape"
)

// needsTree reports whether decoding ent through m needs the whole JSON
// tree rather than the tape view: derived fields read arbitrary parts of a
// row, and a bare scalar body is not a tape of objects.
func needsTree(ent *catalog.Entity, m *catalog.Mapping) bool {
	if m.Response != nil && (m.Response.WrapRootScalar || m.Response.Preprocess != nil) {
		return true
	}
	for _, f := range ent.Fields {
		if f.Derive != nil || f.WholeRow {
			return true
		}
	}
	return false
}

// wrapsScalar reports whether doc is a bare string or number body that the
// mapping asks to read as a one-row list.
func wrapsScalar(doc any, r *catalog.Response) bool {
	if r == nil || !r.WrapRootScalar {
		return false
	}
	switch doc.(type) {
	case nil, bool, map[string]any, []any:
		return false
	}
	return true
}

// tree builds the whole body: from JSON, or from the host's tape when a
// rule needs the tree (needsTree).
func (d *decoder) tree(body []byte) (any, error) {
	if !d.req.Tape {
		return parseJSON(body)
	}
	root, err := tape.Root(body)
	if err != nil {
		return nil, err
	}
	return root.Value()
}

// scalarRow reads a bare string or number item as a row holding only the
// entity's id, as Plasm does for id feeds ([8863, 8864, …]).
func scalarRow(ent *catalog.Entity, it any) (map[string]any, bool) {
	switch it.(type) {
	case nil, bool, map[string]any, []any:
		return nil, false
	}
	f := ent.Fields[ent.IDField]
	if ent.IDField == "" || f == nil {
		return nil, false
	}
	path := f.WirePath()
	row := map[string]any{}
	cur := row
	for _, k := range path[:len(path)-1] {
		next := map[string]any{}
		cur[k] = next
		cur = next
	}
	cur[path[len(path)-1]] = it
	return row, true
}

// derive applies a field's derive rule to the JSON found at its path.
// Anything that does not fit the rule derives null, as in Plasm.
func derive(d *catalog.Derive, v any) any {
	switch d.Type {
	case catalog.DeriveSegmentsAfterPrefix:
		s, ok := v.(string)
		if !ok {
			return nil
		}
		for _, p := range append([]string{d.Prefix}, d.AltPrefixes...) {
			rest, found := strings.CutPrefix(s, p)
			if !found {
				continue
			}
			var parts []string
			for _, seg := range strings.Split(rest, "/") {
				if seg != "" {
					parts = append(parts, seg)
				}
			}
			if d.PartIndex < len(parts) {
				return parts[d.PartIndex]
			}
			return nil
		}
		return nil
	case catalog.DeriveNameValueLookup:
		list, ok := v.([]any)
		if !ok {
			return nil
		}
		for _, it := range list {
			obj, ok := it.(map[string]any)
			if !ok {
				continue
			}
			k, _ := obj[d.MatchKey].(string)
			if k == d.Equals || (d.CaseInsensitive && strings.EqualFold(k, d.Equals)) {
				return obj[d.ValueField]
			}
		}
		return nil
	case catalog.DeriveObjectKeyLookup:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if x, ok := obj[d.Key]; ok || !d.CaseInsensitive {
			return x
		}
		for k, x := range obj {
			if strings.EqualFold(k, d.Key) {
				return x
			}
		}
		return nil
	case catalog.DeriveColonPair:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for _, k := range d.PreferKeys {
			if s, ok := obj[k].(string); ok {
				if pair := colonPair(s, d.Segment); pair != "" {
					return pair
				}
			}
		}
		blocks, _ := obj[d.BlocksKey].([]any)
		for _, b := range blocks {
			if bo, ok := b.(map[string]any); ok {
				if s, ok := bo[d.RefField].(string); ok {
					if pair := colonPair(s, d.Segment); pair != "" {
						return pair
					}
				}
			}
		}
		return nil
	}
	return nil
}

// colonPair finds segment as a whole ":"-separated segment of s and returns
// "segment:next" when the next segment is not empty.
func colonPair(s, segment string) string {
	parts := strings.Split(s, ":")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == segment && parts[i+1] != "" {
			return segment + ":" + parts[i+1]
		}
	}
	return ""
}

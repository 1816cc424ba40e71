package extract

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

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

// scalarRow reads a bare string or number item as a row holding only the
// entity's id at path, as Plasm does for id feeds ([8863, 8864, …]).
func scalarRow(path []string, it any) (map[string]any, bool) {
	switch it.(type) {
	case nil, bool, map[string]any, []any:
		return nil, false
	}
	if len(path) == 0 {
		return nil, false
	}
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
			// A negative index (a catalog Check refuses) derives null
			// rather than indexing before the first part.
			if d.PartIndex >= 0 && d.PartIndex < len(parts) {
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

// preprocess applies a mapping's response_preprocess rule to the decoded
// body. Rules that replace the root put their list where the response's
// items path says rows are. A body the rule does not fit is returned as is.
func preprocess(doc any, r *catalog.Response, vars map[string]any) any {
	if r == nil || r.Preprocess == nil {
		return doc
	}
	pp := r.Preprocess
	at, ok := walk(doc, pp.Path)
	if !ok {
		return doc
	}
	list, ok := at.([]any)
	if !ok {
		return doc
	}
	switch pp.Kind {
	case catalog.PreArrayFindPluck:
		want, ok := vars[pp.IDVar]
		if !ok || want == nil {
			return doc
		}
		rows := []any{}
		for _, it := range list {
			obj, ok := it.(map[string]any)
			if !ok || !sameScalar(obj[pp.IDField], want) {
				continue
			}
			if nested, ok := obj[pp.NestedArray].([]any); ok {
				rows = nested
			}
			break
		}
		return rewrap(rows, r.ItemsPath)
	case catalog.PreConcatFieldArrays:
		rows := []any{}
		for _, it := range list {
			if obj, ok := it.(map[string]any); ok {
				if part, ok := obj[pp.FromEach].([]any); ok {
					rows = append(rows, part...)
				}
			}
		}
		return rewrap(rows, r.ItemsPath)
	case catalog.PreStringIDsToObjects:
		objs := make([]any, 0, len(list))
		for _, it := range list {
			if s, ok := it.(string); ok {
				objs = append(objs, map[string]any{pp.Field: s})
			}
		}
		return replaceAt(doc, pp.Path, objs)
	}
	return doc
}

// rewrap builds a body holding rows at path.
func rewrap(rows []any, path []string) any {
	var out any = rows
	for i := len(path) - 1; i >= 0; i-- {
		out = map[string]any{path[i]: out}
	}
	return out
}

// replaceAt returns doc with the value at path (which exists) replaced.
func replaceAt(doc any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	obj := doc.(map[string]any)
	out := make(map[string]any, len(obj))
	for k, x := range obj {
		out[k] = x
	}
	out[path[0]] = replaceAt(obj[path[0]], path[1:], v)
	return out
}

// sameScalar compares an id from the body with a call variable by their
// text, so 7, 7.0 and "7" match as Plasm's id comparison does. Numbers are
// written by value, not by Go type: a variable filled from an earlier row
// may be a float64 on the host where the guest sees json.Number, and
// fmt.Sprint would write 2500000.0 as "2.5e+06" and miss the row.
func sameScalar(a, b any) bool {
	if a == nil || b == nil {
		return false
	}
	return scalarText(a) == scalarText(b)
}

func scalarText(v any) string {
	if n, ok := v.(json.Number); ok {
		if big, ok := bigInteger(n); ok {
			return string(big) // its digits, not a float64's
		}
	}
	n, ok, bad := number(v)
	switch {
	case !ok:
		return fmt.Sprint(plain(v))
	case bad:
		return fmt.Sprint(v)
	case n.isInt:
		return strconv.FormatInt(n.i, 10)
	case n.f == math.Trunc(n.f) && math.Abs(n.f) < 1<<63:
		return strconv.FormatInt(int64(n.f), 10)
	}
	return strconv.FormatFloat(n.f, 'f', -1, 64)
}

package lang

import (
	"fmt"
	"slices"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Values: checking literal arguments against the catalog's value domains.

// checkValue type-checks a literal against a value domain, when declared.
func (p *planner) checkValue(cat *catalog.Catalog, ref string, v any, at pos, what string) *abi.Error {
	dom := cat.ValueNamed(ref)
	if dom == nil || v == nil {
		return nil
	}
	if err := p.checkTyped(cat, dom, v, at, what); err != nil {
		return err
	}
	if l, ok := v.([]any); ok {
		switch dom.Type {
		case "array", "multi_select":
		default:
			for _, it := range l {
				if err := p.checkScalar(dom, it, at, what); err != nil {
					return err
				}
			}
			return nil
		}
		if dom.Type == "multi_select" {
			for _, it := range l {
				if err := p.checkScalar(dom, it, at, what); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return p.checkScalar(dom, v, at, what)
}

func (p *planner) checkScalar(dom *catalog.Value, v any, at pos, what string) *abi.Error {
	if v == nil {
		return nil
	}
	bad := func(want, hint string) *abi.Error {
		return errAt(at, abi.CodeType, fmt.Sprintf("%s expects %s, got %s", what, want, p.describeAt(at, v)), hint)
	}
	switch dom.Type {
	case "integer":
		switch x := v.(type) {
		case int64:
		case float64:
			return bad("a whole number", "")
		case string:
			if !isInteger(x) {
				return bad("a whole number", "")
			}
		default:
			return bad("a whole number", "")
		}
	case "number":
		switch x := v.(type) {
		case int64, float64:
		case string:
			if !isNumber(x) {
				return bad("a number", "")
			}
		default:
			return bad("a number", "")
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return bad("true or false", "")
		}
	case "select", "multi_select":
		s, ok := v.(string)
		if len(dom.AllowedValues) > 0 && (!ok || !slices.Contains(dom.AllowedValues, s)) {
			return bad("one of its allowed values", listHint(p.spellAt(at, v), "allowed values", dom.AllowedValues))
		}
	}
	return nil
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}

func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return allDigits(s)
}

func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	a, b, ok := strings.Cut(s, ".")
	return allDigits(a) && (!ok || allDigits(b))
}

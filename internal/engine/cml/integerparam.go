package cml

import (
	"fmt"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/decimal"
)

// checkIntegerParams refuses a call that gives a parameter declared
// integer a number that is not one (2.5, 1e-3), or one too long to write
// (1e999999), alone or in a list: written into the request as it is, the
// backend would read another value or refuse it with its own words. An
// integer however written (1e3, 10.0, -0) is accepted; scalarText writes
// its canonical digits. Text is left to the backend: the planner already
// refuses a program's text for an integer, and a value from a row is the
// backend's own.
func checkIntegerParams(cat *catalog.Catalog, cp *catalog.Capability, vars map[string]any) *abi.Error {
	for _, prm := range cp.Parameters {
		val := cat.Values[prm.ValueRef]
		if val == nil || val.Type != "integer" {
			continue
		}
		v, ok := vars[prm.Name]
		if !ok {
			continue
		}
		items, list := v.([]any)
		if !list {
			items = []any{v}
		}
		for _, it := range items {
			if bad := notInteger(it); bad != "" {
				return &abi.Error{Code: abi.CodeCompile,
					Message: fmt.Sprintf("compile %s: parameter %s is an integer; %s", cp.Name, prm.Name, bad),
					Hint:    "give it a whole number"}
			}
		}
	}
	return nil
}

// notInteger says why number v is not an integer that can be written
// exactly, or "" when it is one or is not a number. Its literal decides
// (a json.Number's text, a float64's shortest form, which is what crosses
// the ABI), read by the decimal package scalarText writes it with.
func notInteger(v any) string {
	if _, ok, _ := asNumber(v); !ok {
		return ""
	}
	text := fmt.Sprint(v)
	_, integral, err := decimal.Integer(text)
	switch {
	case !integral:
		return fmt.Sprintf("%.40s is not a whole number", text)
	case err != nil:
		return fmt.Sprintf("%.40s has more than %d digits", text, decimal.MaxDigits)
	}
	return ""
}

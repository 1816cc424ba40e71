package lang

import (
	"slices"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
)

// keyedValue evaluates Entity(k=v, …) used as a value, Plasm's way to name
// a row of an entity with a compound key (Repository(owner="o", repo="r")
// for a repository scope): the key parts as an object, which the request
// compiler spreads into the mapping's variables like "o/r" (cml.splatScope).
// For an entity with one key, Entity(id=v) is Entity(v).
func (p *planner) keyedValue(v *value) (any, *abi.Error) {
	x, err := p.entity(v.get.name)
	if err != nil {
		return nil, err
	}
	keys := x.e.KeyVars
	if len(keys) <= 1 {
		idf := idField(x.e)
		if len(v.get.keys) != 1 || (v.get.keys[0].key.text != "id" && v.get.keys[0].key.text != idf) {
			return nil, errAt(v.p, abi.CodeType, x.name+" has one key; name the row by its id", "write "+x.name+"(\"id\")")
		}
		lit, ref, err := p.val(v.get.keys[0].val)
		if err == nil && ref != nil {
			return nil, errAt(v.get.keys[0].val.p, abi.CodeType, "a key given as a value must be literal", "write the id itself: "+x.name+"(\"id\")")
		}
		if err == nil {
			// The same checks as Entity(v) (planner.val): not empty, of
			// the id field's type, a number written as it is sent.
			lit, err = p.checkID(x, lit, v.get.keys[0].val.p)
		}
		return lit, err
	}
	obj := make(map[string]any, len(keys))
	for _, a := range v.get.keys {
		k := a.key.text
		if !slices.Contains(keys, k) {
			return nil, errAt(a.key.p, abi.CodeUnknownField, x.name+" has no key "+a.key.raw, listHint(k, "keys", keys))
		}
		if _, dup := obj[k]; dup {
			return nil, errAt(a.key.p, abi.CodeType, "key "+a.key.raw+" given twice", "")
		}
		lit, ref, err := p.val(a.val)
		if err != nil {
			return nil, err
		}
		if ref != nil {
			return nil, errAt(a.val.p, abi.CodeType, "a key given as a value must be literal", "write the key's value itself")
		}
		switch lit.(type) {
		case string, int64, float64:
		default:
			return nil, errAt(a.val.p, abi.CodeType, x.name+" key "+a.key.raw+" needs a text or number value", "write "+a.key.raw+"=\"…\"")
		}
		if lit == "" {
			return nil, errAt(a.val.p, abi.CodeType, x.name+" key "+a.key.raw+" is empty", "write the key's value: "+a.key.raw+"=\"…\"")
		}
		obj[k] = lit
	}
	var missing []string
	for _, k := range keys {
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, errAt(v.p, abi.CodeType, x.name+"(…) is missing its key "+strings.Join(missing, ", "), "write "+x.name+"("+strings.Join(keys, "=…, ")+"=…)")
	}
	return obj, nil
}

// hostComparable refuses a value the host cannot compare a field with. A
// compound key (Entity(k=v, …), an object) means something only to the
// request compiler, which spreads it into a mapping's variables; compared
// on the host it is its own text, so = drops every row and != keeps every
// row, a silently wrong answer. A list of plain values is the host's
// membership test for = and != (status=[open, closed]); the ordering
// operators and ~ have no meaning for a list.
func hostComparable(field name, op string, v any, at pos) *abi.Error {
	hint := "pass it as a parameter of a capability that takes " + field.raw + ", or compare a key field with a plain value (" + field.raw + `="…")`
	switch l := v.(type) {
	case map[string]any:
		return errAt(at, abi.CodeType, field.raw+" is compared on the host after fetching, and a value given by its keys (Entity(k=…, …)) cannot be compared there", hint)
	case []any:
		if op != "=" && op != "!=" {
			return errAt(at, abi.CodeType, field.raw+" "+op+" needs one value; a list can only be tested with = or !=", "compare with one value")
		}
		for _, it := range l {
			switch it.(type) {
			case map[string]any, []any:
				return errAt(at, abi.CodeType, field.raw+" is compared on the host after fetching, and a list of it can hold only plain values", hint)
			}
		}
	}
	return nil
}

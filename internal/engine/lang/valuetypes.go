package lang

import (
	"fmt"
	"strconv"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// checkTyped checks a literal against the value types checkScalar leaves
// open: text (string, uuid), dates, entity references (by the target's id
// type) and array items. A wrong type is refused at plan time, naming the
// slot, the expected type and the value given, rather than sent to a
// backend that may store it as is.
func (p *planner) checkTyped(cat *catalog.Catalog, dom *catalog.Value, v any, at pos, what string) *abi.Error {
	return p.checkTypedDepth(cat, dom, v, at, what, 0)
}

// maxRefDepth bounds entity_ref chains (a ref to an entity whose id is a
// ref …), which a catalog could make circular.
const maxRefDepth = 4

func (p *planner) checkTypedDepth(cat *catalog.Catalog, dom *catalog.Value, v any, at pos, what string, depth int) *abi.Error {
	if dom == nil || v == nil || depth > maxRefDepth {
		return nil
	}
	if l, ok := v.([]any); ok {
		item := dom
		if dom.Type == "array" {
			if item = cat.ValueNamed(dom.ItemsRef); item == nil {
				return nil
			}
		}
		for _, it := range l {
			if _, nested := it.([]any); nested {
				continue
			}
			if err := p.checkTypedDepth(cat, item, it, at, what, depth+1); err != nil {
				return err
			}
			if item != dom {
				if err := p.checkScalar(item, it, at, what); err != nil {
					return err
				}
			}
		}
		return nil
	}
	bad := func(want, hint string) *abi.Error {
		return errAt(at, abi.CodeType, fmt.Sprintf("%s expects %s, got %s", what, want, p.describeAt(at, v)), hint)
	}
	switch dom.Type {
	case "string", "uuid":
		if _, ok := v.(string); !ok {
			return bad("text", fmt.Sprintf("quote it: %s=%q", what, p.describeAt(at, v)))
		}
	case "date":
		return checkDate(dom, v, bad)
	case "entity_ref":
		target := cat.EntityNamed(dom.Target)
		if target == nil || target.IDField == "" || target.FieldNamed(target.IDField) == nil {
			return nil
		}
		if len(target.KeyVars) > 1 {
			// A compound key is named by its parts ("owner/repo" or an
			// object); the compiler spreads and checks it (cml.splatScope).
			return nil
		}
		idDom := cat.ValueNamed(target.FieldNamed(target.IDField).ValueRef)
		if idDom == nil {
			return nil
		}
		if err := p.checkTypedDepth(cat, idDom, v, at, what, depth+1); err != nil {
			return refErr(err, dom.Target, idDom.Type)
		}
		if err := p.checkScalar(idDom, v, at, what); err != nil {
			return refErr(err, dom.Target, idDom.Type)
		}
	}
	return nil
}

// refErr says that the slot is a reference and to what.
func refErr(err *abi.Error, target, idType string) *abi.Error {
	e := *err
	e.Message += fmt.Sprintf(" (a reference to %s, whose id is %s)", target, article(idType))
	return &e
}

func article(t string) string {
	switch t {
	case "integer":
		return "an integer"
	case "":
		return "untyped"
	}
	return "a " + t
}

// dateLayouts are the textual dates a date slot accepts.
var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"}

func checkDate(dom *catalog.Value, v any, bad func(want, hint string) *abi.Error) *abi.Error {
	switch dom.ValueFormat {
	case "unix_sec", "unix_ms", "unix", "epoch", "epoch_ms":
		switch x := v.(type) {
		case int64:
			return nil
		case string:
			if isInteger(x) {
				return nil
			}
		}
		return bad("a Unix time (a whole number)", "")
	}
	s, ok := v.(string)
	if !ok {
		return bad("a date as text", `write a date like "2024-05-01" or "2024-05-01T12:00:00Z"`)
	}
	for _, l := range dateLayouts {
		if _, err := time.Parse(l, s); err == nil {
			return nil
		}
	}
	return bad("a date", `write a date like "2024-05-01" or "2024-05-01T12:00:00Z"`)
}

// checkID checks a literal id against the type of the entity's id field
// and returns the id to send. It owns the one coercion of an id: a whole
// number names a row of an entity whose id is text unambiguously (Plasm
// accepts Issue(42) for "42"), so it is handed on as that text, and the
// slot that receives the row (a text parameter, a reference to the
// entity) sees text, not a number its own check would refuse. The
// reverse, text for a numeric id, is left to the id field's type check.
func (p *planner) checkID(x ent, id any, at pos) (any, *abi.Error) {
	if s, ok := id.(string); ok && s == "" {
		// No row has an empty id; the request compiler refused it later
		// as a catalog-compile failure with no line (Issue("")).
		return nil, errAt(at, abi.CodeType, x.name+" id is empty", "pass the id of a row: "+x.name+"(\"…\")")
	}
	f := x.e.FieldNamed(idField(x.e))
	if f == nil || id == nil {
		return id, nil
	}
	if dom := x.cat.ValueNamed(f.ValueRef); dom != nil && (dom.Type == "string" || dom.Type == "uuid") {
		if n, ok := id.(int64); ok {
			if err := p.checkWholeID(x.name, n, at); err != nil {
				return nil, err
			}
			return strconv.FormatInt(n, 10), nil
		}
	}
	if err := p.checkValue(x.cat, f.ValueRef, id, at, x.name+" id"); err != nil {
		return nil, err
	}
	return id, nil
}

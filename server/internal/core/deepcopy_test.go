package core

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/plasmd/plasmd/internal/model/plan"
)

// fill sets every field reachable from v to a non-zero value (one element
// per slice and map, a JSON-like value in each interface), so a copy test
// covers fields added to plan types later without being edited.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Interface:
		v.Set(reflect.ValueOf(map[string]any{"k": []any{json.Number("7"), "s", true}}))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), depth+1)
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64:
		v.SetInt(3)
	case reflect.Bool:
		v.SetBool(true)
	}
}

// shared reports a pointer, slice or map reachable in both a and b at the
// same address.
func shared(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Pointer, reflect.Map:
		if a.IsNil() {
			return false
		}
		if a.UnsafePointer() == b.UnsafePointer() {
			return true
		}
		if a.Kind() == reflect.Pointer {
			return shared(a.Elem(), b.Elem())
		}
		it := a.MapRange()
		for it.Next() {
			if shared(it.Value(), b.MapIndex(it.Key())) {
				return true
			}
		}
	case reflect.Interface:
		return !a.IsNil() && shared(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() > 0 && a.UnsafePointer() == b.UnsafePointer() {
			return true
		}
		for i := range a.Len() {
			if shared(a.Index(i), b.Index(i)) {
				return true
			}
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if shared(a.Field(i), b.Field(i)) {
				return true
			}
		}
	}
	return false
}

func TestDeepCopyPlan(t *testing.T) {
	var p plan.Plan
	fill(reflect.ValueOf(&p).Elem(), 0)
	c := deepCopy(&p)
	if !reflect.DeepEqual(c, &p) {
		t.Fatalf("copy differs:\n%+v\n%+v", c, &p)
	}
	if shared(reflect.ValueOf(c), reflect.ValueOf(&p)) {
		t.Fatal("copy shares memory with the original")
	}
	c.Nodes[0].Args["only-in-copy"] = "changed"
	if _, ok := p.Nodes[0].Args["only-in-copy"]; ok {
		t.Fatal("changing the copy changed the original")
	}
}

package tape

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func TestRootAgreesWithDecode(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		err  error
	}{
		{"null", []byte{tagNull}, nil},
		{"object", []byte{tagObject, 1, 1, 'k', tagNumber, 1, '1'}, nil},
		{"trailing", []byte{tagNull, tagNull}, ErrMalformed},
		{"empty", nil, ErrMalformed},
		{"short string", []byte{tagString, 5, 'a'}, ErrMalformed},
		{"huge count", []byte{tagArray, 0xff, 0xff, 0x03}, ErrMalformed},
		{"bad tag", []byte{'?'}, ErrMalformed},
		{"short float", []byte{tagFloat, 1, 2}, ErrMalformed},
		{"bad varint", []byte{tagInt}, ErrMalformed},
		{"too deep", deepArrays(MaxDepth + 1), ErrTooDeep},
		{"deep enough", deepArrays(MaxDepth), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Root(tc.b)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Root error = %v, want %v", err, tc.err)
			}
			if _, derr := Decode(tc.b); !errors.Is(derr, tc.err) {
				t.Fatalf("Decode error = %v, want %v", derr, tc.err)
			}
		})
	}
}

func deepArrays(n int) []byte {
	var b []byte
	for range n {
		b = append(b, tagArray, 1)
	}
	return append(b, tagNull)
}

func TestViewGet(t *testing.T) {
	doc := `{"a":1,"b":{"c":[true,"x",null]},"a":"last","n":null}`
	tp, err := AppendJSON(nil, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	root, err := Root(tp)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key  string
		ok   bool
		kind Kind
		want any
	}{
		{"a", true, KindString, "last"},
		{"b", true, KindObject, map[string]any{"c": []any{true, "x", nil}}},
		{"n", true, KindNull, nil},
		{"missing", false, KindNull, nil},
	}
	for _, tc := range tests {
		v, ok := root.Get(tc.key)
		if ok != tc.ok || v.Kind() != tc.kind {
			t.Fatalf("Get(%q) = kind %d ok %v, want %d %v", tc.key, v.Kind(), ok, tc.kind, tc.ok)
		}
		got, err := v.Value()
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("Get(%q).Value() = %#v %v, want %#v", tc.key, got, err, tc.want)
		}
	}
	b, _ := root.Get("b")
	c, _ := b.Get("c")
	if items := c.Items(nil); len(items) != 3 || items[1].Kind() != KindString {
		t.Fatalf("items = %v", items)
	}
	if _, ok := c.Get("x"); ok {
		t.Fatal("Get on an array found a member")
	}
	if items := b.Items(nil); len(items) != 0 {
		t.Fatal("Items on an object returned elements")
	}
}

// FuzzView checks that Root accepts exactly what Decode accepts and that a
// view rebuilds the same value, member by member.
func FuzzView(f *testing.F) {
	f.Add([]byte{tagArray, 2, tagInt, 2, tagString, 1, 'x'})
	f.Add([]byte{tagObject, 2, 1, 'k', tagNumber, 1, '1', 1, 'k', tagFloat, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{tagObject, 1, 1, 'k', tagObject, 1, 0, tagNull})
	f.Fuzz(func(t *testing.T, b []byte) {
		want, derr := Decode(b)
		root, rerr := Root(b)
		if !reflect.DeepEqual(derr, rerr) {
			t.Fatalf("Root error %v, Decode error %v", rerr, derr)
		}
		if rerr != nil {
			return
		}
		got, err := root.Value()
		if err != nil || !same(got, want) {
			t.Fatalf("Value() = %#v %v, want %#v", got, err, want)
		}
		if obj, ok := want.(map[string]any); ok {
			for k, w := range obj {
				v, ok := root.Get(k)
				if !ok {
					t.Fatalf("Get(%q) missed", k)
				}
				if g, _ := v.Value(); !same(g, w) {
					t.Fatalf("Get(%q) = %#v, want %#v", k, g, w)
				}
			}
		}
		if arr, ok := want.([]any); ok && len(root.Items(nil)) != len(arr) {
			t.Fatalf("Items() has %d elements, want %d", len(root.Items(nil)), len(arr))
		}
	})
}

// same compares decoded values, treating NaN (which a 'd' tag can carry)
// as equal to itself.
func same(a, b any) bool { return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b) }

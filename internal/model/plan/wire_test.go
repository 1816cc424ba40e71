package plan_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/plan/plantest"
)

// goldenPlans are the plans the planner's golden files pin.
func goldenPlans(t testing.TB) []namedPlan {
	files, err := filepath.Glob("../../engine/lang/testdata/golden/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden plans: %v", err)
	}
	var out []namedPlan
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var g struct{ Plan *plan.Plan }
		if err := json.Unmarshal(b, &g); err != nil || g.Plan == nil {
			continue // an error golden, not a plan
		}
		out = append(out, namedPlan{filepath.Base(f), g.Plan})
	}
	return out
}

func TestWireRoundTrip(t *testing.T) {
	cases := append(samplePlans(), goldenPlans(t)...)
	cases = append(cases,
		namedPlan{"typed nil values", &plan.Plan{Nodes: []plan.Node{{
			Args:    map[string]any{"l": []any(nil), "m": map[string]any(nil), "e": []any{}, "o": map[string]any{}},
			Filters: []plan.Pred{{Value: []any{[]any(nil), map[string]any(nil)}}},
			View:    &plan.View{Steps: []plan.ViewStep{{Binds: []plan.ViewBind{{Value: []any(nil)}, {Value: map[string]any{"x": []any(nil)}}}}}},
		}}}},
		namedPlan{"numbers", &plan.Plan{Nodes: []plan.Node{{Args: map[string]any{
			"big": int64(1) << 62, "neg": -7, "f": 1e21, "g": 1e-7, "h": -0.5, "z": 0.0, "nz": -1.0,
			"num": json.Number("12.50"), "badnum": json.Number("x1"), "empty": json.Number(""),
			"f32": float32(1.25), "u8": uint8(7), "nan": []any{1.0, json.Number("2")},
			"struct": struct{ A int }{3}, "ptr": &plan.Bind{Var: "v"},
		}}}}},
		// encoding/json refuses NaN: AppendJSON writes null for it among
		// node values and leaves a view out altogether.
		namedPlan{"unencodable", &plan.Plan{Nodes: []plan.Node{{
			Args: map[string]any{"nan": nanValue(), "ch": make(chan int)},
			View: &plan.View{Name: "v", Outputs: []plan.ViewOutput{{Equals: nanValue()}}},
		}, {View: &plan.View{Name: "w", Relations: []plan.ViewRelation{{Equals: []any{make(chan int)}}}}}}}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := plantest.WireRoundTrip(c.plan); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func nanValue() any { z := 0.0; return z / z }

// A value nested deeper than the binary form carries is declined, and the
// engine sends that plan as JSON; just under the bound it round-trips.
func TestWireDepth(t *testing.T) {
	nest := func(n int) any {
		var v any = "leaf"
		for range n {
			v = []any{v}
		}
		return v
	}
	deep := &plan.Plan{Nodes: []plan.Node{{Filters: []plan.Pred{{Value: nest(plan.MaxWireValueDepth)}}}}}
	if _, err := deep.AppendBinary(nil); !errors.Is(err, plan.ErrWireUnencodable) {
		t.Fatalf("AppendBinary of a value %d deep: %v, want ErrWireUnencodable", plan.MaxWireValueDepth+1, err)
	}
	view := &plan.Plan{Nodes: []plan.Node{{View: &plan.View{Outputs: []plan.ViewOutput{{Equals: nest(plan.MaxWireValueDepth)}}}}}}
	if _, err := view.AppendBinary(nil); !errors.Is(err, plan.ErrWireUnencodable) {
		t.Fatalf("AppendBinary of a view value %d deep: %v, want ErrWireUnencodable", plan.MaxWireValueDepth+1, err)
	}
	ok := &plan.Plan{Nodes: []plan.Node{{Filters: []plan.Pred{{Value: nest(plan.MaxWireValueDepth - 1)}}}}}
	if err := plantest.WireRoundTrip(ok); err != nil {
		t.Fatal(err)
	}
}

// Malformed inputs are typed errors that say where and why.
func TestDecodeBinaryErrors(t *testing.T) {
	good, err := samplePlans()[0].plan.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	hdr := []byte{plan.WireTag, plan.WireVersion}
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "tag"},
		{"json", []byte(`{"nodes":[]}`), "tag"},
		{"version", []byte{plan.WireTag, 9}, "wire version 9"},
		{"truncated", good[:len(good)/2], "byte"},
		{"trailing", append(append([]byte{}, good...), 0), "bytes after the plan"},
		{"huge node count", cat(hdr, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}), "exceeds"},
		{"node count past input", cat(hdr, []byte{3}, make([]byte, 30)), "exceeds"},
		{"string past input", cat(hdr, []byte{0, 0, 0, 50, 'x'}), "length 50 exceeds"},
		{"varint overflow", cat(hdr, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}), "overflows"},
		{"bad flag", cat(hdr, []byte{2}, make([]byte, 12), []byte{7}, make([]byte, 40)), "flag byte 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := plan.DecodeBinary(tc.in)
			var we *plan.WireError
			if p != nil || !errors.As(err, &we) || !errors.Is(err, plan.ErrWire) {
				t.Fatalf("DecodeBinary: plan %v, error %v; want a *WireError", p != nil, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// FuzzPlanBinary decodes arbitrary bytes: a plan or a *WireError, never a
// panic; whatever decodes encodes again to the same plan, and that plan
// crosses JSON the same way.
func FuzzPlanBinary(f *testing.F) {
	for _, c := range append(samplePlans(), goldenPlans(f)...) {
		b, err := c.plan.AppendBinary(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{plan.WireTag, plan.WireVersion, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := plan.DecodeBinary(b)
		if err != nil {
			var we *plan.WireError
			if p != nil || !errors.As(err, &we) || we.Offset < 0 || we.Offset > len(b) {
				t.Fatalf("DecodeBinary: plan %v, error %#v", p != nil, err)
			}
			return
		}
		again, err := p.AppendBinary(nil)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		q, err := plan.DecodeBinary(again)
		if err != nil {
			t.Fatalf("decode the re-encoding: %v", err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("re-encoding changed the plan:\n%#v\n%#v", p, q)
		}
		if err := plantest.WireRoundTrip(p); err != nil {
			t.Fatal(err)
		}
	})
}

// The JSON answer of an older engine is what abi.Unmarshal reads; the
// binary form is told apart by its first byte, which no JSON text has.
func TestWireTagIsNotJSON(t *testing.T) {
	var v any
	if err := abi.Unmarshal([]byte{plan.WireTag}, &v); err == nil {
		t.Fatal("the wire tag decodes as JSON")
	}
	if strings.ContainsRune(" \t\r\n{[\"-0123456789tfn", rune(plan.WireTag)) {
		t.Fatal("the wire tag can start a JSON text")
	}
}

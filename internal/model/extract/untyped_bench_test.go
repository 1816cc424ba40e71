package extract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
)

// BenchmarkUntypedNumbers decodes 1,000 rows of untyped numbers (floats,
// integers, exponent forms); "json" decodes the same body with
// encoding/json alone, the baseline.
func BenchmarkUntypedNumbers(b *testing.B) {
	var body bytes.Buffer
	body.WriteByte('[')
	for i := range 1000 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"a":%d.5,"b":%d,"c":%de3,"d":1.%de19}`, i, i, i, i+1000)
	}
	body.WriteByte(']')
	spec := &Spec{Version: Version, Capability: "list", Read: true, Columns: []Column{
		{Name: "a", Path: []string{"a"}}, {Name: "b", Path: []string{"b"}}, {Name: "c", Path: []string{"c"}}, {Name: "d", Path: []string{"d"}},
	}}
	b.Run("apply", func(b *testing.B) {
		b.SetBytes(int64(body.Len()))
		for b.Loop() {
			if _, aerr := Apply(spec, &abi.DecodeRequest{Capability: "list", Status: 200}, body.Bytes(), Options{}); aerr != nil {
				b.Fatal(aerr)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.SetBytes(int64(body.Len()))
		for b.Loop() {
			dec := json.NewDecoder(bytes.NewReader(body.Bytes()))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNumberValue reads untyped numbers: everyday forms, and an
// integer beyond int64 written with an exponent (the form this reads
// exactly now); "parse" is strconv.ParseFloat on the same literals, the
// baseline.
func BenchmarkNumberValue(b *testing.B) {
	for _, set := range []struct {
		name string
		lits []json.Number
	}{
		{"common", []json.Number{"2.5", "12", "1e3", "-0.001", "123.456e2", "3.0"}},
		{"bigexp", []json.Number{"1.2345678901234567891e19"}},
	} {
		b.Run(set.name+"/cell", func(b *testing.B) {
			for b.Loop() {
				for _, n := range set.lits {
					_ = numberValue(n)
				}
			}
		})
		b.Run(set.name+"/parse", func(b *testing.B) {
			for b.Loop() {
				for _, n := range set.lits {
					_, _ = n.Float64()
				}
			}
		})
	}
}

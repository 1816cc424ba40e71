package wasmdiff

import (
	"os"
	"testing"

	"github.com/plasmd/plasmd/internal/runtime/wasmbulk"
	"github.com/plasmd/plasmd/internal/runtime/wasmdata"
	"github.com/plasmd/plasmd/internal/runtime/wasmdiff/oldbulk"
	"github.com/plasmd/plasmd/internal/runtime/wasmdiff/olddata"
	"github.com/plasmd/plasmd/internal/runtime/wasmdiff/oldmeter"
	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

// The old and new entry points on the engine, side by side in one run.
func BenchmarkEngine(b *testing.B) {
	engine, err := os.ReadFile("../enginewasm/engine.wasm")
	if err != nil {
		b.Fatal(err)
	}
	merged, _, _, err := wasmdata.Merge(engine, 64)
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		f    func() error
	}{
		{"Screen/old", func() error { return oldmeter.Screen(engine) }},
		{"Screen/new", func() error { return wasmmeter.Screen(engine) }},
		{"Instrument/old", func() error { _, err := oldmeter.Instrument(engine); return err }},
		{"Instrument/new", func() error { _, err := wasmmeter.Instrument(engine); return err }},
		{"Inline/old", func() error { _, _, err := oldbulk.Inline(merged, 256); return err }},
		{"Inline/new", func() error { _, _, err := wasmbulk.Inline(merged, 256); return err }},
		{"Merge/old", func() error { _, _, _, err := olddata.Merge(engine, 64); return err }},
		{"Merge/new", func() error { _, _, _, err := wasmdata.Merge(engine, 64); return err }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(engine)))
			for b.Loop() {
				if err := c.f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

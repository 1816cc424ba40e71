package wasmdiff

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmd/plasmd/internal/runtime/wasmbulk"
	"github.com/plasmd/plasmd/internal/runtime/wasmdata"
	"github.com/plasmd/plasmd/internal/runtime/wasmdiff/oldbulk"
	"github.com/plasmd/plasmd/internal/runtime/wasmdiff/olddata"
	"github.com/plasmd/plasmd/internal/runtime/wasmdiff/oldmeter"
	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// bulkBounds are the bounds Inline is compared at: the engine's, the
// cap, and a small one.
var bulkBounds = []uint32{256, wasmbulk.MaxLen, 16}

// compare runs every entry point, old and new, on m and fails on any
// difference in output; it reports how many error messages of Inline and
// Merge differ (their classes must not).
func compare(t *testing.T, m []byte) (msgDiffs int) {
	t.Helper()
	if o, n := oldmeter.Screen(m), wasmmeter.Screen(m); errText(o) != errText(n) {
		t.Fatalf("Screen: old %v, new %v", o, n)
	}
	oi, oerr := oldmeter.Instrument(m)
	ni, nerr := wasmmeter.Instrument(m)
	if errText(oerr) != errText(nerr) || !bytes.Equal(oi, ni) {
		t.Fatalf("Instrument: old %d bytes %v, new %d bytes %v", len(oi), oerr, len(ni), nerr)
	}
	for _, v := range [][]byte{m, ni} {
		if o, n := oldmeter.Verify(v), wasmmeter.Verify(v); errText(o) != errText(n) {
			t.Fatalf("Verify: old %v, new %v", o, n)
		}
	}
	for _, bound := range bulkBounds {
		ob, ost, oerr := oldbulk.Inline(m, bound)
		nb, nst, nerr := wasmbulk.Inline(m, bound)
		if !bytes.Equal(ob, nb) || ost != oldbulk.Stats(nst) || (oerr == nil) != (nerr == nil) ||
			errors.Is(oerr, oldbulk.ErrMalformed) != errors.Is(nerr, wasmbulk.ErrMalformed) ||
			errors.Is(oerr, oldbulk.ErrUnsupported) != errors.Is(nerr, wasmbulk.ErrUnsupported) {
			t.Fatalf("Inline(%d): old %d bytes %+v %v, new %d bytes %+v %v", bound, len(ob), ost, oerr, len(nb), nst, nerr)
		}
		if errText(oerr) != errText(nerr) {
			msgDiffs++
			t.Logf("Inline(%d) message: old %v, new %v", bound, oerr, nerr)
		}
	}
	for _, gap := range []int{0, 64, 4096} {
		ob, obf, oaf, oerr := olddata.Merge(m, gap)
		nb, nbf, naf, nerr := wasmdata.Merge(m, gap)
		if !bytes.Equal(ob, nb) || obf != nbf || oaf != naf || (oerr == nil) != (nerr == nil) ||
			errors.Is(oerr, olddata.ErrMalformed) != errors.Is(nerr, wasmdata.ErrMalformed) ||
			errors.Is(oerr, olddata.ErrUnsupported) != errors.Is(nerr, wasmdata.ErrUnsupported) {
			t.Fatalf("Merge(%d): old %d bytes %d→%d %v, new %d bytes %d→%d %v", gap, len(ob), obf, oaf, oerr, len(nb), nbf, naf, nerr)
		}
		if errText(oerr) != errText(nerr) {
			msgDiffs++
			t.Logf("Merge(%d) message: old %v, new %v", gap, oerr, nerr)
		}
	}
	return msgDiffs
}

// corpus is the engine, the ledger module, and every file below
// $WASMDIFF_CORPUS (modules recorded from a test run of the old packages).
func corpus(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for _, p := range []string{"../enginewasm/engine.wasm", "../../../demo/catalogs/ledger/module.wasm"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
	}
	if dir := os.Getenv("WASMDIFF_CORPUS"); dir != "" {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			out[p] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestSameAsBefore: the engine, the ledger module and the recorded
// corpus give the same results old and new, and so does every module
// derived from them by the engine's own preparation (merged, inlined).
func TestSameAsBefore(t *testing.T) {
	msgs, n := 0, 0
	for name, m := range corpus(t) {
		msgs += compare(t, m)
		n++
		if merged, _, _, err := wasmdata.Merge(m, 64); err == nil {
			msgs += compare(t, merged)
			n++
			if inl, _, err := wasmbulk.Inline(merged, 256); err == nil {
				msgs += compare(t, inl)
				n++
			}
		}
		_ = name
	}
	t.Logf("%d modules compared; %d Inline/Merge error messages differ in text (same class)", n, msgs)
}

func FuzzSameAsBefore(f *testing.F) {
	for _, m := range corpus(f) {
		if len(m) < 64<<10 {
			f.Add(m)
		}
	}
	f.Fuzz(func(t *testing.T, m []byte) { compare(t, m) })
}

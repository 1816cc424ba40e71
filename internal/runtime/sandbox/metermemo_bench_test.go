package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
)

// BenchmarkStartNewProcess is BenchmarkStart's warm case as a new process
// sees it: the process-wide memos (meteredBytes, screened, validated) are
// forgotten before each start, so the engine is screened, validated and
// instrumented again unless the meter memo on disk (metermemo.go) has it.
// "memo" reads it; "nomemo", the baseline in the same run, is a host
// without it (what every start paid before). The executable's hash, ~60 ms
// once per real process, is cached across iterations here.
func BenchmarkStartNewProcess(b *testing.B) {
	ctx := context.Background()
	sum := sha256.Sum256(enginewasm.Wasm)
	digest := hex.EncodeToString(sum[:])
	dir := b.TempDir()
	start := func(b *testing.B, memo bool) {
		b.StopTimer()
		meteredBytes.Delete(digest)
		screened.Delete(digest)
		validated.Delete(digest)
		b.StartTimer()
		h, err := New(ctx, Config{CacheDir: dir, Spares: -1})
		if err != nil {
			b.Fatal(err)
		}
		if !memo {
			h.memo = nil
		}
		m, err := h.Module(ctx, enginewasm.Wasm)
		if err != nil || !m.Metered {
			b.Fatalf("engine: %v (metered %v)", err, m != nil && m.Metered)
		}
		b.StopTimer()
		if err := h.Close(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	start(b, true) // populate the compilation cache and the memo
	for _, v := range []struct {
		name string
		memo bool
	}{{"nomemo", false}, {"memo", true}} {
		b.Run(v.name, func(b *testing.B) {
			for range b.N {
				start(b, v.memo)
			}
		})
	}
}

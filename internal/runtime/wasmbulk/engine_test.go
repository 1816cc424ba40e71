package wasmbulk_test

import (
	"bytes"
	"testing"

	"github.com/plasmd/plasmd/internal/runtime/enginewasm"
	"github.com/plasmd/plasmd/internal/runtime/wasmbulk"
	"github.com/plasmd/plasmd/internal/runtime/wasmdata"
	"github.com/plasmd/plasmd/internal/runtime/wasmmeter"
)

// TestEngineInlined: the engine the server loads is the merged engine
// with its Go struct copies and zeroings inlined (some 1,500 sites), and
// the meter instruments and verifies it as it is: it runs metered.
func TestEngineInlined(t *testing.T) {
	merged, _, _, err := wasmdata.Merge(enginewasm.Wasm, enginewasm.MaxDataGap)
	if err != nil {
		t.Fatal(err)
	}
	out, st, err := wasmbulk.Inline(merged, enginewasm.MaxInlineBulk)
	if err != nil {
		t.Fatal(err)
	}
	if st.Copies < 500 || st.Fills < 100 {
		t.Fatalf("only %+v inlined in the engine", st)
	}
	if !bytes.Equal(out, enginewasm.Module()) {
		t.Fatal("enginewasm.Module is not the merged engine inlined")
	}
	t.Logf("%+v; %d → %d bytes", st, len(merged), len(out))
	metered, err := wasmmeter.Instrument(out)
	if err != nil {
		t.Fatalf("instrument: %v", err)
	}
	if err := wasmmeter.Verify(metered); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

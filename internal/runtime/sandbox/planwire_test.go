package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/plasmd/plasmd/demo"
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

var noWireEngine struct {
	once sync.Once
	wasm []byte
	err  error
}

// noWireEngineWasm builds the engine without its plasm_plan_wire export
// (tag plasmd_noplanwire), once per test process: to a host it is an
// engine from before the binary plan form.
func noWireEngineWasm(t *testing.T) []byte {
	t.Helper()
	needGuests(t)
	noWireEngine.once.Do(func() {
		dir, err := os.MkdirTemp("", "nowire-")
		if err != nil {
			noWireEngine.err = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "engine.wasm")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-tags", "plasmd_noplanwire", "-o", out, "../../../guest/cmd/engine")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			noWireEngine.err = errors.New(err.Error() + "\n" + string(msg))
			return
		}
		noWireEngine.wasm, noWireEngine.err = os.ReadFile(out)
	})
	if noWireEngine.err != nil {
		t.Fatal(noWireEngine.err)
	}
	return noWireEngine.wasm
}

// planAnswer plans req the way a host before the binary form did (no
// PlanWire in the header when wire is 0, JSON decoded with abi.Unmarshal)
// or asking for wire, and returns the answer's first byte and plan.
func planAnswer(t *testing.T, e *Engine, req *abi.PlanRequest, wire int) (byte, *plan.Plan) {
	t.Helper()
	head := *req
	head.PlanWire = wire
	frame := abi.AppendFrameRaw(nil, abi.AppendPlanHeader(nil, &head), nil)
	var (
		first byte
		p     *plan.Plan
	)
	err := e.Tenant.do(context.Background(), abi.ExportPlan, needsOf(req.Entries), frame, nil, func(b []byte) error {
		first = b[0]
		if wire == 0 {
			p = &plan.Plan{}
			return abi.Unmarshal(b, p)
		}
		var err error
		p, err = decodePlan(b)
		return err
	})
	if err != nil {
		t.Fatalf("plan %q (wire %d): %v", req.Program, wire, err)
	}
	return first, p
}

// TestPlanWireCompat plans the same programs every way a host and an
// engine of either side of the binary plan form can meet: a new host asks
// a new engine for the binary form and gets it; an old host (no PlanWire)
// gets JSON from a new engine; a new host does not ask an engine without
// plasm_plan_wire and reads its JSON. Every way yields the same plan.
func TestPlanWireCompat(t *testing.T) {
	ctx := context.Background()
	cur := demoEngine(t, nil, "wire-new", DefaultLimits())
	old := noWireEngineWasm(t)
	h := cur.host
	m, err := h.Module(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	cats, err := demo.LoadCatalogs("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	prev := NewEngine(h.Tenant("wire-old", TenantSpec{Module: m, Loads: CatalogLoads(cats), Limits: DefaultLimits()}))
	t.Cleanup(prev.Close)
	if w := cur.planWire(); w != plan.WireVersion {
		t.Fatalf("host asks the committed engine for wire %d, want %d", w, plan.WireVersion)
	}
	if w := prev.planWire(); w != 0 {
		t.Fatalf("host asks an engine without %s for wire %d, want 0", abi.ExportPlanWire, w)
	}
	for _, program := range []string{
		"a = Issue{status=\"open\"}.limit(5)\nb = a.comments[id,body]\nb, a[id,title]",
		`Issue("iss-1")`,
		`Issue{status=["open", "closed"], priority>2}.sort(title).limit(3)[id, title]`,
		"Issue.create(project_id=\"p1\", title=\"caf\u00e9 <&> \\\"q\\\"\", body=<<MD\nline\nMD)",
	} {
		req := &abi.PlanRequest{Program: program, Entries: []string{"tracker"}}
		first, want := planAnswer(t, cur, req, 0)
		if first != '{' {
			t.Fatalf("%q: an old host got an answer starting %#x, want JSON", program, first)
		}
		if first, got := planAnswer(t, cur, req, plan.WireVersion); first != plan.WireTag || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: asked for the wire form, first byte %#x, plan equal to JSON's: %v", program, first, reflect.DeepEqual(got, want))
		}
		for name, e := range map[string]*Engine{"new engine": cur, "engine without the wire export": prev} {
			got, err := e.PlanWith(ctx, req, nil)
			if err != nil {
				t.Fatalf("%s: %q: %v", name, program, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %q: PlanWith gave\n%+v\nwant\n%+v", name, program, got, want)
			}
		}
	}
}

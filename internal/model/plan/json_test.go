package plan_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmd/plasmd/internal/model/plan"
)

func same(t *testing.T, name string, p *plan.Plan) {
	t.Helper()
	want, err := json.Marshal(p)
	if err != nil {
		return // NaN or Inf: not a value a planner produces, and not JSON
	}
	if got := p.AppendJSON(nil); !bytes.Equal(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", name, got, want)
	}
}

// Every golden plan the planner's tests pin encodes byte for byte as
// encoding/json would encode it.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	files, err := filepath.Glob("../../engine/lang/testdata/golden/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden plans: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var p plan.Plan
		if err := json.Unmarshal(b, &p); err != nil {
			continue // an error golden, not a plan
		}
		same(t, filepath.Base(f), &p)
	}
	for _, c := range samplePlans() {
		same(t, c.name, c.plan)
	}
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("label", "x", int64(1), 1.5)
	f.Add("\xff\u2028<", "\x00", int64(-1), 1e-7)
	f.Fuzz(func(t *testing.T, s1, s2 string, i int64, x float64) {
		same(t, "fuzz", &plan.Plan{
			Nodes:   []plan.Node{{Op: s1, Args: map[string]any{s2: s1, "i": i, "x": x}, Filters: []plan.Pred{{Field: s2, Value: x}}}},
			Roots:   []plan.Root{{Label: s2}},
			Summary: s1,
		})
	})
}

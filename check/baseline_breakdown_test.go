package check

import (
	"bytes"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/sim"
)

// A one-seed report of a pool or a layered policy (pool_members, layers)
// reads back as a baseline, its breakdowns with it; a row with an unknown
// field is still refused.
func TestReadBaselineWithBreakdowns(t *testing.T) {
	r := simResult("p", 2, 2, 3)
	r.Counters = sim.Counters{{Name: "pool.a.requests", Value: 3}, {Name: "pool.a.failed", Value: 1}, {Name: "layers.outer.attempts", Value: 2}}
	var b bytes.Buffer
	if err := report.Write(&b, report.JSON, &report.Comparison{Scenario: "s", Seed: 1, Results: []sim.Result{r}}); err != nil {
		t.Fatal(err)
	}
	doc, err := ReadBaseline("base.json", bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.PoolMembers) != 1 || doc.PoolMembers[0].Counts["failed"] != 1 || len(doc.Layers) != 1 || doc.Layers[0].Name != "outer" {
		t.Errorf("breakdowns read back as %+v, %+v", doc.PoolMembers, doc.Layers)
	}
	bad := strings.Replace(b.String(), `"name": "a",`, `"name": "a", "extra": 1,`, 1)
	if _, err := ReadBaseline("base.json", strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), `unknown field "extra"`) {
		t.Errorf("a row with an unknown field: %v", err)
	}
}

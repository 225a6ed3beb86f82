package check

import (
	"context"
	"testing"

	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
)

// A check's plan is one group per scenario (no seeds without
// expectations), then one per baseline; its report measures the
// expectations on those runs and compares the baselines with theirs, the
// single-seed one as 'compare --format json' prints it.
func TestPlanRunsAndReport(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	with, err := f.Lookup(f.Default)
	if err != nil || len(with.Expect) == 0 {
		t.Fatalf("the default scenario has no expectations (%v)", err)
	}
	bare := *with
	bare.Expect = nil
	without := &bare
	results, err := runs.One(context.Background(), with, 3)
	if err != nil {
		t.Fatal(err)
	}
	c := report.Comparison{Scenario: with.Name, Seed: 3, Results: results, Metrics: with.Metrics()}
	doc := c.JSON()
	b, err := NewBaseline("base.json", &doc, nil, f)
	if err != nil {
		t.Fatal(err)
	}
	if (&Plan{Scenarios: []*scenarios.Scenario{without}}).Empty() == false {
		t.Error("a plan of a scenario without expectations is not empty")
	}
	plan := NewPlan([]*scenarios.Scenario{with, without}, 0, []Baseline{b}, Tolerances{})
	groups := plan.Runs().Groups
	if len(groups) != 3 || groups[0].Seeds != Seeds(with, 0) || groups[1].Seeds != 0 ||
		groups[2].First != 3 || groups[2].Seeds != 1 || groups[2].Label != "baseline base.json" {
		t.Fatalf("groups %+v", groups)
	}
	res, err := runs.Execute(context.Background(), plan.Runs(), runs.Mode{})
	if err != nil {
		t.Fatal(err)
	}
	rep := plan.Report(res)
	if len(rep.Checks) != len(with.Expect) || len(rep.Baseline) == 0 {
		t.Fatalf("%d checks, %d baseline changes; want %d checks and some", len(rep.Checks), len(rep.Baseline), len(with.Expect))
	}
	if _, worse := rep.Failures(); worse != 0 {
		t.Errorf("the same runs as the baseline's: %d metrics worse", worse)
	}
}

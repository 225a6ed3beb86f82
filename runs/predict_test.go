package runs

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/scenarios"
)

// The pilot's prediction against what runs do, on every built-in scenario
// and the hedging example scaled to 2000 operations or more: a pilot at
// full size predicts the events of its seed exactly, and one scaled down
// to a tenth within 2× of them, but for the kinds docs/scenarios.md says
// cannot be scaled, whose estimate keeps its bound. BenchmarkEstimate
// compares the predicted time on large runs.
func TestPilotPredictsEvents(t *testing.T) {
	ops := 2000
	if racetest.Enabled {
		ops = 1000
	}
	unscalable := regexp.MustCompile(`^(the contention server|the rate-limit server|pool server: a cooldown after a count of failures)`)
	hedging, err := scenarios.Load("../docs/examples/hedging.yaml")
	if err != nil {
		t.Fatal(err)
	}
	all := scaledBuiltins(t, ops, 100_000)
	for _, s := range hedging.Scenarios {
		all = append(all, scaleTo(t, s, ops))
	}
	for _, s := range all {
		if racetest.Enabled && EstimateOf(s, 1).Events > 2e6 {
			continue // the plain go test runs it
		}
		events := 0
		for _, n := range measure(t, s).events {
			events += n
		}
		if events <= PilotEvents { // else it would stop past them
			if whole := runPilot(t.Context(), s, s.Operations(), PilotEvents); whole.Events != float64(events) || whole.Factor != 1 {
				t.Errorf("%s: a pilot at full size predicts %+v, want the %d events of its seed", s.Name, whole, events)
			}
		}
		small := runPilot(t.Context(), s, s.Operations()/10, PilotEvents)
		ratio := small.Events / float64(events)
		t.Logf("%s: %d operations, %d events; pilot at %.3g: %.4g events (%.2f×) %s", s.Name, s.Operations(), events, small.Factor, small.Events, ratio, small.Why)
		if small.Why != "" {
			if !unscalable.MatchString(small.Why) {
				t.Errorf("%s: no scaled pilot: %s", s.Name, small.Why)
			}
			continue
		}
		if ratio > 2 || ratio < 0.5 {
			t.Errorf("%s (%d operations): a pilot at %.3g scale predicts %.4g events, not within 2× of the %d measured", s.Name, s.Operations(), small.Factor, small.Events, events)
		}
	}
}

// The estimate's message gives the bound, then the prediction and its
// time, or the bound's time and why there is no prediction.
func TestEstimateString(t *testing.T) {
	bound := Estimate{Runs: 1, Events: 3.1e7, Cost: 3.1e7 * 400, Workers: 1, NoPilot: "the contention server cannot be scaled"}
	if got, want := bound.String(), "up to 3.1e+07 engine events in 1 runs, at most ~12.4s on 1 core(s) (from the bound: the contention server cannot be scaled), up to 0 B of memory"; got != want {
		t.Errorf("without a pilot:\n%s\nwant\n%s", got, want)
	}
	pilot := bound
	pilot.Predicted, pilot.PredictedCost, pilot.PilotFactor = 1.4e7, 1.4e7*400, 0.01
	if got, want := pilot.String(), "up to 3.1e+07 engine events in 1 runs, 1.4e+07 predicted by a pilot run at 1/100 scale, ~5.6s on 1 core(s), up to 0 B of memory"; got != want {
		t.Errorf("with a pilot:\n%s\nwant\n%s", got, want)
	}
	if pilot.Time() != 5600*time.Millisecond || bound.Time() != 12400*time.Millisecond {
		t.Errorf("times %v and %v, want the prediction's 5.6s and the bound's 12.4s", pilot.Time(), bound.Time())
	}
}

// Plan.Predict multiplies each group's pilot by its seeds (and a Plot
// group's timeline run), and a shard's by the seeds it owns.
func TestPlanPredict(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Lookup("long-outage")
	if err != nil {
		t.Fatal(err)
	}
	one := RunPilot(t.Context(), s).Events
	plan := Plan{Groups: []Group{{Scenario: s, Seeds: 4, Plot: true}}}
	if e := plan.Predict(t.Context(), plan.Work(), nil); e.Predicted != 5*one || e.PilotFactor != 1 || e.NoPilot != "" {
		t.Errorf("4 seeds and a timeline: %+v, want %g events", e, 5*one)
	}
	sh := Shard{Index: 1, Count: 2}
	est, _, _ := plan.ShardWork(sh)
	if e := plan.Predict(t.Context(), est, &sh); e.Predicted != 2*one {
		t.Errorf("shard 1/2: %g events, want %g", e.Predicted, 2*one)
	}
	if racetest.Enabled {
		return // hundreds of pilots
	}
	// A sweep of many points pilots each, up to PlanPilotEvents in all.
	var many Plan
	for range int(PlanPilotEvents/one) + 2 {
		many.Groups = append(many.Groups, Group{Scenario: s.Clone(), Seeds: 1})
	}
	if e := many.Predict(t.Context(), many.Work(), nil); e.Predicted != 0 || !strings.Contains(e.NoPilot, "the pilots of the plan ran past 4e+06 events") {
		t.Errorf("%d groups: %g events predicted, %q", len(many.Groups), e.Predicted, e.NoPilot)
	}
}

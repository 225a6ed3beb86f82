package runs

import (
	"regexp"
	"testing"

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
		events := 0
		for _, n := range measure(t, s).events {
			events += n
		}
		whole := runPilot(t.Context(), s, s.Operations())
		switch {
		case whole.Why != "" && events <= PilotEvents:
			t.Errorf("%s: no pilot at full size (%s), for %d events", s.Name, whole.Why, events)
		case whole.Why == "" && (whole.Events != float64(events) || whole.Factor != 1):
			t.Errorf("%s: a pilot at full size predicts %+v, want the %d events of its seed", s.Name, whole, events)
		}
		small := runPilot(t.Context(), s, s.Operations()/10)
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

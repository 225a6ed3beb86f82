package runs

import (
	"testing"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// The events bound holds for each policy alone against an adaptive-LIFO
// queue, which decides a waiting request again at each pick that could
// take it: metastable-lifo's no-retries made 9 events an attempt, 2.3
// times the bound of 3 an attempt.
func TestEstimateBoundsLIFOPerPolicy(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s0, err := f.Lookup("metastable-lifo")
	if err != nil {
		t.Fatal(err)
	}
	ops := 8000
	if racetest.Enabled {
		ops = 4000
	}
	s := scaleTo(t, s0, ops)
	for p := range s.Policies {
		r, err := sim.Run(s.Config(p, s.Seed))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s, %d operations: %.1f events an attempt", s.Policies[p].Name, s.Operations(), float64(r.Events)/float64(r.Attempts))
		alone := *s
		alone.Policies = s.Policies[p : p+1]
		if bound := EstimateOf(&alone, 1).Events; float64(r.Events) > bound {
			t.Errorf("%s: %d events (%.1f an attempt), over its bound of %.0f", s.Policies[p].Name, r.Events, float64(r.Events)/float64(r.Attempts), bound)
		}
	}
}

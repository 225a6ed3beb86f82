package runs

import (
	"testing"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/sweep"
)

// The events bound holds for each policy alone on the shared-key
// scenarios, header pacers too, as the sessions grow: the pacer hands
// each waiting request a ticket and wakes it once, at its start. (When it
// woke every held request together when the next share fit and held all
// but one again, shared-key-tokens' header-pacer at 2,560 sessions made
// 449 events an attempt, 10,106,186 in all, against a bound of about
// 3.2e6 for the policy.)
func TestEstimateBoundsPacerPerPolicy(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	param, err := sweep.Parse("clients=1")
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int64{2560, 10240} // clients (sessions), as --param clients=N
	if racetest.Enabled {
		sizes = sizes[:1]
	}
	for _, name := range []string{"shared-key-tokens", "shared-key-agents"} {
		s0, err := f.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, clients := range sizes {
			s, err := sweep.Apply(s0, []sweep.Param{param}, []int64{clients})
			if err != nil {
				t.Fatal(err)
			}
			for p := range s.Policies {
				r, err := sim.Run(s.Config(p, s.Seed))
				if err != nil {
					t.Fatal(err)
				}
				alone := *s
				alone.Policies = s.Policies[p : p+1]
				bound := EstimateOf(&alone, 1).Events
				t.Logf("%s/%s, %d operations: %d events (%.1f an attempt, %.2f an operation), %.3f of its bound", name, s.Policies[p].Name, s.Operations(), r.Events, float64(r.Events)/float64(max(r.Attempts, 1)), float64(r.Events)/float64(s.Operations()), float64(r.Events)/bound)
				if float64(r.Events) > bound {
					t.Errorf("%s/%s (%d operations): %d events, over its bound of %.0f", name, s.Policies[p].Name, s.Operations(), r.Events, bound)
				}
			}
		}
	}
}

package runs

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// The estimate is an upper bound of the events the engine processes.
func TestEstimateBoundsEvents(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Scenarios {
		if s.Operations() > 100_000 {
			continue // huge-burst: checked against its measured count below
		}
		var events atomic.Int64 // each is called from worker goroutines
		if err := Seeds(t.Context(), s, s.Seed, 2, 0, func(_, _ int, r *sim.Result) { events.Add(int64(r.Events)) }); err != nil {
			t.Fatal(err)
		}
		e := EstimateOf(s, 2)
		if e.Events < float64(events.Load()) {
			t.Errorf("%s: estimate %g events < %d processed", s.Name, e.Events, events.Load())
		}
		if e.Runs != int64(2*len(s.Policies)) {
			t.Errorf("%s: %d runs, want %d", s.Name, e.Runs, 2*len(s.Policies))
		}
	}
	// huge-burst: 13,933,558 events (docs/performance.md); 10 attempts of
	// 1,000,000 clients bound it by 1e6 × (1 + 3 × 10).
	s, err := f.Lookup("huge-burst")
	if err != nil {
		t.Fatal(err)
	}
	e := EstimateOf(s, 1)
	if e.Events != 31e6 || e.Memory < 100e6 || e.Refusal() != "" || e.Long() {
		t.Errorf("huge-burst: %+v, refusal %q", e, e.Refusal())
	}
	// --seeds 100000 on it is refused.
	if r := EstimateOf(s, 100_000).Refusal(); !strings.Contains(r, "engine events, over the limit") {
		t.Errorf("huge-burst × 100000 seeds: refusal %q", r)
	}
}

package report

import (
	"context"
	"testing"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// Every built-in scenario, its operations split over three priorities
// (its workload's own levels where it gives some): for every count a run
// reports by priority, the levels' values add up to the run's, and the
// last completion is the latest of the levels'.
func TestMetricsByPrioritySumToTheRun(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, orig := range f.Scenarios {
		if racetest.Enabled && orig.Operations() > 1000 {
			continue
		}
		s := *orig
		if s.PriorityLevels() == nil {
			s.Priorities = sim.PriorityShares{{Priority: sim.PriorityCritical, Share: 1.0 / 3}, {Priority: sim.PrioritySheddable, Share: 1.0 / 3}}
		}
		levels := s.PriorityLevels()
		set := s.Metrics()
		results, err := runs.One(context.Background(), &s, s.Seed)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		for i := range results {
			r := &results[i]
			if r.Clients >= 3 && len(r.ByPriority) != len(levels) {
				t.Errorf("%s/%s: %d operations in %d levels, want %d", s.Name, r.Policy, r.Clients, len(r.ByPriority), len(levels))
			}
			for _, m := range set {
				if _, _, by := m.Level(); by || (m.Unit != metrics.Count && m != metrics.LastCompletion) {
					continue
				}
				total, ok := m.Value(r)
				if !ok {
					continue
				}
				var sum float64
				for _, p := range levels {
					b, ok := metrics.ByPriority(p, m)
					if !ok {
						break // a count the run's Result does not hold (a counter)
					}
					if v, ok := b.Value(r); ok && m == metrics.LastCompletion {
						sum = max(sum, v)
					} else if ok {
						sum += v
					}
					checked++
				}
				if _, by := metrics.ByPriority(levels[0], m); by && sum != total {
					t.Errorf("%s/%s: %s by priority adds up to %v, the run's is %v", s.Name, r.Policy, m.Name, sum, total)
				}
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d values by priority checked", checked)
	}
}

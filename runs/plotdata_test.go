package runs

import (
	"context"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// A run far longer than MaxTimelineBuckets buckets must coarsen the bucket
// (by doubling) instead of growing without bound, and lose no request.
func TestTimelineCoarsensLongRuns(t *testing.T) {
	overloaded := sim.Rejection{Status: 529, Class: policies.Capacity}
	cfg := sim.Config{Seed: 1, Workload: sim.Burst{Clients: 3},
		Server: &sim.CapacityWindows{ResponseTime: sim.Fixed(time.Millisecond),
			Phases: []sim.Phase{{Admit: 1, Window: time.Millisecond, Reject: overloaded}}},
		Policy: sim.Policy{Name: "slow", Rules: policies.Policy{
			Backoff: policies.Constant{Wait: time.Hour}, MaxAttempts: 3}}}
	tl, r, err := RecordTimeline(cfg, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Admitted) > MaxTimelineBuckets {
		t.Fatalf("%d buckets, want at most %d", len(tl.Admitted), MaxTimelineBuckets)
	}
	if tl.Bucket <= time.Millisecond || tl.Bucket%time.Millisecond != 0 {
		t.Fatalf("bucket %v: want a multiple of 1ms, coarsened", tl.Bucket)
	}
	sum := 0
	for i := range tl.Admitted {
		sum += tl.Admitted[i] + tl.Rejected[i]
	}
	if sum != r.Attempts {
		t.Fatalf("timeline holds %d requests, the run sent %d", sum, r.Attempts)
	}
}

// What the plots keep of the latencies does not grow with the seeds: one
// histogram per policy, within its fixed bound, counting every completion
// of every seed (there is no cap on the seeds pooled).
func TestPlotDataLatencyMemoryIsBounded(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	counters := func(k int) (kept int, counted, completed uint64) {
		d, err := CollectPlotData(context.Background(), s, s.Seed, k, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Completions) != len(s.Policies) {
			t.Fatalf("%d histograms for %d policies", len(d.Completions), len(s.Policies))
		}
		for p, h := range d.Completions {
			if h.Counters() > stats.MaxHistogramCounters {
				t.Fatalf("policy %d keeps %d counters, over the bound %d", p, h.Counters(), stats.MaxHistogramCounters)
			}
			kept += h.Counters()
			counted += h.Count()
			vals, _ := d.Runs.Values(p, metrics.Completed)
			for _, v := range vals {
				completed += uint64(v)
			}
		}
		return kept, counted, completed
	}
	few, countedFew, completedFew := counters(10)
	many, countedMany, completedMany := counters(1500)
	if countedFew != completedFew || countedMany != completedMany {
		t.Fatalf("histograms count %d and %d completions; the runs completed %d and %d", countedFew, countedMany, completedFew, completedMany)
	}
	// overload-burst's latencies span a few octaves: 150 times the seeds
	// may touch another octave or two, not 150 times the memory.
	if many > 2*few || many > len(s.Policies)*stats.MaxHistogramCounters {
		t.Fatalf("%d counters for 10 seeds, %d for 1500", few, many)
	}
}

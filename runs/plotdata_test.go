package runs

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
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

package plot

import (
	"context"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// No timeline of a built-in scenario (but the giant ones) draws more
// served work in a bucket than the server can serve in it: the capacity
// per bucket, plus one request. A queue's bars are its workers' time in
// the bucket over the mean service (runs.Timeline.Served): at most the
// workers times the bucket over the mean service, which is the capacity
// per bucket, where the workers change within the bucket the larger of
// the two (the one added request is only float rounding there). Capacity
// windows admit at most their number per window, and the default bucket
// is the window, starting at 0 as the windows do; a bucket coarsened to
// several windows holds as many. The one request to spare is a window
// whose phase changes inside a bucket. Left out: a key's rate limit,
// whose bucket lets a minute's worth of requests through at once, above
// the rate the line draws; and a pool (stability-sim-metastable), whose
// members' work is still drawn when it arrives.
func TestServedNeverAboveCapacity(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	queues, checked := 0, 0
	for _, s := range f.Scenarios {
		if s.Operations() > 20_000 || (racetest.Enabled && s.Operations() > 1000) {
			continue
		}
		_, key := s.Server.(sim.KeyLimiter)
		_, pool := s.Server.(sim.MemberModel)
		if key || pool {
			continue
		}
		d, err := runs.CollectPlotData(context.Background(), s, s.Seed, 1, runs.DefaultBucket(s.Server), nil)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		steps, _ := capacitySteps(d.Server, d.Timelines[0].Bucket)
		if len(steps) == 0 {
			continue
		}
		if _, ok := s.Server.(sim.ServiceModel); ok {
			queues++
		}
		for _, tl := range d.Timelines {
			for i := range tl.Buckets() {
				b := tl.Bucket
				c := max(capacityAt(steps, time.Duration(i)*b), capacityAt(steps, time.Duration(i+1)*b-1))
				if got := admittedAt(&tl, i); got > c+1 {
					t.Errorf("%s %s: bucket %d (%v) draws %.2f served, capacity %.2f", s.Name, tl.Policy, i, time.Duration(i)*b, got, c)
				}
				checked++
			}
		}
	}
	if queues == 0 {
		t.Error("no queue checked")
	}
	t.Logf("%d buckets checked, %d scenarios with a queue", checked, queues)
}

package sim_test

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// Every server wrapper tells its inner server of a hedged copy cancelled
// (sim.Canceller): the queue inside counts each as server.cancelled, as
// it does alone. A rate limit's own rejections, a pool with every member
// out and a crash's resets are not the inner server's to be told of.
func TestWrappersForwardCancel(t *testing.T) {
	queue := func() sim.ServerModel {
		return &sim.Queue{Concurrency: 50, Service: sim.LogNormal{Median: 40 * time.Millisecond, P99: time.Second}}
	}
	for _, tc := range []struct {
		name  string
		model sim.ServerModel
	}{
		{"queue", queue()},
		{"rate-limit", &sim.RateLimit{RequestsPerMinute: 1_000_000, Inner: queue()}},
		{"billing", &sim.Billing{PerRequest: 1, Inner: queue()}},
		{"crash", &sim.Crash{Down: []sim.DownWindow{{From: time.Hour, Until: 2 * time.Hour}}, Inner: queue()}},
		{"pool", &sim.Pool{Members: []sim.PoolMember{{Name: "a", Server: queue()}, {Name: "b", Server: queue()}}}},
		{"rate-limited pool", &sim.RateLimit{RequestsPerMinute: 1_000_000, Inner: &sim.Pool{Members: []sim.PoolMember{
			{Name: "a", Server: &sim.Billing{Inner: queue()}}, {Name: "b", Server: &sim.Crash{Down: []sim.DownWindow{{From: time.Hour, Until: 2 * time.Hour}}, Inner: queue()}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := sim.Run(sim.Config{
				Seed:     3,
				Server:   tc.model,
				Workload: spaced{20, time.Second},
				Policy: sim.Policy{Name: "twice", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 3},
					Coordinators: []machine.Spec{policies.HedgeConfig{}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			hedged, _ := res.Counters.Get("hedge.cancelled")
			server, _ := res.Counters.Get("server.cancelled")
			if hedged == 0 || server != hedged {
				t.Errorf("server.cancelled %d, hedge.cancelled %d; want equal, > 0", server, hedged)
			}
		})
	}
}

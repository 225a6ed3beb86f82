package sim_test

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// A hedge is not a retry: after a hedged first attempt fails, the retry
// waits the first retry's backoff (1 s), not the second's (2 s).
func TestSimHedgeIsNotARetry(t *testing.T) {
	reject := &sim.Rejection{Status: 529, Class: policies.Capacity}
	server := &scripted{script: []scriptEntry{
		{latency: 500 * time.Millisecond, reject: reject}, // copy 0, fails last
		{latency: 50 * time.Millisecond, reject: reject},  // its hedge at 100 ms
		{latency: 10 * time.Millisecond},                  // the retry
	}}
	_, err := sim.Run(sim.Config{
		Seed:     1,
		Server:   server,
		Workload: spaced{1, time.Second},
		Policy: sim.Policy{
			Name:         "hedged",
			Rules:        policies.Policy{Backoff: policies.Exponential{Base: time.Second, Factor: 2}, MaxAttempts: 5},
			Coordinators: []machine.Spec{policies.HedgeConfig{Delay: 100 * time.Millisecond}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0s copy 0", "100ms copy 1", "1.5s copy 0"}
	if got := server.state.arrivals; len(got) < 3 || got[2] != want[2] {
		t.Errorf("arrivals %v; want %v", got, want)
	}
}

// docs/scenarios.md ("How much work a run does") gives hedging's memory
// per client: 56 bytes plus 40 per copy of an attempt.
func TestHedgeBytesAsDocumented(t *testing.T) {
	if got := sim.HedgeBytes(1); got != 56+2*40 {
		t.Errorf("HedgeBytes(1) = %d; docs/scenarios.md says %d", got, 56+2*40)
	}
}

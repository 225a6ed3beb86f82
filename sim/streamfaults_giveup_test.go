package sim_test

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// The watchdog fires only before the client gives up (its attempt timeout
// or its budget), and an attempt wastes only the content events that came
// before it ended. Every stream stalls after 5 events 2 s apart; the idle
// watchdog (5 s) would fire at 15 s, but each attempt ends at 3 s, after
// one event.
func TestStreamWatchdogAfterTheGiveUp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules policies.Policy
		sends int64
	}{
		{"attempt timeout", policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 3, AttemptTimeout: 3 * time.Second, StreamIdleTimeout: 5 * time.Second}, 3},
		{"budget", policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 3, Deadline: 3 * time.Second, StreamIdleTimeout: 5 * time.Second}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const ops = 10
			mix := &sim.ErrorMix{
				Phases:       []sim.MixPhase{{Outcomes: []sim.MixOutcome{{P: 1, Fault: sim.StreamFault{Kind: sim.StallAfter, After: 5, For: 10 * time.Minute}}}}},
				Latency:      sim.Fixed(12 * time.Second),
				StreamEvents: 5,
			}
			res, err := sim.Run(sim.Config{Seed: 1, Server: mix, Workload: spaced{ops, time.Hour}, Policy: sim.Policy{Name: "p", Rules: tc.rules}})
			if err != nil {
				t.Fatal(err)
			}
			get := func(name string) int64 { v, _ := res.Counters.Get(name); return v }
			if int64(res.Attempts) != ops*tc.sends {
				t.Fatalf("%d attempts; want %d", res.Attempts, ops*tc.sends)
			}
			if w, e := get("stream.watchdog"), get("stream.wasted_events"); w != 0 || e != int64(res.Attempts) {
				t.Errorf("stream.watchdog %d, stream.wasted_events %d; want 0 and %d (one event an attempt)", w, e, res.Attempts)
			}
		})
	}
}

package sim_test

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// The watchdog ends a healthy stream whose content events are further
// apart than its timeouts, as Do's does: every answer takes 12 s with 5
// events, 2 s apart.
func TestStreamWatchdogOnHealthyStreams(t *testing.T) {
	for _, tc := range []struct {
		name            string
		idle, firstByte time.Duration
		stalled, events int64 // per attempt
	}{
		{"idle below the gap", time.Second, 3 * time.Second, 1, 1},
		{"idle below the gap, no first-byte timeout", time.Second, 0, 1, 0}, // the idle timeout applies to the first event
		{"first byte below the gap", 5 * time.Second, time.Second, 1, 0},
		{"above the gap", 3 * time.Second, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const ops = 10
			mix := &sim.ErrorMix{Phases: []sim.MixPhase{{}}, Latency: sim.Fixed(12 * time.Second), StreamEvents: 5}
			rules := policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 2, StreamIdleTimeout: tc.idle, StreamFirstByteTimeout: tc.firstByte}
			res, err := sim.Run(sim.Config{Seed: 1, Server: mix, Workload: spaced{ops, time.Hour}, Policy: sim.Policy{Name: "p", Rules: rules}})
			if err != nil {
				t.Fatal(err)
			}
			attempts := int64(res.Attempts)
			w, _ := res.Counters.Get("stream.watchdog")
			e, _ := res.Counters.Get("stream.wasted_events")
			if w != tc.stalled*attempts || e != tc.events*attempts {
				t.Errorf("%d attempts, stream.watchdog %d, stream.wasted_events %d; want %d and %d an attempt", attempts, w, e, tc.stalled, tc.events)
			}
			if done := int64(res.Completed); (tc.stalled == 0) != (done == ops) {
				t.Errorf("%d of %d operations completed", done, ops)
			}
		})
	}
}

package sim_test

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// Partial streams, by hand. Every answer streams 10 content events over
// 1.1 s (one every 100 ms, the last at 1 s); a request is 100 input and
// 1000 output tokens, priced 1 per request, 0.01 per input and 0.001 per
// output token. One attempt per operation, 10 operations an hour apart.
func TestBillingPartialStreams(t *testing.T) {
	ms := time.Millisecond
	one := policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 1}
	timeout := one
	timeout.AttemptTimeout = 450 * ms
	watchdog := one
	watchdog.StreamIdleTimeout = time.Second
	// Ends a healthy stream after its first event: 100 ms apart is more
	// than the 90 ms idle timeout.
	gaps := one
	gaps.StreamFirstByteTimeout, gaps.StreamIdleTimeout = 200*ms, 90*ms
	fault := func(f sim.StreamFault) []sim.MixPhase {
		return []sim.MixPhase{{Outcomes: []sim.MixOutcome{{P: 1, Fault: f}}}}
	}
	for _, tc := range []struct {
		name     string
		phases   []sim.MixPhase
		rules    policies.Policy
		partial  bool
		billed   int64 // requests billed, all partial when partial
		tokens   int64 // output tokens billed per request
		abandons int64
	}{
		// Sent whole: billed as any success.
		{"whole", nil, one, false, 10, 1000, 0},
		// The client leaves at 450 ms: 4 events sent (100…400 ms).
		{"client timeout", nil, timeout, true, 10, 400, 0},
		// Without partial_streams the provider bills the whole answer
		// (bill_abandoned), as it did.
		{"client timeout, whole bill", nil, timeout, false, 10, 1000, 10},
		// Cut after 3 events, at 400 ms.
		{"cut", fault(sim.StreamFault{Kind: sim.CutAfter, After: 3}), one, true, 10, 300, 0},
		// Stalls after 5 events (the last at 500 ms) for a minute; the
		// watchdog ends it at 1.5 s.
		{"watchdog", fault(sim.StreamFault{Kind: sim.StallAfter, After: 5, For: time.Minute}), watchdog, true, 10, 500, 0},
		// The watchdog ends a healthy stream at 190 ms, after 1 event.
		{"watchdog ends a healthy stream", nil, gaps, true, 10, 100, 0},
		// The same with a fault that would have sent 6 events first.
		{"watchdog ends a fault early", fault(sim.StreamFault{Kind: sim.StallAfter, After: 6, For: time.Minute}), gaps, true, 10, 100, 0},
		// A healthy stream the watchdog does not end is sent whole.
		{"watchdog, healthy", nil, watchdog, true, 0, 0, 0},
		// Stalls after 6 events, and the client leaves at 450 ms first:
		// 4 events.
		{"stall, client timeout", fault(sim.StreamFault{Kind: sim.StallAfter, After: 6, For: time.Minute}), timeout, true, 10, 400, 0},
		// No content at all: nothing billed.
		{"stall first byte", fault(sim.StreamFault{Kind: sim.StallFirstByte, For: time.Second}), one, true, 0, 0, 0},
		// Without partial_streams a fault is a failure: not billed.
		{"cut, no partial billing", fault(sim.StreamFault{Kind: sim.CutAfter, After: 3}), one, false, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			phases := tc.phases
			if phases == nil {
				phases = []sim.MixPhase{{}}
			}
			b := &sim.Billing{PerRequest: 1, PerInputToken: 0.01, PerOutputToken: 0.001, InputTokens: 100, OutputTokens: 1000,
				BillAbandoned: true, PartialStreams: tc.partial,
				Inner: &sim.ErrorMix{Phases: phases, Latency: sim.Fixed(1100 * ms), StreamEvents: 10}}
			if err := b.Validate(); err != nil {
				t.Fatal(err)
			}
			res, err := sim.Run(sim.Config{Seed: 1, Server: b, Workload: spaced{10, time.Hour}, Policy: sim.Policy{Name: "p", Rules: tc.rules}})
			if err != nil {
				t.Fatal(err)
			}
			get := func(name string) int64 { v, _ := res.Counters.Get(name); return v }
			billed, tokens := tc.billed, tc.tokens
			if tc.name == "watchdog, healthy" {
				billed, tokens = 10, 1000 // whole: not partial
			}
			wantCost := billed * (1_000_000_000 + 1_000_000_000 + tokens*1_000_000) // 1 + 100·0.01 + tokens·0.001, in 1e-9
			if get("billing.billed") != billed || get("billing.abandoned") != tc.abandons || get("billing.cost") != wantCost {
				t.Errorf("billed %d (abandoned %d), cost %d; want %d (%d), %d",
					get("billing.billed"), get("billing.abandoned"), get("billing.cost"), billed, tc.abandons, wantCost)
			}
			partial, partialTokens := tc.billed, tc.billed*tc.tokens
			if !tc.partial || tc.name == "watchdog, healthy" {
				partial, partialTokens = 0, 0
			}
			p, ok := res.Counters.Get("billing.partial")
			if ok != tc.partial || p != partial || get("billing.partial_output_tokens") != partialTokens {
				t.Errorf("billing.partial %d (reported %v), partial_output_tokens %d; want %d (%v), %d",
					p, ok, get("billing.partial_output_tokens"), partial, tc.partial, partialTokens)
			}
		})
	}
}

// Through a pool, the watchdog's end still reaches the member's bill: a
// healthy stream of events 100 ms apart, ended by a 90 ms idle timeout
// after its first event, bills 100 tokens.
func TestBillingPartialStreamsThroughWrappers(t *testing.T) {
	ms := time.Millisecond
	mix := func() sim.ServerModel {
		return &sim.Billing{PerOutputToken: 1, OutputTokens: 1000, PartialStreams: true,
			Inner: &sim.ErrorMix{Phases: []sim.MixPhase{{}}, Latency: sim.Fixed(1100 * ms), StreamEvents: 10}}
	}
	pool := &sim.Pool{Members: []sim.PoolMember{{Name: "a", Server: mix()}, {Name: "b", Server: mix()}}}
	rules := policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 1, StreamFirstByteTimeout: 200 * ms, StreamIdleTimeout: 90 * ms}
	res, err := sim.Run(sim.Config{Seed: 1, Server: pool, Workload: spaced{4, time.Hour}, Policy: sim.Policy{Name: "p", Rules: rules}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.Counters.Get("billing.partial_output_tokens"); v != 4*100 {
		t.Errorf("partial output tokens %d through a pool, want %d", v, 4*100)
	}
}

package sim_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// The SDK rules in both worlds: a spend-limit 429 retried by the status
// rule (and not by the class rule), and a mid-stream overload (a failure
// inside HTTP 200) stopped by the mid-stream rule (and retried without it).
func TestSameSDKRulesInSimulatorAndProduction(t *testing.T) {
	const seed = 11
	spend := sim.Rejection{Status: http.StatusTooManyRequests, Class: policies.Terminal}
	midStream := sim.Rejection{Status: http.StatusOK, Class: policies.Capacity}
	limited := sim.Rejection{Status: http.StatusTooManyRequests, Class: policies.RetryAfter, RetryAfter: 500 * time.Millisecond}
	cases := []struct {
		name     string
		reject   sim.Rejection
		rules    func(*policies.Policy)
		attempts int // 0: retried until admitted
		reason   policies.StopReason
	}{
		{"spend limit, class rule", spend, func(*policies.Policy) {}, 1, policies.StopTerminal},
		{"spend limit, status rule", spend, func(p *policies.Policy) { p.RetryByStatus = true }, 0, machine.NotStopped},
		{"mid-stream, class rule", midStream, func(*policies.Policy) {}, 0, machine.NotStopped},
		{"mid-stream, status rule", midStream, func(p *policies.Policy) { p.RetryByStatus = true }, 0, machine.NotStopped},
		{"mid-stream, mid-stream rule", midStream, func(p *policies.Policy) { p.NoMidStreamRetries = true }, 1, policies.StopTerminal},
		{"mid-stream, both SDK rules", midStream, func(p *policies.Policy) { p.RetryByStatus, p.NoMidStreamRetries = true, true }, 1, policies.StopTerminal},
		// 0.5 s + 0.5 s of server waits fit a 1.2 s total; the third does not.
		{"retry-after, total cap", limited, func(p *policies.Policy) { p.TotalServerWaitCap = 1200 * time.Millisecond }, 3, policies.StopDeadline},
		{"retry-after, no cap", limited, func(*policies.Policy) {}, 0, machine.NotStopped},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			server := &sim.CapacityWindows{
				Phases:       []sim.Phase{{Duration: 1500 * time.Millisecond, Reject: c.reject}, {Admit: 1, Window: time.Second, Reject: c.reject}},
				ResponseTime: sim.Fixed(100 * time.Millisecond),
			}
			pol := fullJitter(8, 20*time.Second, false)
			c.rules(&pol.Rules)
			simEv, prodEv := &events{}, &events{}
			simRecs, res := simulate(t, seed, server, pol, simEv)
			prodRecs, _, err := produce(t, seed, server, pol, prodEv)
			sameEvents(t, simEv, prodEv)
			if !slices.Equal(simRecs, prodRecs) {
				t.Fatalf("attempts differ:\nsimulator:  %v\nproduction: %v", simRecs, prodRecs)
			}
			if c.attempts == 0 {
				if err != nil || res.Completed != 1 || len(simRecs) < 2 {
					t.Fatalf("want retries until admitted: production %v, simulator completed %d after %d attempts", err, res.Completed, len(simRecs))
				}
				return
			}
			var pe *policies.Error
			if !errors.As(err, &pe) || pe.Reason != c.reason || pe.Attempts != c.attempts || res.GaveUpBy[c.reason] != 1 || res.Attempts != c.attempts {
				t.Fatalf("production %v, simulator gave up by %v after %d attempts; want %v after %d", err, res.GaveUpBy, res.Attempts, c.reason, c.attempts)
			}
			var we *policies.ServerWaitError
			if c.reason == policies.StopDeadline && (!errors.As(err, &we) || !we.Total) {
				t.Errorf("production %v, want a *ServerWaitError of the total cap", err)
			}
		})
	}
}

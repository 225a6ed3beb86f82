package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// Same-world tests of the controls that can stop an operation without
// sending its attempt: the retry budgets (AWS retry quota, gRPC retry
// throttling, ratio budget), adaptive throttling and the circuit breaker.
// Each scenario runs several clients that share one instance of the control
// through the simulator and through policies.Do (one goroutine per client in
// a synctest bubble), and the two worlds must make the same attempts,
// schedule the same retries with the same waits, and give up the same way at
// the same time, local rejections included. The control's code is the same
// in both worlds; what the tests hold equal is how each world builds it
// (sim.Policy's fields → plan; the same fields → options for Do), where it
// sits among the coordinators, and how each driver feeds it time, outcomes,
// attempts and random draws.

// controlScenario: clients spread over 4 s against a server that times out
// (no response: Transient, Status 0) for 0.6 s, is overloaded (529) for
// 1 s, then admits 3 requests per 0.5 s window. Full jitter, at most 8
// attempts, a 7 s budget. Each test adds its control.
func controlScenario(seed uint64, clients int) *multiScenario {
	return &multiScenario{
		seed:    seed,
		clients: clients,
		spread:  6 * time.Second,
		phases: []sim.Phase{
			{Duration: 600 * time.Millisecond, Reject: sim.Rejection{Status: 0, Class: policies.Transient}},
			{Duration: time.Second, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}},
			{Admit: 3, Window: 500 * time.Millisecond, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}},
		},
		responseTime: 100 * time.Millisecond,
		pol: sim.Policy{
			Name: "controlled",
			Rules: policies.Policy{
				Backoff:     policies.FullJitter{Base: 200 * time.Millisecond, Factor: 2, Cap: 2 * time.Second},
				MaxAttempts: 8,
				Deadline:    7 * time.Second,
			},
		},
	}
}

// sameWorldsWith runs s in both worlds and compares them: with plain
// sleeps in the bubble when no two clients ever act at the same instant,
// and always with the seqClock, which orders clients due at one instant as
// the simulator does.
func sameWorldsWith(t *testing.T, s *multiScenario) (*world, sim.Result) {
	t.Helper()
	simW, trace, res := simulateMulti(t, s)
	cov := coverageOf(trace, simW)
	logWorld(t, simW, res, cov)
	if len(simW.attempts) != res.Attempts {
		t.Errorf("recorded %d attempts, simulator counted %d", len(simW.attempts), res.Attempts)
	}
	if len(cov.ties) == 0 {
		sameWorlds(t, simW, produceMulti(t, s, false))
	} else {
		t.Logf("%d ties: compared with the seqClock only", len(cov.ties))
	}
	sameWorlds(t, simW, produceMulti(t, s, true))
	return simW, res
}

// stoppedBy counts the clients that reason stopped before they sent
// anything, and those it stopped after they had sent at least one attempt.
func stoppedBy(w *world, reason policies.StopReason) (unsent, afterSending int) {
	for i, r := range w.reasons {
		if r != reason {
			continue
		}
		if !sentBy(w, i) {
			unsent++
		} else {
			afterSending++
		}
	}
	return unsent, afterSending
}

func sentBy(w *world, client int) bool {
	for _, a := range w.attempts {
		if a.client == client {
			return true
		}
	}
	return false
}

// The retry quota worked in both worlds: timeouts make retries cost 10,
// overloads 5, so 60 tokens run out during the outage and retries stop
// (StopBudget); successes refund, so late retries can pay again.
func TestSameRetryQuotaInSimulatorAndProduction(t *testing.T) {
	s := controlScenario(5, 24)
	s.pol.Coordinators = append(s.pol.Coordinators, policies.RetryQuotaConfig{Capacity: 30})
	w, res := sameWorldsWith(t, s)
	timeouts := 0
	for _, ev := range w.events {
		for _, r := range ev.retries {
			if r.Outcome.Class == policies.Transient && r.Outcome.Status == 0 {
				timeouts++
			}
		}
	}
	_, after := stoppedBy(w, policies.StopBudget)
	switch {
	case timeouts == 0:
		t.Error("no retry after a timeout")
	case after == 0:
		t.Errorf("no client stopped by the quota: %v", res.GaveUpBy)
	case res.Completed == 0:
		t.Error("no client completed")
	}
}

// gRPC retry throttling in both worlds: 8 tokens, each failure −1, each
// success +0.5; retries stop at 4 and resume as successes come in.
func TestSameRetryThrottlingInSimulatorAndProduction(t *testing.T) {
	s := controlScenario(2, 24)
	s.pol.Coordinators = append(s.pol.Coordinators, policies.RetryThrottlingConfig{MaxTokens: 8, TokenRatio: 0.5})
	w, res := sameWorldsWith(t, s)
	if _, after := stoppedBy(w, policies.StopBudget); after == 0 || res.Completed == 0 {
		t.Errorf("want budget stops and completions: %v, %d completed", res.GaveUpBy, res.Completed)
	}
}

// The ratio budget in both worlds: retries at most 50 % of the requests of
// the last 2 s (in 0.5 s slots) plus 1 per second.
func TestSameRatioBudgetInSimulatorAndProduction(t *testing.T) {
	s := controlScenario(3, 24)
	s.pol.Coordinators = append(s.pol.Coordinators, policies.RatioBudgetConfig{Percent: 50, MinPerSecond: 1, Window: 2 * time.Second, Slots: 4})
	w, res := sameWorldsWith(t, s)
	if _, after := stoppedBy(w, policies.StopBudget); after == 0 || res.Completed == 0 {
		t.Errorf("want budget stops and completions: %v, %d completed", res.GaveUpBy, res.Completed)
	}
}

// Adaptive throttling in both worlds, K = 2 over 3 s in 0.5 s slots: the
// outage makes clients reject their own attempts, first attempts included,
// drawing from their own random streams.
func TestSameAdaptiveThrottleInSimulatorAndProduction(t *testing.T) {
	s := controlScenario(4, 24)
	s.pol.Coordinators = append(s.pol.Coordinators, policies.AdaptiveThrottleConfig{Window: 3 * time.Second, Slots: 6})
	w, res := sameWorldsWith(t, s)
	unsent, after := stoppedBy(w, policies.StopThrottled)
	switch {
	case unsent == 0:
		t.Errorf("no first attempt rejected locally: %v", res.GaveUpBy)
	case after == 0:
		t.Errorf("no retry rejected locally: %v", res.GaveUpBy)
	case res.Completed == 0:
		t.Error("no client completed")
	}
}

// The circuit breaker in both worlds: 3 failures in a row open it for
// 0.5 s, doubling up to 2 s while probes fail; 2 probes close it.
func TestSameBreakerInSimulatorAndProduction(t *testing.T) {
	s := controlScenario(6, 24)
	s.pol.Coordinators = append(s.pol.Coordinators, policies.BreakerConfig{ConsecutiveFailures: 3, OpenFor: 500 * time.Millisecond, MaxOpenFor: 2 * time.Second, Probes: 2})
	w, res := sameWorldsWith(t, s)
	unsent, after := stoppedBy(w, policies.StopCircuitOpen)
	switch {
	case unsent == 0:
		t.Errorf("no first attempt rejected by the open breaker: %v", res.GaveUpBy)
	case after == 0:
		t.Errorf("no retry rejected by the open breaker: %v", res.GaveUpBy)
	case res.Completed == 0:
		t.Error("no client completed: the breaker never closed again")
	}
}

// Every control at once, behind a gate and an in-flight limit: eight
// coordinators, the most an Op tracks, in the same order in both worlds.
func TestSameEveryControlInSimulatorAndProduction(t *testing.T) {
	s := controlScenario(33, 24)
	s.phases = append([]sim.Phase{{Duration: 500 * time.Millisecond, Reject: sim.Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: 150 * time.Millisecond}}}, s.phases...)
	s.pol.Coordinators = []machine.Spec{machine.GateConfig{}, machine.ThrottleConfig{Count: 20, Per: time.Second, MaxQueue: 6}, machine.LimitConfig{MaxInFlight: 4, MaxQueue: 8}}
	s.pol.Coordinators = append(s.pol.Coordinators, policies.BreakerConfig{ConsecutiveFailures: 5, OpenFor: 300 * time.Millisecond, Probes: 2})
	s.pol.Coordinators = append(s.pol.Coordinators, policies.AdaptiveThrottleConfig{K: 1.5, Window: 2 * time.Second, Slots: 4})
	s.pol.Coordinators = append(s.pol.Coordinators, policies.RetryThrottlingConfig{MaxTokens: 20, TokenRatio: 1})
	s.pol.Coordinators = append(s.pol.Coordinators, policies.RatioBudgetConfig{Percent: 100, MinPerSecond: 2, Window: 2 * time.Second})
	s.pol.Coordinators = append(s.pol.Coordinators, policies.RetryQuotaConfig{Capacity: 30})
	_, res := sameWorldsWith(t, s)
	if res.Completed == 0 {
		t.Error("no client completed")
	}
	for _, r := range []policies.StopReason{policies.StopBudget, policies.StopThrottled, policies.StopCircuitOpen} {
		if res.GaveUpBy[r] == 0 {
			t.Errorf("no client stopped by %v: %v", r, res.GaveUpBy)
		}
	}
}

// A policy with a bad control config fails validation, naming the policy.
func TestControlConfigsValidated(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(p *sim.Policy)
	}{
		{"breaker", func(p *sim.Policy) { p.Coordinators = []machine.Spec{policies.BreakerConfig{FailureRatio: 2}} }},
		{"adaptive", func(p *sim.Policy) { p.Coordinators = []machine.Spec{policies.AdaptiveThrottleConfig{K: -1}} }},
		{"retry throttling", func(p *sim.Policy) { p.Coordinators = []machine.Spec{policies.RetryThrottlingConfig{MaxTokens: 5000}} }},
		{"ratio budget", func(p *sim.Policy) {
			p.Coordinators = []machine.Spec{policies.RatioBudgetConfig{Window: -time.Second}}
		}},
		{"retry quota", func(p *sim.Policy) { p.Coordinators = []machine.Spec{policies.RetryQuotaConfig{Capacity: -1}} }},
	} {
		cfg := controlScenario(1, 2).config()
		tc.set(&cfg.Policy)
		if _, err := sim.Run(cfg); err == nil || !strings.Contains(err.Error(), `policy "controlled"`) {
			t.Errorf("%s: err = %v, want a validation error naming the policy", tc.name, err)
		}
	}
}

// The AWS adaptive send rate in both worlds, throttled by the 529s too:
// after the first throttle every attempt books a token, and clients wait
// for it (a grant in the future) before they send.
func TestSameCubicRateInSimulatorAndProduction(t *testing.T) {
	s := controlScenario(5, 24)
	s.pol.Coordinators = append(s.pol.Coordinators, policies.CubicRateConfig{ThrottleOnCapacity: true})
	w, res := sameWorldsWith(t, s)
	if res.Completed == 0 || len(w.attempts) == 0 {
		t.Fatalf("want completions: %d of %d", res.Completed, s.clients)
	}
	// Without the limiter the same clients send more in the first seconds
	// after the outage: the limiter must have held some back.
	plain := controlScenario(5, 24)
	pw, _, _ := simulateMulti(t, plain)
	early := func(w *world) int {
		n := 0
		for _, a := range w.attempts {
			if a.at < 3*time.Second {
				n++
			}
		}
		return n
	}
	if early(w) >= early(pw) {
		t.Errorf("attempts before 3 s: %d with the send-rate limiter, %d without: it held nothing back", early(w), early(pw))
	}
}

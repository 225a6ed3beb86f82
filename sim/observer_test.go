package sim

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// The observer is told of every attempt sent, decided and answered once,
// and of every operation's end once, in event order, and its counts agree
// with the run's result: on the reference scenario, with an attempt
// timeout (answers the server never gave), with a deadline that cuts
// attempts short, and with a breaker (give-ups with nothing sent).
func TestObserverAgreesWithResult(t *testing.T) {
	timeouts := reference(exponential)
	timeouts.Policy.Rules.AttemptTimeout = 50 * ms
	cut := reference(immediate)
	cut.Policy.Rules.MaxAttempts, cut.Policy.Rules.Deadline = 0, 1050*ms
	breaker := reference(immediate)
	breaker.Policy.Coordinators = []machine.Spec{policies.BreakerConfig{ConsecutiveFailures: 3, OpenFor: sec}}
	for name, c := range map[string]Config{
		"reference/immediate": reference(immediate), "reference/gated": reference(gated),
		"timeouts": timeouts, "deadline-cut": cut, "breaker": breaker,
	} {
		t.Run(name, func(t *testing.T) {
			n := c.Workload.Operations()
			var last time.Duration
			order := func(at time.Duration) {
				if at < last {
					t.Fatalf("hook at %v after one at %v", at, last)
				}
				last = at
			}
			pending := make([]int, n) // sent and not answered, per operation
			undecided := make([]int, n)
			ended := make([]bool, n)
			var firsts, retries, admitted, rejected, answered, completed int
			var gaveUpBy [machine.NumStopReasons]int
			c.Observer = Observer{
				OnSend: func(at time.Duration, op int, retry bool) {
					order(at)
					if pending[op] != 0 || ended[op] {
						t.Fatalf("op %d sent at %v with %d pending, ended %v", op, at, pending[op], ended[op])
					}
					pending[op]++
					undecided[op]++
					if retry {
						retries++
					} else {
						firsts++
					}
				},
				OnDecision: func(at time.Duration, op int, class policies.Class) {
					order(at)
					if undecided[op] != 1 {
						t.Fatalf("op %d decided at %v with %d undecided", op, at, undecided[op])
					}
					undecided[op]--
					if class == policies.Success {
						admitted++
					} else {
						rejected++
					}
				},
				OnResponse: func(at time.Duration, op int, _ policies.Class) {
					order(at)
					if pending[op] != 1 || undecided[op] != 0 {
						t.Fatalf("op %d answered at %v with %d pending", op, at, pending[op])
					}
					pending[op]--
					answered++
				},
				OnComplete: func(at time.Duration, op int) {
					order(at)
					if ended[op] {
						t.Fatalf("op %d ended twice", op)
					}
					ended[op] = true
					completed++
				},
				OnGiveUp: func(at time.Duration, op int, reason policies.StopReason) {
					order(at)
					if ended[op] || pending[op] != 0 {
						t.Fatalf("op %d gave up at %v: ended %v, %d pending", op, at, ended[op], pending[op])
					}
					ended[op] = true
					gaveUpBy[reason]++
				},
			}
			r := mustRun(t, c)
			if firsts+retries != r.Attempts || retries != r.Retries || answered != r.Attempts {
				t.Errorf("observed %d first attempts, %d retries, %d answers; result: %d attempts, %d retries", firsts, retries, answered, r.Attempts, r.Retries)
			}
			if admitted != r.Admitted || rejected != r.Rejected || completed != r.Completed || gaveUpBy != r.GaveUpBy {
				t.Errorf("observed admitted %d, rejected %d, completed %d, gave up %v; result: %d, %d, %d, %v",
					admitted, rejected, completed, gaveUpBy, r.Admitted, r.Rejected, r.Completed, r.GaveUpBy)
			}
			for op, e := range ended {
				if !e {
					t.Errorf("op %d never ended", op)
				}
			}
			if name == "breaker" && gaveUpBy[policies.StopCircuitOpen] == 0 {
				t.Error("the breaker rejected nothing locally; the test needs it to")
			}
			if name == "deadline-cut" && gaveUpBy[policies.StopDeadline] == 0 {
				t.Error("no deadline give-up; the test needs one")
			}
		})
	}
}

// With a server that decides later and clients that stop waiting first
// (contention, random delays, a 30 ms attempt timeout against a 40 ms
// round), a decision may come after its attempt's timeout and after the
// operation's next attempts (detached decisions): the per-operation order
// of TestObserverAgreesWithResult does not hold, but times never go back,
// every attempt is answered once and decided once, and the counts agree.
func TestObserverWithLateDecisions(t *testing.T) {
	c := Config{Seed: 3, Server: &Contention{Network: FoldedNormal{Mean: 10 * ms, StdDev: 2 * ms}}, Workload: Burst{Clients: 30},
		Policy: Policy{Name: "fj", Rules: policies.Policy{Backoff: policies.FullJitter{Base: 5 * ms, Factor: 2, Cap: 200 * ms}, MaxAttempts: 20, AttemptTimeout: 38 * ms}}}
	var last time.Duration
	order := func(at time.Duration) {
		if at < last {
			t.Fatalf("hook at %v after one at %v", at, last)
		}
		last = at
	}
	var sent, decided, admitted, answered, late, wasted int
	undecided := make([]int, 30)
	type decision struct {
		at    time.Duration
		op    int
		class policies.Class
	}
	var prev decision
	c.Observer = Observer{
		OnSend: func(at time.Duration, op int, _ bool) { order(at); sent++; undecided[op]++ },
		OnDecision: func(at time.Duration, op int, class policies.Class) {
			order(at)
			decided++
			undecided[op]--
			if class == policies.Success {
				admitted++
			}
			prev = decision{at, op, class}
		},
		// A detached admission is wasted: its client has gone.
		OnWasted: func(at time.Duration, op int) {
			if prev != (decision{at, op, policies.Success}) {
				t.Fatalf("op %d wasted at %v, not right after its admission (last decision %+v)", op, at, prev)
			}
			wasted++
		},
		OnResponse: func(at time.Duration, op int, _ policies.Class) {
			order(at)
			answered++
			if undecided[op] > 0 {
				late++ // answered (timed out) before the server decided
			}
		},
	}
	r := mustRun(t, c)
	if sent != r.Attempts || answered != r.Attempts || decided != r.Attempts || admitted != r.Admitted || decided != r.Admitted+r.Rejected {
		t.Errorf("sent %d, answered %d, decided %d (admitted %d); result: %d attempts, %d admitted, %d rejected",
			sent, answered, decided, admitted, r.Attempts, r.Admitted, r.Rejected)
	}
	if late == 0 {
		t.Error("no attempt timed out before its decision: the test does not reach detached decisions")
	}
	if wasted == 0 || wasted > admitted {
		t.Errorf("%d admissions wasted of %d: want some, detached", wasted, admitted)
	}
}

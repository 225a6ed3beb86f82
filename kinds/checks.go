package kinds

import (
	"fmt"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// ValidateWorkload checks a decoded workload.
func ValidateWorkload(w sim.Workload) error {
	if ops := w.Operations(); ops > MaxClients {
		return fmt.Errorf("the workload may start %d operations in a run; at most %d are supported", ops, MaxClients)
	}
	return w.Validate()
}

// InstantRetries reports whether p's operations could retry for ever at
// one instant against server: no max attempts, a fixed wait of 0, nothing
// that paces attempts (throttle, send-rate limiter) or stops a run of
// refusals (a machine.Stopper: budgets, breaker, adaptive throttling),
// and a server that answers at once with no server wait and, for an error
// mix, fails every request in some phase. The engine would stop such a run
// when it stalls; the loader refuses it first.
func InstantRetries(server sim.ServerModel, p *sim.Policy) bool {
	if p.Rules.MaxAttempts > 0 || paced(p) || stops(p) {
		return false // a stopper ends a run of refusals at one instant: tokens, a window's share, an open breaker, local rejections
	}
	if b, ok := p.Rules.Backoff.(policies.Constant); !ok || b.Wait > 0 {
		return false
	}
	k := serverKindOf(server)
	return k != nil && k.instant(server)
}

// stops reports whether a coordinator of p stops operations locally.
func stops(p *sim.Policy) bool {
	for _, s := range p.Coordinators {
		if _, ok := s.(machine.Stopper); ok {
			return true
		}
	}
	return false
}

// CheckBackoff reports a combination of a backoff's values the loader
// refuses, as its kind checks it: the field to blame and why.
func CheckBackoff(b policies.Backoff) (field string, err error) {
	for _, k := range backoffKinds {
		if k.check != nil && k.is(b) {
			return k.check(b)
		}
	}
	return "", nil
}

// Counted names the optional metrics (metrics.For) that a server model,
// the models it wraps, and a workload count, as their kinds declare them.
func Counted(server sim.ServerModel, w sim.Workload) []string {
	var counted []string
	for _, part := range serverParts(server) {
		if k := serverKindOf(part); k != nil {
			counted = append(counted, k.metrics(part)...)
		}
	}
	if k := workloadKindOf(w); k != nil {
		counted = append(counted, k.metrics(w)...)
	}
	return counted
}

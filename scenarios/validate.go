package scenarios

import (
	"fmt"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// Validate reports the first problem the loader would find with s's
// models once their fields are read: the server's and the workload's own
// checks, each policy's backoff (a cap below its base), and whatever the
// simulator would refuse or never finish (see policyProblem). A scenario
// changed after loading (a sweep point) is checked with it before it
// runs. The error names the field, relative to the scenario ("server",
// "clients", "policies[1].cap"); the ranges of single fields are the
// decoder's and Param's to check.
func (s *Scenario) Validate() error {
	switch {
	case s.Server == nil:
		return fmt.Errorf("server: missing")
	case s.Workload == nil:
		return fmt.Errorf("clients: missing")
	}
	if err := s.Server.Validate(); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if err := validateWorkload(s.Workload); err != nil {
		return fmt.Errorf("clients: %w", err)
	}
	for i := range s.Policies {
		if field, err := s.policyProblem(i); err != nil {
			return fmt.Errorf("policies[%d]%s: %w", i, field, err)
		}
	}
	return nil
}

// validateWorkload checks a decoded workload.
func validateWorkload(w sim.Workload) error {
	if ops := w.Operations(); ops > MaxClients {
		return fmt.Errorf("the workload may start %d operations in a run; at most %d are supported", ops, MaxClients)
	}
	return w.Validate()
}

// policyProblem checks policy i of s against the rest of s: its backoff's
// values, the run the simulator would refuse (sim.Config.Validate), and a
// run whose time could never pass. field is "" or the policy's field to
// blame, with its dot (".cap").
func (s *Scenario) policyProblem(i int) (field string, err error) {
	p := &s.Policies[i]
	for _, k := range backoffKinds {
		if k.check != nil && k.is(p.Rules.Backoff) {
			if f, err := k.check(p.Rules.Backoff); err != nil {
				return "." + f, err
			}
		}
	}
	c := s.Config(i, s.Seed)
	if err := c.Validate(); err != nil {
		return "", err
	}
	if instantRetries(s.Server, p) {
		return ".max_attempts", fmt.Errorf("policy %q retries with no wait against a server that answers every request at once and asks for no wait: virtual time would never pass, so its deadline would never end a run of refusals; set max_attempts, or a wait", p.Name)
	}
	return "", nil
}

// instantRetries reports whether p's operations could retry for ever at
// one instant against server: no max attempts, a fixed wait of 0, nothing
// that paces attempts (throttle, send-rate limiter) or stops a run of
// refusals (a policies.Stopper: budgets, breaker, adaptive throttling),
// and a server that
// answers at once with no server wait and, for an error mix, fails every
// request in some phase. The engine would stop such a run
// when it stalls; the loader refuses it first.
func instantRetries(server sim.ServerModel, p *sim.Policy) bool {
	if p.Rules.MaxAttempts > 0 || paced(p) {
		return false
	}
	if stops(p) {
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
		if _, ok := s.(policies.Stopper); ok {
			return true
		}
	}
	return false
}

package scenarios

import (
	"fmt"

	"github.com/retrysim/retrysim/kinds"
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
	if err := kinds.ValidateWorkload(s.Workload); err != nil {
		return fmt.Errorf("clients: %w", err)
	}
	for i := range s.Policies {
		if field, err := s.policyProblem(i); err != nil {
			return fmt.Errorf("policies[%d]%s: %w", i, field, err)
		}
	}
	return nil
}

// policyProblem checks policy i of s against the rest of s: its backoff's
// values, the run the simulator would refuse (sim.Config.Validate), and a
// run whose time could never pass. field is "" or the policy's field to
// blame, with its dot (".cap").
func (s *Scenario) policyProblem(i int) (field string, err error) {
	p := &s.Policies[i]
	if f, err := kinds.CheckBackoff(p.Rules.Backoff); err != nil {
		return "." + f, err
	}
	c := s.Config(i, s.Seed)
	if err := c.Validate(); err != nil {
		return "", err
	}
	if kinds.InstantRetries(s.Server, p) {
		return ".max_attempts", fmt.Errorf("policy %q retries with no wait against a server that answers every request at once and asks for no wait: virtual time would never pass, so its deadline would never end a run of refusals; set max_attempts, or a wait", p.Name)
	}
	return "", nil
}

package scenarios

import (
	"fmt"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// The same policy file for both worlds: a service loads the policy that
// 'retrysim check' gates in CI and runs it with policies.Do or
// policies.Transport.

// LoadPolicy loads the policy called name of scenario scenario from the
// scenario file at path ("" reads the built-in scenarios), with the strict
// decoding and file:line:col errors of every scenario file.
func LoadPolicy(path, scenario, name string) (*sim.Policy, error) {
	var (
		f   *File
		err error
	)
	if path == "" {
		f, err = Builtin()
	} else {
		f, err = Load(path)
	}
	if err != nil {
		return nil, err
	}
	s, err := f.Lookup(scenario)
	if err != nil {
		return nil, err
	}
	i, err := s.PolicyIndex(name)
	if err != nil {
		return nil, fmt.Errorf("%s: policy %q: %w", f.Path, name, err)
	}
	p := s.Policies[i]
	return &p, nil
}

// ClientOptions returns options for policies.Do and policies.Transport that
// run p as the simulator runs it: its rules (backoff, attempts, budget,
// attempt timeout, server waits) and fresh instances of its shared
// coordination (gate, throttle, in-flight limit, retry controls), asked in
// the simulator's order. Call it once per API key and give the same
// options to every worker on that key. With a model fallback, primary and
// fallback name the two models (Attempt.Model carries them); Transport
// refuses a fallback, so use Do around the call for such a policy.
func ClientOptions(p *sim.Policy, primary, fallback string) ([]policies.Option, error) {
	plan, err := p.Plan(policies.Hooks{})
	if err != nil {
		return nil, err
	}
	opts := []policies.Option{policies.WithPolicy(plan.Policy)}
	for _, c := range plan.Coordinators {
		opts = append(opts, policies.WithCoordinator(c))
	}
	if f := plan.Fallback; f != nil {
		if primary == "" || fallback == "" {
			return nil, fmt.Errorf("policy %q has a model fallback: name the primary and fallback models", p.Name)
		}
		f.Primary, f.Fallback = primary, fallback
		opts = append(opts, policies.WithFallback(f))
	}
	return opts, nil
}

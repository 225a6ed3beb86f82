// Package tune searches the parameters of one policy for the point that
// meets stated targets (expectations, as 'retrysim check' reads them) on
// one or several scenarios with statistical confidence over common seeds,
// and optimises an objective among the points that do. docs/tune.md
// describes the method and its limits.
package tune

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/stats"
	"github.com/retrysim/retrysim/sweep"
)

// Limits that keep a search from running for days.
const (
	MaxParams = 4
	// MaxLevels bounds the values per parameter of the first, coarse stage.
	MaxLevels = 9
	// MaxCandidates bounds the points a search evaluates in all.
	MaxCandidates = 2000
)

// Target is one bound the tuned policy must meet: an expectation on one
// scenario, or on every scenario when Scenario is "".
type Target struct {
	Scenario    string
	Expectation scenarios.Expectation
	// Source says where it was written: "--target" or "file:line:col".
	Source string
}

// String is the target as ParseTarget reads it.
func (t Target) String() string {
	if t.Scenario == "" {
		return t.Expectation.String()
	}
	return t.Scenario + ": " + t.Expectation.String()
}

// ParseTarget reads "[SCENARIO:] EXPECTATION", e.g.
// "long-outage: mean(amplification) <= 1.2"; the expectation is in the
// language of scenario files (scenarios.ParseExpectation).
func ParseTarget(text string) (Target, error) {
	t := Target{Source: "--target"}
	expr := text
	if name, rest, ok := strings.Cut(text, ":"); ok {
		t.Scenario, expr = strings.TrimSpace(name), rest
		if t.Scenario == "" {
			return t, fmt.Errorf("%q: no scenario before ':'", text)
		}
	}
	e, err := scenarios.ParseExpectation(expr)
	if err != nil {
		return t, fmt.Errorf("%q: %v", text, err)
	}
	t.Expectation = e
	return t, nil
}

// Objective is what a search optimises among the feasible points: the mean
// over seeds of Metric on Scenario, or, when Scenario is "", of its mean
// over the scenarios on each seed. Better is the metric's own direction.
type Objective struct {
	Scenario string
	Metric   *metrics.Metric
}

// String is the objective as ParseObjective reads it.
func (o Objective) String() string {
	if o.Scenario == "" {
		return o.Metric.Name
	}
	return o.Scenario + ":" + o.Metric.Name
}

// Goal says in words what the objective asks: "minimise mean(attempts)".
func (o Objective) Goal() string {
	verb := "minimise"
	if o.Metric.Better == stats.HigherIsBetter {
		verb = "maximise"
	}
	over := "over the scenarios"
	if o.Scenario != "" {
		over = "on " + o.Scenario
	}
	return fmt.Sprintf("%s mean(%s) %s", verb, o.Metric.Name, over)
}

// ParseObjective reads "[SCENARIO:]METRIC" or "[SCENARIO:]mean(METRIC)":
// a metric of the registry, minimised or maximised as its direction says
// (latencies and attempts lower, completions higher).
func ParseObjective(text string) (Objective, error) {
	var o Objective
	name := strings.TrimSpace(text)
	if sc, rest, ok := strings.Cut(name, ":"); ok {
		o.Scenario, name = strings.TrimSpace(sc), strings.TrimSpace(rest)
		if o.Scenario == "" {
			return o, fmt.Errorf("%q: no scenario before ':'", text)
		}
	}
	if inner, ok := strings.CutPrefix(name, "mean("); ok && strings.HasSuffix(inner, ")") {
		name = strings.TrimSpace(strings.TrimSuffix(inner, ")"))
	}
	m, ok := metrics.Lookup(name)
	if !ok {
		return o, fmt.Errorf("%q: unknown metric %q; known metrics: %s", text, name, strings.Join(metrics.Names(), ", "))
	}
	o.Metric = m
	return o, nil
}

// Problem is what a search is asked: the policy named Policy, which every
// scenario has, its parameters Space may vary over the values each lists,
// and it must meet Targets on seeds FirstSeed, FirstSeed+1, … (Seeds of
// them, the same for every point and scenario), optimising Objective.
type Problem struct {
	Scenarios []*scenarios.Scenario
	Policy    string
	Space     []sweep.Param
	Targets   []Target
	Objective Objective
	FirstSeed uint64
	Seeds     int
	// Levels is how many values of each parameter the coarse stage tries
	// (evenly spaced over its list, both ends included); 0 means 5.
	Levels int
	// Runners is how many runners-up the result keeps; 0 means 3.
	Runners int
}

// Prepare checks p and returns its scenarios cut down to the tuned policy
// (index 0), with the targets the scenario file gives that policy (its
// expect list) added after p.Targets. Errors are about the input.
func (p *Problem) Prepare() ([]*scenarios.Scenario, []Target, error) {
	switch {
	case len(p.Scenarios) == 0:
		return nil, nil, fmt.Errorf("no scenario to tune on")
	case len(p.Space) == 0 || len(p.Space) > MaxParams:
		return nil, nil, fmt.Errorf("want 1 to %d parameters to vary, got %d", MaxParams, len(p.Space))
	case p.Seeds < 1:
		return nil, nil, fmt.Errorf("want at least one seed")
	case p.Objective.Metric == nil:
		return nil, nil, fmt.Errorf("no objective")
	case p.Levels < 0 || p.Levels == 1 || p.Levels > MaxLevels:
		return nil, nil, fmt.Errorf("levels %d: want 2 to %d", p.Levels, MaxLevels)
	}
	for i, q := range p.Space {
		info, ok := kinds.LookupParam(q.Name) // sweep.Parse checked the name, or it is a path
		if !ok {
			return nil, nil, fmt.Errorf("%s: tune varies a registered policy parameter (%s), not a field by its path", q.Name, strings.Join(PolicyParams(), ", "))
		}
		if info.Field == "" {
			return nil, nil, fmt.Errorf("%s is a parameter of the scenario, not of a policy; tune varies %s", q.Name, strings.Join(PolicyParams(), ", "))
		}
		if slices.ContainsFunc(p.Space[:i], func(o sweep.Param) bool { return o.Name == q.Name }) {
			return nil, nil, fmt.Errorf("parameter %s is given twice", q.Name)
		}
	}
	var cut []*scenarios.Scenario
	targets := slices.Clone(p.Targets)
	names := map[string]bool{}
	for _, s := range p.Scenarios {
		if names[s.Name] {
			return nil, nil, fmt.Errorf("scenario %s is given twice", s.Name)
		}
		names[s.Name] = true
		c, fileTargets, err := onePolicy(s, p.Policy)
		if err != nil {
			return nil, nil, err
		}
		cut = append(cut, c)
		targets = append(targets, fileTargets...)
	}
	for _, t := range targets {
		if t.Scenario != "" && !names[t.Scenario] {
			return nil, nil, fmt.Errorf("target %q (%s): scenario %s is not among those tuned on (%s)", t, t.Source, t.Scenario, strings.Join(slices.Sorted(maps.Keys(names)), ", "))
		}
	}
	if o := p.Objective.Scenario; o != "" && !names[o] {
		return nil, nil, fmt.Errorf("objective %s: scenario %s is not among those tuned on", p.Objective, o)
	}
	if len(targets) == 0 {
		return nil, nil, fmt.Errorf("no targets: give --target, or an expect list to policy %s in the scenario file", p.Policy)
	}
	return cut, targets, nil
}

// onePolicy is s with policy name alone (and its expectations), and that
// policy's expectations as targets on s.
func onePolicy(s *scenarios.Scenario, name string) (*scenarios.Scenario, []Target, error) {
	i, err := s.PolicyIndex(name)
	if err != nil {
		return nil, nil, fmt.Errorf("policy %q: %w", name, err)
	}
	c := s.Clone()
	c.Policies = c.Policies[i : i+1]
	c.Expect = nil
	var targets []Target
	for _, e := range s.Expect {
		if e.Policy == i {
			e.Policy = 0
			c.Expect = append(c.Expect, e)
			targets = append(targets, Target{Scenario: s.Name, Expectation: e.Expectation, Source: e.Source()})
		}
	}
	return c, targets, nil
}

// PolicyParams names the parameters a search can vary: those of a policy
// (kinds.Param.Field), in registration order.
func PolicyParams() []string {
	var names []string
	for _, p := range kinds.Params() {
		if p.Field != "" {
			names = append(names, p.Name)
		}
	}
	return names
}

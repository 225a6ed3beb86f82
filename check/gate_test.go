package check

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/compare"
	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// The gate's two promises, measured on every built-in scenario and every
// example (docs/ci.md, "What the gate's error rates are"; the tables there
// are these tests' logs: go test ./check/ -run 'TestGate(FalseAlarms|CatchesRegressions)' -v).

// aaRuns is the A/A comparisons per scenario: each against the same
// 30-seed baseline (seeds 1-30), on seeds 31-60, 61-90, … relabelled 1-30.
const aaRuns = 20

// sliceSeeds is seeds [from, from+n) of set (counted from its first seed),
// relabelled to start at first: other draws of the same behaviour.
func sliceSeeds(set *SeedSet, from, n int, first uint64) *SeedSet {
	out := &SeedSet{Scenario: set.Scenario, FirstSeed: first, Seeds: n}
	for _, p := range set.Policies {
		sp := SeedPolicy{Name: p.Name, Metrics: p.Metrics}
		for _, v := range p.Values {
			sp.Values = append(sp.Values, v[from:from+n])
		}
		out.Policies = append(out.Policies, sp)
	}
	return out
}

// allowedAlarms is the most false alarms of n independent runs at rate
// alpha that are not evidence of a rate above alpha: the smallest k with
// P(X > k) < 0.05 for X ~ Binomial(n, alpha). For 20 runs at 5 %: 3.
func allowedAlarms(n int, alpha float64) int {
	for k := 0; ; k++ {
		tail := 0.0
		for x := k + 1; x <= n; x++ {
			tail += binomial(n, x) * math.Pow(alpha, float64(x)) * math.Pow(1-alpha, float64(n-x))
		}
		if tail < 0.05 {
			return k
		}
	}
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

func TestAllowedAlarms(t *testing.T) {
	if got := allowedAlarms(20, 0.05); got != 3 {
		t.Errorf("allowedAlarms(20, 0.05) = %d, want 3 (P(X > 3) = 0.016, P(X > 2) = 0.075)", got)
	}
}

// Same behaviour, other draws: a scenario's gate fails no more often than
// its α allows, through the whole pipeline (the baseline read back from
// its JSON, every metric, every policy, one family).
func TestGateFalseAlarms(t *testing.T) {
	list, runs := gateScenarios(t), aaRuns
	if racetest.Enabled {
		// The race detector learns nothing from long simulations on one
		// goroutine; the plain run measures every scenario.
		list, runs = list[:2], 4
	}
	allowed := allowedAlarms(runs, DefaultAlpha)
	t.Logf("| scenario | policies | tests a run (distinct, counted) | false alarms in %d runs |", runs)
	t.Logf("| --- | ---: | ---: | ---: |")
	total := 0
	for _, s := range list {
		all := FromMultiSeed(collect(t, s, 1, gateSeeds*(runs+1)))
		base := recorded(t, collect(t, s, 1, gateSeeds))
		alarms := 0
		var fam Family
		var first []string
		for r := 1; r <= runs; r++ {
			now := sliceSeeds(all, r*gateSeeds, gateSeeds, base.FirstSeed)
			cs, f := CompareSeeds("baseline.json", base, now, Tolerances{Default: DefaultSeedTolerance}, DefaultAlpha)
			fam = f
			if fails := failures(cs); len(fails) > 0 {
				alarms++
				if first == nil {
					first = fails
				}
			}
		}
		total += alarms
		t.Logf("| %s | %d | %d (%d, %d) | %d |", s.Name, len(base.Policies), fam.Tests, fam.Distinct, fam.Counted, alarms)
		if alarms > allowed {
			t.Errorf("%s: %d false alarms in %d A/A runs, more than the %d that α = %v allows; the first: %q", s.Name, alarms, runs, allowed, DefaultAlpha, first)
		}
	}
	t.Logf("%d false alarms in %d runs over %d scenarios", total, runs*len(list), len(list))
}

// A regression is a change a reviewer would reject: it loses work, or
// spends more for the same.
type regression struct {
	what  string
	param string // a sweep parameter (compare --param), or "" for mutate
	// mutate changes the scenario when no parameter can.
	mutate func(*scenarios.Scenario) *scenarios.Scenario
}

var (
	fewerAttempts  = regression{what: "fewer attempts (max_attempts 2)", param: "max_attempts=2"}
	oneAttempt     = regression{what: "no retries (max_attempts 1)", param: "max_attempts=1"}
	moreAttempts   = regression{what: "more attempts at every layer (max_attempts 5)", param: "max_attempts=5"}
	cutCap         = regression{what: "cap cut to 1 s", param: "cap=1s"}
	cutDeadline    = regression{what: "deadline cut to 2 s", param: "deadline=2s"}
	noJitter       = regression{what: "jitter removed", mutate: withoutJitter}
	halfBudget     = regression{what: "retry budget halved (10 % → 5 %)", param: "budget_percent=5"}
	soonerBreaker  = regression{what: "breaker opens after 1 failure", param: "breaker_failures=1"}
	tinyHedges     = regression{what: "hedge budget cut to 1 %", param: "hedge_budget_percent=1"}
	eagerHedges    = regression{what: "hedges after 1 ms", param: "hedge_delay=1ms"}
	eagerRetries   = regression{what: "base delay cut to 1 ms", param: "base=1ms"}
	noRetryOn      = regression{what: "retry_on dropped (every layer retries what its class rule retries)", mutate: withoutRetryOn}
	bigReserve     = regression{what: "reserve raised to 0.5", param: "server.reserve=0.5"}
	moreAggressive = func(to string) regression {
		return regression{what: "aggression raised to " + to, param: "server.aggression=" + to}
	}
)

// withoutRetryOn is s with every policy's and layer's retry_on removed.
func withoutRetryOn(s *scenarios.Scenario) *scenarios.Scenario {
	c := s.Clone()
	for i := range c.Policies {
		c.Policies[i].Rules.RetryOn = policies.Policy{}.RetryOn
		for k := range c.Policies[i].Layers {
			c.Policies[i].Layers[k].Rules.RetryOn = policies.Policy{}.RetryOn
		}
	}
	return c
}

// withoutJitter is s with every jittered backoff made plain exponential
// (same base, factor and cap).
func withoutJitter(s *scenarios.Scenario) *scenarios.Scenario {
	c := s.Clone()
	for i := range c.Policies {
		switch b := c.Policies[i].Rules.Backoff.(type) {
		case policies.FullJitter:
			c.Policies[i].Rules.Backoff = policies.Exponential(b)
		case policies.EqualJitter:
			c.Policies[i].Rules.Backoff = policies.Exponential(b)
		case policies.SDKJitter:
			c.Policies[i].Rules.Backoff = policies.Exponential(b)
		}
	}
	return c
}

// regressions are the changes each scenario's gate must catch: each makes
// that scenario worse for some policy, as a reviewer would read it.
var regressions = map[string][]regression{
	"overload-burst":           {fewerAttempts, cutCap, noJitter, cutDeadline},
	"rate-limited-burst":       {fewerAttempts, cutDeadline},
	"long-outage":              {fewerAttempts, cutCap, noJitter},
	"huge-burst":               {fewerAttempts, eagerRetries, cutDeadline},
	"limited-fallback":         {fewerAttempts, cutCap, noJitter},
	"controls-outage":          {fewerAttempts, noJitter, cutDeadline},
	"metastable-retry-storm":   {soonerBreaker, fewerAttempts},
	"flaky-server":             {oneAttempt, noJitter},
	"bad-day-agents":           {oneAttempt, cutCap, cutDeadline},
	"aws-occ-contention":       {fewerAttempts, noJitter, cutDeadline},
	"shared-key-agents":        {fewerAttempts, cutDeadline},
	"shared-key-tokens":        {fewerAttempts, cutDeadline},
	"stability-sim-metastable": {fewerAttempts},
	"layered-amplification":    {moreAttempts},
	"istio-sidecar-529":        {moreAttempts, noRetryOn},
	"pool-cooldown":            {oneAttempt, cutDeadline},
	"pool-cooldown-rate":       {oneAttempt, cutDeadline},
	"metastable-codel":         {oneAttempt, fewerAttempts},
	"codel-overload":           {oneAttempt, fewerAttempts},
	"billed-timeouts":          {cutDeadline},
	"brooker-retry-controls":   {oneAttempt, fewerAttempts},
	"metastable-lifo":          {fewerAttempts, cutDeadline},
	"sidecar-after-giveup":     {moreAttempts},
	"brownout":                 {fewerAttempts, cutCap, noJitter, cutDeadline},
	"hedged-tail":              {tinyHedges, cutDeadline},
	"hedge-partial-outage":     {eagerHedges, cutDeadline},
	"stalled-streams":          {oneAttempt, cutDeadline},
	"healthy":                  {halfBudget, soonerBreaker, noJitter},
	"outage":                   {soonerBreaker, oneAttempt, cutDeadline},
	"agent-fleet":              {oneAttempt, cutDeadline},
	"agent-frameworks":         {fewerAttempts, cutDeadline},
	"foreground-background":    {fewerAttempts, foregroundOnce},
	"stripe-reserve":           {bigReserve, oneAttempt},
	"envoy-admission-a1":       {moreAggressive("2")},
	"envoy-admission-a2":       {moreAggressive("3")},
	"envoy-admission-a3":       {moreAggressive("4")},
}

// foregroundOnce takes the retries from the client groups' own policies
// (foreground-background's Claude Code): one attempt, no fallback.
var foregroundOnce = regression{what: "the foreground group's policy without retries", mutate: func(s *scenarios.Scenario) *scenarios.Scenario {
	c := s.Clone()
	if w, ok := c.Workload.(*sim.Groups); ok {
		for k := range w.Members {
			if p := w.Members[k].Policy; p != nil {
				once := *p
				once.Rules.MaxAttempts, once.Fallback = 1, nil
				w.Members[k].Policy = &once
			}
		}
	}
	return c
}}

// Every listed regression fails its scenario's gate: the baseline of 30
// seeds against the changed scenario on the same seeds.
func TestGateCatchesRegressions(t *testing.T) {
	list := gateScenarios(t)
	if racetest.Enabled {
		list = list[:2]
	}
	t.Logf("| scenario | regression | failed metrics (first 3) |")
	t.Logf("| --- | --- | --- |")
	for _, s := range list {
		rs, ok := regressions[s.Name]
		if !ok {
			t.Errorf("%s: no regression listed for this scenario; add the changes its gate must catch to regressions", s.Name)
			continue
		}
		base := recorded(t, collect(t, s, 1, gateSeeds))
		for _, r := range rs {
			changed := s
			if r.mutate != nil {
				changed = r.mutate(s)
			} else {
				var err error
				if changed, err = compare.Set(s, []string{r.param}); err != nil {
					t.Errorf("%s: %s: %v", s.Name, r.what, err)
					continue
				}
			}
			cs, _ := CompareSeeds("baseline.json", base, FromMultiSeed(collect(t, changed, 1, gateSeeds)), Tolerances{Default: DefaultSeedTolerance}, DefaultAlpha)
			var failed []string
			for _, c := range cs {
				if c.Fail {
					failed = append(failed, fmt.Sprintf("%s: %s %s", c.Policy, c.Metric.Name, c.ChangeText()))
				}
			}
			if len(failed) == 0 {
				t.Errorf("%s: %s was not caught", s.Name, r.what)
				continue
			}
			t.Logf("| %s | %s | %s |", s.Name, r.what, strings.Join(failed[:min(3, len(failed))], "; "))
		}
	}
}

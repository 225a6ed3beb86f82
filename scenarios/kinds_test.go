package scenarios

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// The coordinator kinds decode into the simulator's controls, on any
// policy type.
func TestCoordinatorKinds(t *testing.T) {
	src := strings.Replace(valid, "      - name: immediate\n",
		"      - name: immediate\n        max_in_flight: 4\n        max_queue: 10\n        fallback: {after: 2, sticky: true}\n        throttle: {rate: 3}\n", 1)
	f, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p := f.Scenarios[0].Policies[0]
	wantSpecs := []machine.Spec{machine.ThrottleConfig{Count: 3, Per: time.Second}, machine.LimitConfig{MaxInFlight: 4, MaxQueue: 10}}
	if !reflect.DeepEqual(p.Coordinators, wantSpecs) ||
		p.Fallback == nil || *p.Fallback != (sim.Fallback{After: 2, Sticky: true}) {
		t.Fatalf("policy %+v", p)
	}
	want := "throttle 3 starts per 1s; at most 4 in flight, queue ≤ 10; fallback model after 2 capacity failures, sticky"
	if got := kinds.DescribeCoordination(&p); got != want {
		t.Errorf("DescribeCoordination = %q, want %q", got, want)
	}
	if got := kinds.DescribeCoordination(&f.Scenarios[0].Policies[1]); !strings.HasPrefix(got, "shared retry-after gate; throttle 6") {
		t.Errorf("gated: %q", got)
	}
}

func TestDescribeBackoff(t *testing.T) {
	for b, want := range map[policies.Backoff]string{
		policies.Constant{Wait: time.Second}:                                            "fixed 1s",
		policies.FullJitter{Base: time.Second, Factor: 2, Cap: 8 * time.Second}:         "full jitter: U(0, min(8s, 1s·2^n))",
		policies.SDKJitter{Base: time.Second, Factor: 1.5, Cap: 8 * time.Second}:        "SDK jitter: min(8s, 1s·1.5^n)·U(0.75, 1]",
		policies.DecorrelatedJitter{Base: time.Second, Cap: 8 * time.Second}:            "decorrelated jitter: min(8s, U(1s, 3·previous))",
		policies.Exponential{Base: 500 * time.Millisecond, Factor: 2, Cap: time.Minute}: "min(1m0s, 500ms·2^n)",
	} {
		if got := kinds.DescribeBackoff(b); got != want {
			t.Errorf("DescribeBackoff(%v) = %q, want %q", b, got, want)
		}
	}
	if got := (policies.EqualJitter{Base: time.Second, Factor: 2, Cap: 4 * time.Second}).String(); got != "equal-jitter(base 1s, factor 2, cap 4s)" {
		t.Errorf("String() = %q", got)
	}
}

// Every backoff kind is a policy type, and the preset follows them, in the
// order 'retrysim list' has always printed.
func TestPolicyTypes(t *testing.T) {
	var names []string
	for _, pt := range kinds.PolicyTypes() {
		names = append(names, pt.Name)
	}
	want := []string{"immediate", "capped-exponential", "full-jitter", "equal-jitter", "decorrelated-jitter", "sdk-jitter", "added-jitter", "doubling-jitter", "grpc-jitter", "gated",
		"anthropic-sdk-go", "anthropic-sdk-python", "anthropic-sdk-typescript", "openai-python", "openai-go", "openai-node",
		"aws-standard", "aws-adaptive", "grpc-throttled", "sre", "claude-code", "claude-code-background", "langchain-js", "vercel-ai-sdk",
		"anthropic-sdk", "openai-sdk", "agent-cli", "agent-cli-background"}
	if !slices.Equal(names, want) {
		t.Fatalf("policy types %v", names)
	}
	for _, c := range []kinds.Category{kinds.Backoffs, kinds.Coordinators, kinds.Servers, kinds.Workloads} {
		if len(kinds.Kinds(c)) == 0 {
			t.Errorf("no %s kinds", c)
		}
	}
}

// A parameter is set on every part that has it, on a clone; a scenario in
// which no part has it says so.
func TestParamsSetThroughKinds(t *testing.T) {
	f, err := Parse("x.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	c := s.Clone()
	base, _ := kinds.LookupParam("base")
	if err := c.Set(base, int64(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if b := c.Policies[1].Rules.Backoff.(policies.FullJitter); b.Base != 2*time.Second || b.Cap != kinds.DefaultCap {
		t.Errorf("gated backoff after base=2s: %v", b)
	}
	throttle, _ := kinds.LookupParam("throttle")
	err = c.Set(throttle, 9)
	ct, _ := specOf[machine.ThrottleConfig](&c.Policies[1])
	st, _ := specOf[machine.ThrottleConfig](&s.Policies[1])
	if err != nil || ct.Count != 9 || st.Count != 6 {
		t.Errorf("throttle=9: %v; clone %d, original %d", err, ct.Count, st.Count)
	}
	delay, _ := kinds.LookupParam("delay")
	c.Policies = c.Policies[1:]
	if err := c.Set(delay, 0); err == nil || !strings.Contains(err.Error(), "no policy of this scenario is immediate") {
		t.Errorf("delay on a scenario without immediate: %v", err)
	}
	var names []string
	for _, p := range kinds.Params() {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "clients,capacity,base,delay,outage,response_time,throttle,max_attempts,deadline,concurrency,service_time,requests_per_minute,network,rate,down_for,cap,budget_percent,budget_min_per_second,breaker_failures,breaker_open_for,hedge_delay,hedge_budget_percent,shared_throttle" {
		t.Errorf("params %v", names)
	}
}

// specOf returns p's coordinator spec of type S, if it has one.
func specOf[S machine.Spec](p *sim.Policy) (S, bool) {
	for _, s := range p.Coordinators {
		if c, ok := s.(S); ok {
			return c, true
		}
	}
	var zero S
	return zero, false
}

// The parameters of a policy's cap and retry controls set their field on
// a clone (the original keeps its own), and each names the YAML field it
// sets, which a file then reads as the same value.
func TestPolicyControlParams(t *testing.T) {
	const file = `scenarios:
  - name: x
    server: {phases: [{admit: 5, window: 1s}]}
    clients: {count: 10, max_attempts: 3}
    policies:
      - name: p
        type: full-jitter
        base: 100ms
        cap: 1s
        ratio_budget: {percent: 20}
        breaker: {consecutive_failures: 5}
`
	f, err := Parse("x.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	c := s.Clone()
	for name, v := range map[string]int64{"cap": int64(3 * time.Second), "budget_percent": 7, "budget_min_per_second": 2,
		"breaker_failures": 9, "breaker_open_for": int64(4 * time.Second)} {
		p, ok := kinds.LookupParam(name)
		if !ok || p.Field == "" {
			t.Fatalf("%s: not a policy parameter", name)
		}
		if err := c.Set(p, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if b := c.Policies[0].Rules.Backoff.(policies.FullJitter); b.Cap != 3*time.Second {
		t.Errorf("cap: %v", b)
	}
	rb, _ := specOf[policies.RatioBudgetConfig](&c.Policies[0])
	br, _ := specOf[policies.BreakerConfig](&c.Policies[0])
	if rb.Percent != 7 || rb.MinPerSecond != 2 || br.ConsecutiveFailures != 9 || br.OpenFor != 4*time.Second {
		t.Errorf("controls: %+v %+v", rb, br)
	}
	if orig, _ := specOf[policies.RatioBudgetConfig](&s.Policies[0]); orig.Percent != 20 {
		t.Errorf("the original's budget changed: %+v", orig)
	}
	written := strings.NewReplacer("cap: 1s", "cap: 3s", "{percent: 20}", "{percent: 7, min_per_second: 2}",
		"{consecutive_failures: 5}", "{consecutive_failures: 9, open_for: 4s}").Replace(file)
	g, err := Parse("y.yaml", []byte(written))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g.Scenarios[0].Policies[0], c.Policies[0]) {
		t.Errorf("the fields written load as\n%+v\nwant\n%+v", g.Scenarios[0].Policies[0], c.Policies[0])
	}
	for _, name := range []string{"clients", "capacity", "rate"} {
		if p, _ := kinds.LookupParam(name); p.Field != "" {
			t.Errorf("%s names a policy field %q", name, p.Field)
		}
	}
}

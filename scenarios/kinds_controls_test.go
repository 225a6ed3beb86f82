package scenarios

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// The retry controls and the rules fields decode from a policy's mapping;
// {} takes every default.
func TestControlKinds(t *testing.T) {
	src := strings.Replace(valid, "      - name: immediate\n", `      - name: immediate
        breaker: {consecutive_failures: 3, open_for: 5s}
        adaptive_throttle: {k: 1.5}
        retry_throttling: {}
        ratio_budget: {percent: 10, min_per_second: -1}
        retry_quota: {capacity: 100, retry_cost: 7}
        cubic_rate: {beta: 0.5, throttle_on_capacity: true}
        attempt_timeout: 2s
        server_wait: {jitter: 250ms, at_least_backoff: true, ignore_above: 90s}
`, 1)
	f, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p := f.Scenarios[0].Policies[0]
	want := []machine.Spec{
		policies.BreakerConfig{ConsecutiveFailures: 3, OpenFor: 5 * time.Second},
		policies.AdaptiveThrottleConfig{K: 1.5},
		policies.RetryThrottlingConfig{},
		policies.RatioBudgetConfig{Percent: 10, MinPerSecond: -1},
		policies.RetryQuotaConfig{Capacity: 100, RetryCost: 7},
		policies.CubicRateConfig{Beta: 0.5, ThrottleOnCapacity: true},
	}
	switch {
	case !reflect.DeepEqual(p.Coordinators, want):
		t.Errorf("coordinators %+v, want %+v", p.Coordinators, want)
	case p.Rules.AttemptTimeout != 2*time.Second || p.Rules.ServerWaitJitter != 250*time.Millisecond || !p.Rules.AtLeastBackoff || p.Rules.IgnoreServerWaitAbove != 90*time.Second:
		t.Errorf("rules %+v", p.Rules)
	}
	if d := kinds.DescribeCoordination(&p); !strings.Contains(d, "circuit breaker") || !strings.Contains(d, "retry quota of 100 tokens") {
		t.Errorf("DescribeCoordination = %q", d)
	}
}

// A field a control does not know is an error at its position.
func TestControlUnknownField(t *testing.T) {
	src := strings.Replace(valid, "      - name: immediate\n", "      - name: immediate\n        breaker: {open_for: 5s, halfopen: 2}\n", 1)
	_, err := Parse("x.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "breaker.halfopen") || !strings.Contains(err.Error(), "x.yaml:") {
		t.Fatalf("err = %v, want an error naming breaker.halfopen with its position", err)
	}
}

// Presets are plain configuration; a policy's own fields win.
func TestClientPresets(t *testing.T) {
	src := strings.Replace(valid, "      - name: immediate\n", `      - name: openai-sdk
      - name: anthropic-sdk
      - name: aws-adaptive
      - name: sre
      - name: agent-cli
      - name: mine
        type: aws-standard
        max_attempts: 5
        retry_quota: {capacity: 50}
        base: 3s
      - name: agent-cli-background
      - name: background-but-retrying
        type: agent-cli-background
        retry_capacity: true
      - name: no-529-retries
        type: full-jitter
        retry_capacity: false
      - name: unused
        type: aws-standard
        max_attempts: 5
        retry_quota: {capacity: 50}
        base: 3s
`, 1)
	f, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ps := f.Scenarios[0].Policies
	if oa := ps[0]; oa.Rules.FailServerWaitAbove != 2*time.Minute || oa.Rules.MaxAttempts != 3 || !oa.Rules.RetryByStatus || !oa.Rules.NoMidStreamRetries {
		t.Errorf("openai-sdk %+v", oa.Rules)
	}
	ps = ps[1:]
	sdk, aws, sre, agent, mine := ps[0], ps[1], ps[2], ps[3], ps[4]
	if sdk.Rules.MaxAttempts != 3 || sdk.Rules.Backoff != (policies.SDKJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 8 * time.Second}) ||
		!sdk.Rules.RetryByStatus || !sdk.Rules.NoMidStreamRetries || sdk.Rules.IgnoreServerWaitAbove+sdk.Rules.ClampServerWait+sdk.Rules.FailServerWaitAbove != 0 {
		t.Errorf("anthropic-sdk %+v", sdk.Rules)
	}
	if !reflect.DeepEqual(aws.Coordinators, []machine.Spec{policies.RetryQuotaConfig{SuccessRefund: -1}, policies.CubicRateConfig{}}) || aws.Rules.MaxAttempts != 3 {
		t.Errorf("aws-adaptive %+v", aws)
	}
	// The ratio budget the preset sets last takes its documented place,
	// after adaptive throttling.
	if !reflect.DeepEqual(sre.Coordinators, []machine.Spec{policies.AdaptiveThrottleConfig{}, policies.RatioBudgetConfig{Percent: 10, MinPerSecond: -1, CountRetries: true}}) || sre.Rules.MaxAttempts != 3 {
		t.Errorf("sre %+v", sre)
	}
	if agent.Fallback == nil || agent.Fallback.After != 3 || agent.Rules.MaxAttempts != 11 || agent.Rules.FailServerWaitAbove != time.Minute ||
		agent.Rules.Backoff != (policies.AddedJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 32 * time.Second}) {
		t.Errorf("agent-cli %+v", agent)
	}
	if q, _ := specOf[policies.RetryQuotaConfig](&mine); mine.Rules.MaxAttempts != 5 || q.Capacity != 50 {
		t.Errorf("aws-standard with overrides %+v", mine)
	}
	background, retrying, plain := ps[5], ps[6], ps[7]
	if !background.Rules.NoCapacityRetries || background.Fallback != nil || background.Rules.MaxAttempts != 11 || agent.Rules.NoCapacityRetries {
		t.Errorf("agent-cli-background %+v (agent-cli %+v)", background.Rules, agent.Rules)
	}
	if retrying.Rules.NoCapacityRetries || !plain.Rules.NoCapacityRetries {
		t.Errorf("retry_capacity: true on the background preset gives %v; false on full jitter gives %v", retrying.Rules.NoCapacityRetries, plain.Rules.NoCapacityRetries)
	}
	if b, ok := mine.Rules.Backoff.(policies.FullJitter); !ok || b.Base != 3*time.Second {
		t.Errorf("aws-standard with base 3s: backoff %v", mine.Rules.Backoff)
	}
}

// The fallback model's own capacity in a scenario file: a policy that
// falls back completes on it while the primary model rejects everything.
func TestFallbackPhases(t *testing.T) {
	src := `
scenarios:
  - name: s
    server:
      response_time: 100ms
      phases:
        - reject: overloaded
      fallback_phases:
        - admit: 5
          window: 1s
    clients:
      count: 10
      max_attempts: 6
    policies:
      - name: f
        type: immediate
        delay: 400ms
        fallback: {after: 2}
`
	f, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	if w := s.Server.(*sim.CapacityWindows); len(w.FallbackPhases) != 1 || w.FallbackPhases[0].Admit != 5 {
		t.Fatalf("fallback phases %+v", w.FallbackPhases)
	}
	r, err := sim.Run(s.Config(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != 10 || r.Fallbacks != 10 {
		t.Errorf("completed %d, fallbacks %d; want every operation done on the fallback model", r.Completed, r.Fallbacks)
	}
	bad := strings.Replace(src, "      fallback_phases:\n        - admit: 5\n          window: 1s\n", "      fallback_phases: []\n", 1)
	if _, err := Parse("x.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "fallback_phases: must list at least one phase") {
		t.Errorf("empty fallback_phases: err = %v", err)
	}
}

// server_wait's bound on a server wait: ignore, clamp or fail above it, at
// most one of them.
func TestServerWaitBounds(t *testing.T) {
	for field, check := range map[string]func(r policies.Policy) bool{
		"ignore_above": func(r policies.Policy) bool { return r.IgnoreServerWaitAbove == time.Minute },
		"clamp_to":     func(r policies.Policy) bool { return r.ClampServerWait == time.Minute },
		"fail_above":   func(r policies.Policy) bool { return r.FailServerWaitAbove == time.Minute },
		"total_cap":    func(r policies.Policy) bool { return r.TotalServerWaitCap == time.Minute },
	} {
		src := strings.Replace(valid, "      - name: immediate\n", "      - name: immediate\n        server_wait: {"+field+": 60s}\n", 1)
		f, err := Parse("x.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		if r := f.Scenarios[0].Policies[0].Rules; !check(r) {
			t.Errorf("%s: rules %+v", field, r)
		}
	}
	src := strings.Replace(valid, "      - name: immediate\n", "      - name: immediate\n        server_wait: {clamp_to: 8s, fail_above: 60s}\n", 1)
	if _, err := Parse("x.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "server_wait.fail_above") || !strings.Contains(err.Error(), "at most one of") {
		t.Fatalf("clamp_to and fail_above: err = %v", err)
	}
	// total_cap goes with any of the three; it is bounded by what an Op can sum.
	src = strings.Replace(valid, "      - name: immediate\n", "      - name: immediate\n        server_wait: {clamp_to: 8s, total_cap: 60s}\n", 1)
	if f, err := Parse("x.yaml", []byte(src)); err != nil || f.Scenarios[0].Policies[0].Rules.TotalServerWaitCap != time.Minute {
		t.Fatalf("clamp_to and total_cap: err = %v", err)
	}
	src = strings.Replace(valid, "      - name: immediate\n", "      - name: immediate\n        server_wait: {total_cap: 1h}\n", 1)
	if _, err := Parse("x.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "server_wait.total_cap") || !strings.Contains(err.Error(), "at most 10m55.35s") {
		t.Fatalf("total_cap: 1h: err = %v", err)
	}
}

// retry_mid_stream and retry_by are rules any policy can use; a bad
// retry_by names the field and the choices.
func TestSDKRuleFields(t *testing.T) {
	src := strings.Replace(valid, "      - name: immediate\n", "      - name: immediate\n        retry_mid_stream: false\n        retry_by: status\n      - name: plain\n        type: full-jitter\n", 1)
	f, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if r := f.Scenarios[0].Policies[0].Rules; !r.NoMidStreamRetries || !r.RetryByStatus {
		t.Errorf("rules %+v", r)
	}
	if r := f.Scenarios[0].Policies[1].Rules; r.NoMidStreamRetries || r.RetryByStatus {
		t.Errorf("defaults %+v", r)
	}
	bad := strings.Replace(valid, "      - name: immediate\n", "      - name: immediate\n        retry_by: code\n", 1)
	if _, err := Parse("x.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "retry_by") || !strings.Contains(err.Error(), "choose class") {
		t.Fatalf("retry_by: code: err = %v", err)
	}
}

// Every pinned preset's rules, as docs/policies.md states them; an alias
// is its preset; a policy's own field beats the preset's.
func TestPinnedPresets(t *testing.T) {
	sdkBackoff := policies.SDKJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 8 * time.Second}
	sdk := func(wait func(*policies.Policy)) policies.Policy {
		r := policies.Policy{Backoff: sdkBackoff, MaxAttempts: 3, Deadline: 20 * time.Second, RetryByStatus: true, NoMidStreamRetries: true}
		if wait != nil {
			wait(&r)
		}
		return r
	}
	// Claude Code as measured against 2.1.328: the status rule, a server
	// wait never shorter than the backoff.
	claude := policies.Policy{Backoff: policies.AddedJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 32 * time.Second},
		MaxAttempts: 11, Deadline: 20 * time.Second, FailServerWaitAbove: time.Minute, AtLeastBackoff: true, RetryByStatus: true}
	background := claude
	background.NoCapacityRetries = true
	want := map[string]policies.Policy{
		"anthropic-sdk-go":         sdk(nil),
		"anthropic-sdk-python":     sdk(func(r *policies.Policy) { r.IgnoreServerWaitAbove = time.Minute }),
		"anthropic-sdk-typescript": sdk(func(r *policies.Policy) { r.IgnoreServerWaitAbove = (1<<31 - 1) * time.Millisecond }),
		"openai-python":            sdk(func(r *policies.Policy) { r.FailServerWaitAbove = 2 * time.Minute }),
		"openai-go":                sdk(func(r *policies.Policy) { r.FailServerWaitAbove = 2 * time.Minute }),
		"openai-node":              sdk(nil),
		"claude-code":              claude,
		"claude-code-background":   background,
		"langchain-js": {Backoff: policies.DoublingJitter{Base: time.Second, Factor: 2, Cap: machine.MaxDelay}, MaxAttempts: 7,
			Deadline: 20 * time.Second, FailServerWaitAbove: time.Minute, AtLeastBackoff: true, NoMidStreamRetries: true},
		"vercel-ai-sdk": {Backoff: policies.Exponential{Base: 2 * time.Second, Factor: 2, Cap: machine.MaxDelay}, MaxAttempts: 3,
			Deadline: 20 * time.Second, IgnoreServerWaitAbove: time.Minute, RetryByStatus: true, NoMidStreamRetries: true},
	}
	aliases := map[string]string{"anthropic-sdk": "anthropic-sdk-go", "openai-sdk": "openai-python", "agent-cli": "claude-code", "agent-cli-background": "claude-code-background"}
	var list strings.Builder
	for name := range want {
		list.WriteString("      - name: " + name + "\n")
	}
	for name := range aliases {
		list.WriteString("      - name: " + name + "\n")
	}
	list.WriteString("      - name: own\n        type: anthropic-sdk-python\n        retry_by: class\n        retry_mid_stream: true\n        server_wait: {clamp_to: 5s}\n")
	f, err := Parse("x.yaml", []byte(strings.Replace(valid, "      - name: immediate\n", list.String(), 1)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]sim.Policy{}
	for _, p := range f.Scenarios[0].Policies {
		got[p.Name] = p
	}
	for name, w := range want {
		if got[name].Rules != w {
			t.Errorf("%s: rules %+v\nwant %+v", name, got[name].Rules, w)
		}
	}
	for name, of := range aliases {
		if got[name].Rules != got[of].Rules || (got[name].Fallback == nil) != (got[of].Fallback == nil) {
			t.Errorf("alias %s: %+v, want %s's %+v", name, got[name], of, got[of])
		}
	}
	if f := got["claude-code"].Fallback; f == nil || f.After != 3 || !f.Restart || got["claude-code-background"].Fallback != nil {
		t.Errorf("fallback: claude-code %v, background %v", got["claude-code"].Fallback, got["claude-code-background"].Fallback)
	}
	if r := got["own"].Rules; r.RetryByStatus || r.NoMidStreamRetries || r.IgnoreServerWaitAbove != 0 || r.ClampServerWait != 5*time.Second {
		t.Errorf("own fields on a preset: %+v", r)
	}
}

package machine

import (
	"math"
	"testing"
	"time"
)

// Every coordinator refuses, at construction, a configuration that would
// build something that does not do its job: NaN, infinities, negatives.
func TestCoordinatorsRefuseBadConfigurations(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name string
		err  func() error
	}{
		{"limiter max 0", func() error { _, err := NewLimiter(0, 0); return err }},
		{"limiter queue -1", func() error { _, err := NewLimiter(1, -1); return err }},
		{"throttle count 0", func() error { _, err := NewThrottle(0, time.Second, 0); return err }},
		{"throttle per 0", func() error { _, err := NewThrottle(1, 0, 0); return err }},
		{"quota cost -1", func() error { _, err := NewRetryQuota(RetryQuotaConfig{RetryCost: -1}); return err }},
		{"grpc ratio NaN", func() error { _, err := NewRetryThrottling(RetryThrottlingConfig{TokenRatio: nan}); return err }},
		{"grpc ratio +Inf", func() error { _, err := NewRetryThrottling(RetryThrottlingConfig{TokenRatio: inf}); return err }},
		{"grpc tokens 1001", func() error { _, err := NewRetryThrottling(RetryThrottlingConfig{MaxTokens: 1001}); return err }},
		{"ratio window -1s", func() error { _, err := NewRatioBudget(RatioBudgetConfig{Window: -time.Second}); return err }},
		{"adaptive K NaN", func() error { _, err := NewAdaptiveThrottle(AdaptiveThrottleConfig{K: nan}); return err }},
		{"adaptive K +Inf", func() error { _, err := NewAdaptiveThrottle(AdaptiveThrottleConfig{K: inf}); return err }},
		{"breaker ratio NaN", func() error { _, err := NewBreaker(BreakerConfig{FailureRatio: nan}); return err }},
		{"breaker open -1s", func() error { _, err := NewBreaker(BreakerConfig{OpenFor: -time.Second}); return err }},
		{"cubic beta NaN", func() error { _, err := NewCubicRate(CubicRateConfig{Beta: nan}); return err }},
		{"cubic scale +Inf", func() error { _, err := NewCubicRate(CubicRateConfig{Scale: inf}); return err }},
		{"cubic smoothing NaN", func() error { _, err := NewCubicRate(CubicRateConfig{Smoothing: nan}); return err }},
		{"cubic min fill -Inf", func() error { _, err := NewCubicRate(CubicRateConfig{MinFillRate: math.Inf(-1)}); return err }},
		{"cubic beta 1", func() error { _, err := NewCubicRate(CubicRateConfig{Beta: 1}); return err }},
	}
	for _, c := range cases {
		if err := c.err(); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

// A CubicRate built from a good configuration limits: after a throttle its
// bucket is empty and the next attempt waits.
func TestCubicRateLimitsAfterAThrottle(t *testing.T) {
	l, err := NewCubicRate(CubicRateConfig{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	l.Observe(now, 1, Outcome{Class: RetryAfter, Status: 429})
	var waited bool
	for range 10 {
		if a := l.Admit(now, Ask{}); a.Kind == AdmitGrant && a.At.After(now) {
			waited = true
			break
		}
	}
	if !waited {
		t.Fatal("ten attempts at one instant after a throttle: none had to wait")
	}
}

package machine

import (
	"testing"
	"time"
)

// The bucket by hand: full at 5, a retry needs more than 1 and takes 1,
// each first attempt sent adds 0.1, and a retry not sent gives its token
// back.
func TestRetryBucketRules(t *testing.T) {
	c, err := RetryBucketConfig{}.NewCoordinator()
	if err != nil {
		t.Fatal(err)
	}
	b := c.(*RetryBucket)
	now := time.Unix(0, 0)
	for i := range 4 {
		if a := b.Admit(now, Ask{Retry: true}); a.Kind != AdmitGrant {
			t.Fatalf("retry %d: %v, want a grant", i, a.Kind)
		}
	}
	if got := b.Tokens(); got != 1 {
		t.Fatalf("after 4 retries: %v tokens, want 1", got)
	}
	if a := b.Admit(now, Ask{Retry: true}); a.Kind != AdmitDeny || a.Reason != StopBudget {
		t.Fatalf("at the threshold: %+v, want a denial (budget)", a)
	}
	if a := b.Admit(now, Ask{}); a.Kind != AdmitPass {
		t.Fatalf("a first attempt: %v, want a pass", a.Kind)
	}
	b.Observe(now, 1, Outcome{Class: Transient})
	b.Observe(now, 2, Outcome{Class: Transient}) // a retry's outcome adds nothing
	if got := b.Tokens(); got != 1.1 {
		t.Fatalf("after a call: %v tokens, want 1.1", got)
	}
	b.Admit(now, Ask{Retry: true})
	b.Settle(now, Settlement{Retry: true, Sent: false})
	if got := b.Tokens(); got != 1.1 {
		t.Fatalf("after an unsent retry: %v tokens, want 1.1", got)
	}
	for range 100 {
		b.Observe(now, 1, Outcome{Class: Success})
	}
	if got := b.Tokens(); got != 5 {
		t.Fatalf("full: %v tokens, want the capacity 5", got)
	}
}

// The retry breaker counts every outcome since it was made: retries pass
// while failures are at most 10% of them.
func TestRetryBreakerRules(t *testing.T) {
	c, err := RetryBreakerConfig{}.NewCoordinator()
	if err != nil {
		t.Fatal(err)
	}
	b := c.(*RetryBreaker)
	now := time.Unix(0, 0)
	if a := b.Admit(now, Ask{Retry: true}); a.Kind != AdmitPass {
		t.Fatalf("nothing seen yet: %v, want a pass", a.Kind)
	}
	for range 9 {
		b.Observe(now, 1, Outcome{Class: Success})
	}
	b.Observe(now, 1, Outcome{Class: Capacity, Status: 529})
	if a := b.Admit(now, Ask{Retry: true}); a.Kind != AdmitPass {
		t.Fatalf("1 failure in 10: %v, want a pass", a.Kind)
	}
	b.Observe(now, 2, Outcome{Class: Transient})
	if a := b.Admit(now, Ask{Retry: true}); a.Kind != AdmitDeny || a.Reason != StopCircuitOpen {
		t.Fatalf("2 failures in 11: %+v, want a denial", a)
	}
	if a := b.Admit(now, Ask{}); a.Kind != AdmitPass {
		t.Fatalf("a first attempt: %v, want a pass", a.Kind)
	}
	for _, bad := range []Spec{RetryBreakerConfig{MaxFailureRatio: 1.5}, RetryBucketConfig{Deposit: -1}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

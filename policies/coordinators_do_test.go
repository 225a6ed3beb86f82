package policies

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies/machine"
)

// Through Do: an open breaker stops an operation before it sends anything.
func TestBreakerInDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := NewBreaker(BreakerConfig{ConsecutiveFailures: 2, OpenFor: time.Minute})
		sent := 0
		fail := func(context.Context, Attempt) error { sent++; return &HTTPError{StatusCode: 529} }
		opts := []Option{WithCoordinator(b), WithRand(rand.New(rand.NewPCG(1, 1))),
			WithPolicy(Policy{Backoff: Constant{Wait: time.Second}, MaxAttempts: 5})}
		err := Do(t.Context(), fail, opts...)
		var pe *Error
		if !errors.As(err, &pe) || pe.Reason != StopCircuitOpen || pe.Attempts != 2 || !errors.Is(err, ErrCircuitOpen) || sent != 2 {
			t.Fatalf("%v (%d sent), want circuit_open after 2 attempts", err, sent)
		}
		err = Do(t.Context(), fail, opts...)
		if !errors.As(err, &pe) || pe.Reason != StopCircuitOpen || pe.Attempts != 0 || sent != 2 {
			t.Fatalf("%v (%d sent), want circuit_open before any attempt", err, sent)
		}
		time.Sleep(time.Minute)
		if err := Do(t.Context(), func(context.Context, Attempt) error { return nil }, opts...); err != nil {
			t.Fatalf("probe after the open minute: %v", err)
		}
		if s := b.State(time.Now()); s != machine.BreakerClosed {
			t.Fatalf("state %v after a successful probe, want closed", s)
		}
	})
}

// Adaptive throttling through Do: a local rejection is not sent.
func TestAdaptiveThrottleInDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := NewAdaptiveThrottle(AdaptiveThrottleConfig{})
		for range 1000 {
			a.Observe(time.Now(), 1, Outcome{Class: Capacity, Status: 529}) // p = 1000/1001
		}
		sent := 0
		err := Do(t.Context(), func(context.Context, Attempt) error { sent++; return nil },
			WithCoordinator(a), WithRand(rand.New(rand.NewPCG(1, 1))))
		var pe *Error
		if !errors.As(err, &pe) || pe.Reason != StopThrottled || pe.Attempts != 0 || !errors.Is(err, ErrThrottled) || sent != 0 {
			t.Fatalf("%v (%d sent), want throttled before any attempt", err, sent)
		}
	})
}

// Budgets through Do: a quota of 12 pays two retries of the first failing
// operation and none of the second; a success refunds 1.
func TestRetryQuotaInDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, _ := NewRetryQuota(RetryQuotaConfig{Capacity: 12})
		fail := func(context.Context, Attempt) error { return &HTTPError{StatusCode: 503} }
		opts := []Option{WithCoordinator(q), WithRand(rand.New(rand.NewPCG(1, 1))),
			WithPolicy(Policy{Backoff: Constant{Wait: time.Second}, MaxAttempts: 10})}
		for i, want := range []int{3, 1} {
			err := Do(t.Context(), fail, opts...)
			var pe *Error
			if !errors.As(err, &pe) || pe.Reason != StopBudget || pe.Attempts != want || !errors.Is(err, ErrRetryBudget) {
				t.Fatalf("operation %d: %v, want a budget stop after %d attempts", i, err, want)
			}
		}
		if err := Do(t.Context(), func(context.Context, Attempt) error { return nil }, opts...); err != nil {
			t.Fatal(err)
		}
		if got := q.Tokens(); got != 3 {
			t.Errorf("%d tokens left, want 2 + 1", got)
		}
		// More coordinators than an Op can track: Do refuses at once.
		many := []Option{WithGate(&Gate{})}
		for range machine.MaxCoordinators {
			many = append(many, WithCoordinator(q))
		}
		if err := Do(t.Context(), fail, many...); err == nil || errors.As(err, new(*Error)) {
			t.Errorf("%d coordinators: %v, want a plain error", machine.MaxCoordinators+1, err)
		}
	})
}

// policies.Transport gives a successful response's headers to a Pacer
// among its coordinators (no Observe carries them).
func TestTransportFeedsPacer(t *testing.T) {
	p, _ := NewPacer(PacerConfig{})
	base := roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		h.Set("anthropic-ratelimit-requests-limit", "50")
		h.Set("anthropic-ratelimit-requests-remaining", "7")
		return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
	})
	client := &http.Client{Transport: &Transport{Base: base, Options: []Option{WithCoordinator(p)}}}
	resp, err := client.Get("http://api.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if l := p.Limits(time.Now()); l.Requests.Limit != 50 || l.Requests.Remaining > 7 {
		t.Errorf("the pacer knows %+v", l.Requests)
	}
}

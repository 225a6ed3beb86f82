package policies_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// A hedge is not a retry: the coordinators, the backoff and the hooks see
// the operation's attempt number. A hedged first attempt that succeeds
// earns the quota's refund for a first attempt, and a retry after a hedged
// first attempt waits the first retry's backoff.
func TestHedgeIsNotARetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, err := policies.NewRetryQuota(policies.DefaultRetryQuota())
		if err != nil {
			t.Fatal(err)
		}
		h, _ := policies.NewHedger(policies.HedgeConfig{Delay: 100 * time.Millisecond})
		backoff := policies.WithBackoff(policies.Exponential{Base: time.Second, Factor: 2})
		// A failed retry spends the quota's retry cost, not refunded.
		fail := func(context.Context, policies.Attempt) error { return &policies.HTTPError{StatusCode: 503} }
		if err := policies.Do(t.Context(), fail, policies.WithCoordinator(q), policies.WithCoordinator(h),
			policies.WithMaxAttempts(2), backoff); err == nil {
			t.Fatal("no error")
		}
		spent := q.Tokens()
		// The first copy stalls, its hedge succeeds: a successful first attempt.
		slow := func(ctx context.Context, a policies.Attempt) error {
			if a.Copy == 0 {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}
		if err := policies.Do(t.Context(), slow, policies.WithCoordinator(q), policies.WithCoordinator(h)); err != nil {
			t.Fatal(err)
		}
		refund := policies.DefaultRetryQuota().WithDefaults().SuccessRefund
		if got := q.Tokens(); got != spent+refund {
			t.Errorf("quota %d after a hedged first attempt succeeded; want %d + the refund %d", got, spent, refund)
		}
		// Both copies of the first attempt fail: the retry is retry 0.
		var events []policies.RetryEvent
		flaky := func(ctx context.Context, a policies.Attempt) error {
			if a.Number == 1 {
				time.Sleep(150 * time.Millisecond)
				return &policies.HTTPError{StatusCode: 503}
			}
			if a.Copy == 1 {
				time.Sleep(100 * time.Millisecond)
				return &policies.HTTPError{StatusCode: 503}
			}
			return nil
		}
		hooks := policies.WithHooks(policies.Hooks{OnRetryScheduled: func(e policies.RetryEvent) { events = append(events, e) }})
		if err := policies.Do(t.Context(), flaky, policies.WithCoordinator(h), backoff, hooks); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		if len(events) == 0 || events[0].Attempt != 1 || events[0].Delay != time.Second {
			t.Errorf("retries %+v; want the first after attempt 1, waiting 1s", events)
		}
	})
}

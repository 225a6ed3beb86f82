package policies_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// Do runs a policy's retry_on as the simulator does: a 529 that the rule
// does not list ends the call after one attempt and comes back as it came;
// a listed 503 is retried up to the attempt limit.
func TestDoRetryOn(t *testing.T) {
	only503, err := machine.Statuses(503)
	if err != nil {
		t.Fatal(err)
	}
	p := policies.Policy{Backoff: policies.Constant{Wait: 100 * time.Millisecond}, MaxAttempts: 3, RetryOn: machine.RetryOn{Statuses: only503}}
	for _, tt := range []struct {
		status, calls int
		reason        policies.StopReason
	}{{529, 1, policies.StopTerminal}, {503, 3, policies.StopAttempts}} {
		synctest.Test(t, func(t *testing.T) {
			calls := 0
			err := policies.Do(t.Context(), func(context.Context, policies.Attempt) error {
				calls++
				return &policies.HTTPError{StatusCode: tt.status}
			}, policies.WithPolicy(p))
			var e *policies.Error
			if !errors.As(err, &e) || calls != tt.calls || e.Reason != tt.reason || e.LastOutcome.Status != tt.status {
				t.Errorf("status %d: %d calls, err %v; want %d calls stopped by %v with the last status", tt.status, calls, err, tt.calls, tt.reason)
			}
		})
	}
}

package policies_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// slowOverloaded is an operation whose attempts take d (honouring ctx) and
// then fail with a 529.
func slowOverloaded(d time.Duration, attempts *int) policies.Operation {
	return func(ctx context.Context, _ policies.Attempt) error {
		*attempts++
		select {
		case <-time.After(d):
			return &policies.HTTPError{StatusCode: 529}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// The budget bounds the whole call: with 4 s attempts, 0.5 s waits and a
// 10 s budget, attempts start at 0, 4.5 and 9 s; the third is cut at 10 s
// (it used to run on to 13 s) and Do stops with ErrBudgetEnded.
func TestDoBudgetCutsTheAttemptInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		attempts := 0
		start := time.Now()
		err := policies.Do(t.Context(), slowOverloaded(4*time.Second, &attempts),
			policies.WithBackoff(policies.Constant{Wait: 500 * time.Millisecond}), policies.WithBudget(10*time.Second))
		if elapsed := time.Since(start); elapsed != 10*time.Second {
			t.Errorf("Do returned after %v, want at its 10 s budget", elapsed)
		}
		pe := stopped(t, err, policies.StopDeadline, 3)
		if !errors.Is(pe.Cause, policies.ErrBudgetEnded) || !errors.Is(pe.Last, context.DeadlineExceeded) {
			t.Errorf("cause %v, last %v: want ErrBudgetEnded and the attempt's context error", pe.Cause, pe.Last)
		}
		if pe.LastOutcome.Class != policies.Transient {
			t.Errorf("last outcome %v, want transient (a timeout)", pe.LastOutcome)
		}
	})
}

// lateClock oversleeps every wait by late: a wake-up after the budget must
// not send an attempt.
type lateClock struct{ late time.Duration }

func (lateClock) Now() time.Time { return time.Now() }

func (c lateClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-time.After(d + c.late):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The budget is checked again after every sleep: a 1 s wait that ends
// 0.5 s late, past a 1.2 s budget, sends nothing more.
func TestDoLateWakeUpSendsNothingPastTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		attempts := 0
		ctx := machine.WithClock(t.Context(), lateClock{late: 500 * time.Millisecond})
		err := policies.Do(ctx, slowOverloaded(0, &attempts),
			policies.WithBackoff(policies.Constant{Wait: time.Second}), policies.WithBudget(1200*time.Millisecond))
		stopped(t, err, policies.StopDeadline, 1)
		if attempts != 1 {
			t.Errorf("%d attempts sent, want 1", attempts)
		}
	})
}

// A server wait above MaxServerWait is never shortened silently: with no
// budget, Do stops at once and says what the server asked.
func TestDoRefusesServerWaitOverTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		op := func(context.Context, policies.Attempt) error {
			return &policies.HTTPError{StatusCode: 429, Header: http.Header{"Retry-After": {"360000000"}}}
		}
		err := policies.Do(t.Context(), op, policies.WithBudget(0), policies.WithMaxAttempts(5))
		pe := stopped(t, err, policies.StopDeadline, 1)
		var swe *policies.ServerWaitError
		if !errors.As(pe.Cause, &swe) || swe.Wait != 100_000*time.Hour {
			t.Fatalf("cause %v, want a ServerWaitError for 100000h", pe.Cause)
		}
		if want := "server asked to wait 100000h0m0s, more than the 24h0m0s limit"; !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
		if time.Since(start) != 0 {
			t.Errorf("Do slept %v", time.Since(start))
		}
	})
}

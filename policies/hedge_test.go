package policies_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

func TestHedgeConfigValidate(t *testing.T) {
	for _, c := range []policies.HedgeConfig{
		{Delay: -1},
		{MaxHedges: -1},
		{MaxHedges: machine.MaxHedges + 1},
		{BudgetPercent: -1},
		{BudgetBurst: -1},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if err := (policies.HedgeConfig{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
}

// The budget holds hedges to BudgetBurst + BudgetPercent/100 × attempts
// however many attempts ask.
func TestHedgeBudgetBoundsHedges(t *testing.T) {
	h, err := policies.NewHedger(policies.HedgeConfig{MaxHedges: 1, BudgetPercent: 10, BudgetBurst: 3})
	if err != nil {
		t.Fatal(err)
	}
	plan := machine.Plan{Policy: policies.Policy{Backoff: policies.Constant{}}, Coordinators: []policies.Coordinator{h}}
	now := time.Unix(0, 0)
	const attempts = 1000
	for range attempts {
		var op machine.Op
		op.Start(&plan)
		if st := op.Before(&plan, machine.Moment{Now: now}, nil, nil); st.Kind != machine.StepSend {
			t.Fatalf("Before: %+v", st)
		}
		op.Hedge(&plan, machine.Moment{Now: now}, 1)
		op.After(&plan, machine.Moment{Now: now}, policies.Outcome{}, false, nil, nil)
	}
	st := h.Stats()
	if most := int64(3 + attempts/10); st.Sent > most || st.Sent < most-1 {
		t.Errorf("%d hedges for %d attempts; want about %d", st.Sent, attempts, most)
	}
	if st.Sent+st.Denied != attempts {
		t.Errorf("sent %d + denied %d != %d asked", st.Sent, st.Denied, attempts)
	}
}

// Do sends the hedge after the delay, returns the first success, and
// cancels the slow copy's context before it returns.
func TestDoHedgeCancelsTheLoser(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, err := policies.NewHedger(policies.HedgeConfig{Delay: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		var loserCancelled atomic.Bool
		start := time.Now()
		var hedgeAt time.Duration
		op := func(ctx context.Context, a policies.Attempt) error {
			if a.Copy == 0 {
				<-ctx.Done() // stalls
				loserCancelled.Store(errors.Is(ctx.Err(), context.Canceled))
				return ctx.Err()
			}
			hedgeAt = time.Since(start)
			time.Sleep(50 * time.Millisecond)
			return nil
		}
		if err := policies.Do(t.Context(), op, policies.WithCoordinator(h)); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 150*time.Millisecond || hedgeAt != 100*time.Millisecond {
			t.Errorf("hedge at %v, done at %v; want 100ms and 150ms", hedgeAt, got)
		}
		if !loserCancelled.Load() {
			t.Error("the slow copy's context was not cancelled before Do returned")
		}
		if st := h.Stats(); st != (machine.HedgeStats{Sent: 1, Cancelled: 1}) {
			t.Errorf("stats %+v", st)
		}
	})
}

// Hedges count as attempts: MaxAttempts 2 allows one hedge and no retry.
func TestDoHedgesCountAsAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := policies.NewHedger(policies.HedgeConfig{MaxHedges: 3})
		var calls atomic.Int32
		op := func(ctx context.Context, a policies.Attempt) error {
			calls.Add(1)
			return &policies.HTTPError{StatusCode: 529}
		}
		err := policies.Do(t.Context(), op, policies.WithCoordinator(h), policies.WithMaxAttempts(2))
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopAttempts || pe.Attempts != 2 || calls.Load() != 2 {
			t.Errorf("err %v, %d calls; want StopAttempts after 2", err, calls.Load())
		}
	})
}

// A percentile delay is Delay until MinSamples latencies are known, then
// the nearest-rank percentile of the last Window.
func TestHedgePercentileDelay(t *testing.T) {
	h, err := policies.NewHedger(policies.HedgeConfig{Delay: time.Second, Percentile: 90, Window: 10, MinSamples: 3})
	if err != nil {
		t.Fatal(err)
	}
	plan := machine.Plan{Coordinators: []policies.Coordinator{h}}
	var op machine.Op
	for i, want := range []time.Duration{time.Second, time.Second, time.Second, 3 * time.Millisecond} {
		if got, _ := op.HedgeDelay(&plan); got != want {
			t.Fatalf("after %d latencies: delay %v, want %v", i, got, want)
		}
		op.HedgeLatency(&plan, time.Duration(i+1)*time.Millisecond)
	}
	for i := range 20 { // the window keeps the last 10: 11..20 ms
		op.HedgeLatency(&plan, time.Duration(i+1)*time.Millisecond)
	}
	if got, _ := op.HedgeDelay(&plan); got != 19*time.Millisecond {
		t.Errorf("p90 of 11..20 ms: %v, want 19ms", got)
	}
	if err := (policies.HedgeConfig{Percentile: 50, Window: 5, MinSamples: 6}).Validate(); err == nil {
		t.Error("min samples above the window: no error")
	}
}

type countingTransport struct{ n *atomic.Int32 }

func (c countingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, errors.New("not sent in this test")
}

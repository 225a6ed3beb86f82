package policies_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// A hedged copy that panics does not kill the process: Do cancels the
// other copies, waits for them, gives back what the attempt held and
// re-panics in the caller's goroutine, as it does without a Hedger.
func TestDoHedgedPanicReachesTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := policies.NewHedger(policies.HedgeConfig{Delay: 100 * time.Millisecond})
		lim, _ := policies.NewLimiter(1, 0)
		var otherDone atomic.Bool
		op := func(ctx context.Context, a policies.Attempt) error {
			if a.Copy == 0 {
				<-ctx.Done()
				otherDone.Store(true)
				return ctx.Err()
			}
			panic("boom")
		}
		got := func() (p any) {
			defer func() { p = recover() }()
			policies.Do(t.Context(), op, policies.WithCoordinator(h), policies.WithLimiter(lim))
			return nil
		}()
		if got != "boom" {
			t.Errorf("recovered %v; want the operation's panic", got)
		}
		if !otherDone.Load() {
			t.Error("the other copy was still running when the panic reached the caller")
		}
		if n := lim.InFlight(); n != 0 {
			t.Errorf("%d limiter slots held after the panic", n)
		}
	})
}

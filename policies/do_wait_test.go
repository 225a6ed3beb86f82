package policies_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// stopped asserts that err is a *policies.Error with the given reason and
// attempts, and returns it.
func stopped(t *testing.T, err error, reason policies.StopReason, attempts int) *policies.Error {
	t.Helper()
	var pe *policies.Error
	if !errors.As(err, &pe) {
		t.Fatalf("Do = %v, want *policies.Error", err)
	}
	if pe.Reason != reason || pe.Attempts != attempts {
		t.Fatalf("Do = %v, want %v after %d attempt(s)", err, reason, attempts)
	}
	return pe
}

// A limiter slot that frees only after the budget: Do stops at the budget
// with StopDeadline instead of waiting on until the context ends.
func TestDoLimiterWaitBoundedByBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, _ := policies.NewLimiter(1, 0)
		if err := lim.Acquire(t.Context()); err != nil { // hold the only slot
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start := time.Now()
		err := policies.Do(ctx, newScript(step{rt, nil}).op, policies.WithLimiter(lim), policies.WithBudget(3*time.Second))
		pe := stopped(t, err, policies.StopDeadline, 0)
		if pe.Elapsed != 3*time.Second || time.Since(start) != 3*time.Second {
			t.Errorf("stopped after %v (elapsed %v), want at the 3 s budget", time.Since(start), pe.Elapsed)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("budget stop reports the context's error: %v", err)
		}
		lim.ReleaseSlot()
	})
}

// A limiter slot that frees after the budget, when the budget is nearly
// spent by a retry: the slot wait is bounded by what is left.
func TestDoLimiterSlotAfterBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, _ := policies.NewLimiter(1, 0)
		done := make(chan struct{})
		go func() { // a second worker takes the slot at 1 s and keeps it 10 s
			defer close(done)
			time.Sleep(time.Second)
			_ = lim.Acquire(context.Background())
			time.Sleep(10 * time.Second)
			lim.ReleaseSlot()
		}()
		s := newScript(step{rt, httpErr(500, nil)}, step{rt, nil})
		err := policies.Do(t.Context(), s.op, policies.WithLimiter(lim), policies.WithBudget(4*time.Second),
			policies.WithBackoff(policies.Constant{Wait: 2 * time.Second}))
		pe := stopped(t, err, policies.StopDeadline, 1)
		if pe.Elapsed != 4*time.Second {
			t.Errorf("stopped after %v, want at the 4 s budget", pe.Elapsed)
		}
		<-done
	})
}

// A worker queued for the limiter when a retry-after closes the gate must
// not start before the gate opens, even though it got the slot.
func TestDoLimiterRechecksGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := &policies.Gate{}
		lim, _ := policies.NewLimiter(1, 0)
		if err := lim.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(time.Second)
			gate.Push(time.Now(), 5*time.Second) // a 429 elsewhere...
			lim.ReleaseSlot()                    // ...then its slot frees
		}()
		s := newScript(step{rt, nil})
		if err := policies.Do(t.Context(), s.op, policies.WithGate(gate), policies.WithLimiter(lim)); err != nil {
			t.Fatal(err)
		}
		if len(s.starts) != 1 || s.starts[0] != 6*time.Second {
			t.Errorf("attempt started at %v, want 6s (when the gate opened)", s.starts)
		}
		if lim.InFlight() != 0 {
			t.Errorf("%d slots still taken", lim.InFlight())
		}
	})
}

// The worker that gets a 429 pushes the gate before it frees its slot, so
// the worker queued for that slot sees the gate closed.
func TestDoPushesGateBeforeReleasingSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := &policies.Gate{}
		lim, _ := policies.NewLimiter(1, 0)
		origin := time.Now()
		var mu sync.Mutex
		var starts []time.Duration
		first := true
		op := func(ctx context.Context, a policies.Attempt) error {
			mu.Lock()
			starts = append(starts, time.Since(origin))
			rateLimited := first
			first = false
			mu.Unlock()
			time.Sleep(time.Second)
			if rateLimited {
				return httpErr(429, nil, "retry-after", "5")
			}
			return nil
		}
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 500 * time.Millisecond)
				if err := policies.Do(t.Context(), op, policies.WithGate(gate), policies.WithLimiter(lim)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		// The 429 arrived at 1 s and closed the gate until 6 s.
		for _, at := range starts {
			if at > 0 && at < 6*time.Second {
				t.Errorf("an attempt started at %v, while the gate was closed (starts %v)", at, starts)
			}
		}
	})
}

// The caller's context deadline is part of the budget: a server wait that
// would end after it stops at once.
func TestDoWaitPastContextDeadlineStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		s := newScript(step{rt, httpErr(429, nil, "retry-after", "10")}, step{rt, nil})
		err := policies.Do(ctx, s.op, policies.WithBudget(0))
		pe := stopped(t, err, policies.StopDeadline, 1)
		if pe.Elapsed != rt {
			t.Errorf("stopped after %v, want at once (%v)", pe.Elapsed, rt)
		}
	})
}

// A gate that opens after the context's deadline stops Do at once.
func TestDoGatePastContextDeadlineStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := &policies.Gate{}
		gate.Push(time.Now(), 10*time.Second)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		err := policies.Do(ctx, newScript(step{rt, nil}).op, policies.WithGate(gate))
		if pe := stopped(t, err, policies.StopDeadline, 0); pe.Elapsed != 0 {
			t.Errorf("stopped after %v, want at once", pe.Elapsed)
		}
	})
}

// A throttle slot after the context's deadline stops Do at once with
// ErrTooLate, booking nothing.
func TestDoThrottlePastContextDeadlineStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		thr, _ := policies.NewThrottle(1, 10*time.Second, 0)
		if _, err := thr.Reserve(time.Now(), time.Time{}); err != nil { // take the slot at 0
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		err := policies.Do(ctx, newScript(step{rt, nil}).op, policies.WithThrottle(thr))
		pe := stopped(t, err, policies.StopDeadline, 0)
		if pe.Elapsed != 0 || !errors.Is(err, policies.ErrTooLate) {
			t.Errorf("Do = %v after %v, want ErrTooLate at once", err, pe.Elapsed)
		}
	})
}

// A negative budget is spent before Do starts: nothing is sent.
func TestDoNegativeBudgetIsSpent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(step{rt, nil})
		var gaveUp int
		err := policies.Do(t.Context(), s.op, policies.WithBudget(-time.Second),
			policies.WithHooks(policies.Hooks{OnGiveUp: func(*policies.Error) { gaveUp++ }}))
		stopped(t, err, policies.StopDeadline, 0)
		if len(s.starts) != 0 || gaveUp != 1 {
			t.Errorf("%d attempts sent, %d give-ups reported; want 0 and 1", len(s.starts), gaveUp)
		}
	})
}

// HasOutcome tells a classified last attempt from none: the zero
// LastOutcome prints "success", which no failure is.
func TestErrorHasOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := policies.Do(ctx, newScript(step{rt, nil}).op)
		if pe := stopped(t, err, policies.StopCancelled, 0); pe.HasOutcome() {
			t.Errorf("no attempt sent, but HasOutcome is true (%v)", pe.LastOutcome.Class)
		}

		ctx, cancel = context.WithCancel(t.Context())
		time.AfterFunc(rt/2, cancel) // cancelled during the attempt
		err = policies.Do(ctx, newScript(step{rt, httpErr(500, nil)}).op)
		if pe := stopped(t, err, policies.StopCancelled, 1); pe.HasOutcome() {
			t.Errorf("attempt cancelled, but HasOutcome is true (%v)", pe.LastOutcome.Class)
		}

		err = policies.Do(t.Context(), newScript(step{rt, httpErr(400, nil)}).op)
		if pe := stopped(t, err, policies.StopTerminal, 1); !pe.HasOutcome() || pe.LastOutcome.Class != policies.Terminal {
			t.Errorf("terminal attempt: HasOutcome %v, class %v", pe.HasOutcome(), pe.LastOutcome.Class)
		}

		classifyAsSuccess := func(error, time.Time) policies.Outcome { return policies.Outcome{} }
		err = policies.Do(t.Context(), newScript(step{rt, errors.New("x")}).op, policies.WithClassifier(classifyAsSuccess))
		if pe := stopped(t, err, policies.StopTerminal, 1); !pe.HasOutcome() {
			t.Errorf("failure classified as success: HasOutcome false")
		}
	})
}

// The context's deadline is real-clock time; Do measures what is left of it
// on the real clock even when its own clock (machine.WithClock) is a fake
// one far from now.
func TestDoContextDeadlineWithFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, year := range []int{1990, 2200} {
			clk := &instantClock{now: time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			n := 0
			op := func(context.Context, policies.Attempt) error {
				if n++; n == 1 {
					return httpErr(429, nil, "retry-after", "2")
				}
				return nil
			}
			if err := policies.Do(machine.WithClock(ctx, clk), op); err != nil || n != 2 {
				t.Errorf("clock in %d: Do = %v after %d attempts, want success on the retry", year, err, n)
			}
			cancel()
		}
	})
}

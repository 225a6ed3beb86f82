package policies

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// These tests run Do from many goroutines on the real clock with budgets of
// a few milliseconds, so that budget timers, cancellations and wakes race.
// They assert invariants (bounds held, nothing leaked, no panic), never
// timings: a slow machine only makes the races rarer.

// stressOps is how many Do calls each of stressWorkers goroutines makes.
const (
	stressWorkers = 200
	stressOps     = 15
)

// stressRun runs stressWorkers goroutines, each making stressOps Do calls
// with opts plus a random budget of 0.5–3.5 ms, a random attempt length,
// and a cancellation of about one call in five. It returns the most calls
// ever inside the operation at once and the panics recovered.
func stressRun(t *testing.T, opts func(w int) []Option) (maxInside int64, panics []any) {
	t.Helper()
	var inside, most atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range stressWorkers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range stressOps {
				func() {
					defer func() {
						if r := recover(); r != nil {
							mu.Lock()
							panics = append(panics, r)
							mu.Unlock()
						}
					}()
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					if rng.IntN(5) == 0 {
						go func() { runtime.Gosched(); cancel() }()
					}
					budget := 500*time.Microsecond + time.Duration(rng.Int64N(int64(3*time.Millisecond)))
					spins := rng.IntN(50)
					op := func(ctx context.Context, _ Attempt) error {
						n := inside.Add(1)
						defer inside.Add(-1)
						for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
						}
						for range spins {
							if ctx.Err() != nil {
								return ctx.Err()
							}
							runtime.Gosched()
						}
						if rng.IntN(3) == 0 {
							return nil
						}
						return &HTTPError{StatusCode: 529}
					}
					o := append(opts(w), WithBudget(budget), WithRand(rand.New(rand.NewPCG(uint64(w), rng.Uint64()))),
						WithBackoff(Constant{Wait: 100 * time.Microsecond}), WithMaxAttempts(5))
					Do(ctx, op, o...)
				}()
			}
		})
	}
	wg.Wait()
	return most.Load(), panics
}

// A waiter woken without a slot (its latest start passed) and then
// abandoned by Do (the budget timer or a cancellation won) holds nothing:
// giving it back must not free somebody else's slot.
func TestLimiterUnderRacingBudgetsAndCancels(t *testing.T) {
	const limit = 2
	lim, err := NewLimiter(limit, 0)
	if err != nil {
		t.Fatal(err)
	}
	most, panics := stressRun(t, func(int) []Option { return []Option{WithLimiter(lim)} })
	if len(panics) > 0 {
		t.Errorf("%d panics, the first: %v", len(panics), panics[0])
	}
	if most > limit {
		t.Errorf("%d operations ran at once under a limit of %d", most, limit)
	}
	if n := lim.InFlight(); n != 0 {
		t.Errorf("%d slots still taken after every call returned", n)
	}
	if n := lim.pending(); n != 0 {
		t.Errorf("the limiter still tracks %d waiters after every call returned", n)
	}
}

// Every coordinator together, shared by all goroutines: the limiter's bound
// holds, nothing panics, and when every call has returned nothing is held.
func TestEveryCoordinatorUnderRacingBudgetsAndCancels(t *testing.T) {
	const limit = 3
	lim, _ := NewLimiter(limit, 50)
	th, _ := NewThrottle(20000, time.Second, 100)
	quota, err := NewRetryQuota(RetryQuotaConfig{})
	if err != nil {
		t.Fatal(err)
	}
	grpc, err := NewRetryThrottling(RetryThrottlingConfig{MaxTokens: 10, TokenRatio: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	ratio, err := NewRatioBudget(RatioBudgetConfig{Percent: 20, MinPerSecond: 10})
	if err != nil {
		t.Fatal(err)
	}
	adaptive, err := NewAdaptiveThrottle(AdaptiveThrottleConfig{})
	if err != nil {
		t.Fatal(err)
	}
	br, err := NewBreaker(BreakerConfig{ConsecutiveFailures: 5, OpenFor: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cubic, err := NewCubicRate(CubicRateConfig{ThrottleOnCapacity: true})
	if err != nil {
		t.Fatal(err)
	}
	var gate Gate
	most, panics := stressRun(t, func(int) []Option {
		return []Option{WithGate(&gate), WithThrottle(th), WithLimiter(lim),
			WithCoordinator(quota), WithCoordinator(grpc), WithCoordinator(ratio),
			WithCoordinator(adaptive), WithCoordinator(br), WithCoordinator(cubic)}
	})
	if len(panics) > 0 {
		t.Errorf("%d panics, the first: %v", len(panics), panics[0])
	}
	if most > limit {
		t.Errorf("%d operations ran at once under a limit of %d", most, limit)
	}
	if n := lim.InFlight(); n != 0 {
		t.Errorf("limiter: %d slots still taken after every call returned", n)
	}
	if n := lim.pending(); n != 0 {
		t.Errorf("limiter: still tracks %d waiters after every call returned", n)
	}
	if tokens, max := quota.Tokens(), DefaultRetryQuota().Capacity; tokens < 0 || tokens > max {
		t.Errorf("retry quota: %d tokens, want within [0, %d]", tokens, max)
	}
	if tokens := grpc.Tokens(); tokens < 0 || tokens > 10 {
		t.Errorf("retry throttling: %v tokens, want within [0, 10]", tokens)
	}
	br.mu.Lock()
	if br.state == BreakerHalfOpen && br.probes != 0 {
		t.Errorf("breaker: %d probes still admitted after every call returned", br.probes)
	}
	br.mu.Unlock()
	// Every first attempt and retry admitted was sent or taken off again:
	// retries never exceed what the budget allows over its window.
	if requests, retries := ratio.Counts(time.Now()); retries < 0 || requests < 0 || 100*retries > 20*requests+100*10*10 {
		t.Errorf("ratio budget: %d retries for %d requests, beyond 20%% plus the reserve", retries, requests)
	}
}

// recordingWaiter notes its wakes without telling its operation, as Do's
// waiter does when the budget timer wins the race with the wake.
type recordingWaiter struct{ wakes []bool }

func (w *recordingWaiter) Wake(_ time.Time, granted bool) { w.wakes = append(w.wakes, granted) }

// The limiter, not the driver's timing, knows that a waiter woken without a
// slot holds none: abandoning it before its Op saw the wake frees nothing.
func TestLimiterWaiterWokenWithoutSlotHoldsNothing(t *testing.T) {
	lim, _ := NewLimiter(1, 0)
	plan := Plan{Policy: Policy{Deadline: time.Second}, Coordinators: []Coordinator{lim}}
	var a, b Op
	a.Start(&plan)
	b.Start(&plan)
	wa, wb := &recordingWaiter{}, &recordingWaiter{}
	if st := a.Before(&plan, Moment{Now: at(0)}, wa, nil); st.Kind != StepSend {
		t.Fatalf("a: %v, want a send", st.Kind)
	}
	if st := b.Before(&plan, Moment{Now: at(0)}, wb, nil); st.Kind != StepBlock {
		t.Fatalf("b: %v, want to queue", st.Kind)
	}
	// a's attempt ends after b's latest start (1 s): b is woken without a slot.
	a.After(&plan, Moment{Now: at(2 * time.Second), Since: 2 * time.Second}, Outcome{}, false, nil, nil)
	if len(wb.wakes) != 1 || wb.wakes[0] {
		t.Fatalf("b's wakes %v, want one without a slot", wb.wakes)
	}
	if n := lim.InFlight(); n != 0 {
		t.Fatalf("%d slots taken after a's attempt, want 0", n)
	}
	// A third operation takes the free slot; then b, which never saw its
	// wake, is abandoned. That must not free the third one's slot.
	var c Op
	c.Start(&plan)
	if st := c.Before(&plan, Moment{Now: at(2 * time.Second)}, &recordingWaiter{}, nil); st.Kind != StepSend {
		t.Fatalf("c: %v, want a send", st.Kind)
	}
	b.Abandon(&plan, at(2*time.Second), wb)
	if n := lim.InFlight(); n != 1 {
		t.Fatalf("%d slots taken after b was abandoned, want c's 1", n)
	}
	if n := lim.pending(); n != 0 {
		t.Fatalf("the limiter still tracks %d waiters", n)
	}
}

// An operation woken without a slot gives back what earlier coordinators
// granted its attempt before it asks them again: a ratio budget does not
// count the same first attempt twice.
func TestWokenWithoutSlotReturnsEarlierGrants(t *testing.T) {
	lim, _ := NewLimiter(1, 0)
	budget, _ := NewRatioBudget(RatioBudgetConfig{})
	plan := Plan{Coordinators: []Coordinator{budget, lim}}
	var a, b Op
	a.Start(&plan)
	b.Start(&plan)
	if st := a.Before(&plan, Moment{Now: at(0)}, &recordingWaiter{}, nil); st.Kind != StepSend {
		t.Fatalf("a: %v, want a send", st.Kind)
	}
	wb := &recordingWaiter{}
	// b accepts starts up to 1 s (the driver's cutoff).
	if st := b.Before(&plan, Moment{Now: at(0), Cutoff: at(time.Second)}, wb, nil); st.Kind != StepBlock {
		t.Fatalf("b: %v, want to queue", st.Kind)
	}
	a.After(&plan, Moment{Now: at(2 * time.Second)}, Outcome{}, false, nil, nil)
	b.Woken(false)
	// The driver asks again with a later cutoff: b may still start.
	if st := b.Before(&plan, Moment{Now: at(2 * time.Second), Cutoff: at(3 * time.Second)}, wb, nil); st.Kind != StepSend {
		t.Fatalf("b after its wake: %v, want a send", st.Kind)
	}
	if requests, _ := budget.Counts(at(2 * time.Second)); requests != 2 {
		t.Fatalf("the budget counts %d first attempts, want 2 (a's and b's)", requests)
	}
}

// toyQueue is a blocking coordinator written to the older contract: it
// queues every ask and counts the Releases it gets. It is not an
// UnslottedTracker.
type toyQueue struct {
	waiting  []Waiter
	releases int
}

func (q *toyQueue) Admit(_ time.Time, a Ask) Admission {
	q.waiting = append(q.waiting, a.Waiter)
	return Admission{Kind: AdmitBlock}
}
func (q *toyQueue) Observe(time.Time, int, Outcome) {}
func (q *toyQueue) Release(time.Time, Waiter, bool) { q.releases++ }

// A blocking coordinator that does not track unslotted waiters is not told
// again after it woke an operation without a grant (its hold ended with
// the wake), while what an earlier coordinator granted is given back.
func TestWokenWithoutSlotUntrackedCoordinator(t *testing.T) {
	q := &toyQueue{}
	budget, _ := NewRatioBudget(RatioBudgetConfig{})
	plan := Plan{Coordinators: []Coordinator{budget, q}}
	var o Op
	o.Start(&plan)
	w := &recordingWaiter{}
	if st := o.Before(&plan, Moment{Now: at(0), Cutoff: at(time.Second)}, w, nil); st.Kind != StepBlock {
		t.Fatalf("%v, want to queue", st.Kind)
	}
	o.Woken(false)
	if st := o.Before(&plan, Moment{Now: at(2 * time.Second), Cutoff: at(time.Second)}, w, nil); st.Kind != StepStop {
		t.Fatalf("after a wake without a grant: %v, want a stop", st.Kind)
	}
	if q.releases != 0 {
		t.Errorf("the untracked coordinator got %d Releases after its wake without a grant, want 0", q.releases)
	}
	if requests, _ := budget.Counts(at(2 * time.Second)); requests != 0 {
		t.Errorf("the budget still counts %d first attempts for an operation that never sent one", requests)
	}
}

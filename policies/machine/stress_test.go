package machine_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
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
func stressRun(t *testing.T, opts func(w int) []policies.Option) (maxInside int64, panics []any) {
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
					op := func(ctx context.Context, _ policies.Attempt) error {
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
						return &policies.HTTPError{StatusCode: 529}
					}
					o := append(opts(w), policies.WithBudget(budget), policies.WithRand(rand.New(rand.NewPCG(uint64(w), rng.Uint64()))),
						policies.WithBackoff(policies.Constant{Wait: 100 * time.Microsecond}), policies.WithMaxAttempts(5))
					policies.Do(ctx, op, o...)
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
	lim, err := policies.NewLimiter(limit, 0)
	if err != nil {
		t.Fatal(err)
	}
	most, panics := stressRun(t, func(int) []policies.Option { return []policies.Option{policies.WithLimiter(lim)} })
	if len(panics) > 0 {
		t.Errorf("%d panics, the first: %v", len(panics), panics[0])
	}
	if most > limit {
		t.Errorf("%d operations ran at once under a limit of %d", most, limit)
	}
	if n := lim.InFlight(); n != 0 {
		t.Errorf("%d slots still taken after every call returned", n)
	}
	if n := lim.Pending(); n != 0 {
		t.Errorf("the limiter still tracks %d waiters after every call returned", n)
	}
}

// Every coordinator together, shared by all goroutines: the limiter's bound
// holds, nothing panics, and when every call has returned nothing is held.
func TestEveryCoordinatorUnderRacingBudgetsAndCancels(t *testing.T) {
	const limit = 3
	lim, _ := policies.NewLimiter(limit, 50)
	th, _ := policies.NewThrottle(20000, time.Second, 100)
	quota, err := policies.NewRetryQuota(policies.RetryQuotaConfig{})
	if err != nil {
		t.Fatal(err)
	}
	grpc, err := policies.NewRetryThrottling(policies.RetryThrottlingConfig{MaxTokens: 10, TokenRatio: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	ratio, err := policies.NewRatioBudget(policies.RatioBudgetConfig{Percent: 20, MinPerSecond: 10})
	if err != nil {
		t.Fatal(err)
	}
	adaptive, err := policies.NewAdaptiveThrottle(policies.AdaptiveThrottleConfig{})
	if err != nil {
		t.Fatal(err)
	}
	br, err := policies.NewBreaker(policies.BreakerConfig{ConsecutiveFailures: 5, OpenFor: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cubic, err := policies.NewCubicRate(policies.CubicRateConfig{ThrottleOnCapacity: true})
	if err != nil {
		t.Fatal(err)
	}
	var gate policies.Gate
	most, panics := stressRun(t, func(int) []policies.Option {
		return []policies.Option{policies.WithGate(&gate), policies.WithThrottle(th), policies.WithLimiter(lim),
			policies.WithCoordinator(quota), policies.WithCoordinator(grpc), policies.WithCoordinator(ratio),
			policies.WithCoordinator(adaptive), policies.WithCoordinator(br), policies.WithCoordinator(cubic)}
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
	if n := lim.Pending(); n != 0 {
		t.Errorf("limiter: still tracks %d waiters after every call returned", n)
	}
	if tokens, max := quota.Tokens(), policies.DefaultRetryQuota().Capacity; tokens < 0 || tokens > max {
		t.Errorf("retry quota: %d tokens, want within [0, %d]", tokens, max)
	}
	if tokens := grpc.Tokens(); tokens < 0 || tokens > 10 {
		t.Errorf("retry throttling: %v tokens, want within [0, 10]", tokens)
	}
	if state, probes := br.Probes(); state == machine.BreakerHalfOpen && probes != 0 {
		t.Errorf("breaker: %d probes still admitted after every call returned", probes)
	}
	// Every first attempt and retry admitted was sent or taken off again:
	// retries never exceed what the budget allows over its window.
	if requests, retries := ratio.Counts(time.Now()); retries < 0 || requests < 0 || 100*retries > 20*requests+100*10*10 {
		t.Errorf("ratio budget: %d retries for %d requests, beyond 20%% plus the reserve", retries, requests)
	}
}

package scenarios_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/scenarios"
)

// The policy a scenario file gates in CI runs in production: limited-fallback's
// policy (full jitter, at most 6 in flight, the fallback model after 2
// capacity failures) loaded from the built-in file drives policies.Do.
func TestClientOptionsRunTheScenarioPolicy(t *testing.T) {
	p, err := scenarios.LoadPolicy("", "limited-fallback", "limited-fallback")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scenarios.ClientOptions(p, "", ""); err == nil || !strings.Contains(err.Error(), "name the primary and fallback") {
		t.Errorf("a fallback without model names: err = %v", err)
	}
	opts, err := scenarios.ClientOptions(p, "big", "small")
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		var (
			mu               sync.Mutex
			inFlight, peak   int
			models           = map[string]int{}
			calls, completed int
		)
		op := func(ctx context.Context, a policies.Attempt) error {
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight)
			models[a.Model]++
			calls++
			first := a.Number <= 2
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			inFlight--
			mu.Unlock()
			if first {
				return &policies.HTTPError{StatusCode: 529}
			}
			return nil
		}
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if err := policies.Do(t.Context(), op, opts...); err == nil {
					mu.Lock()
					completed++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if peak > 6 || peak < 2 {
			t.Errorf("%d attempts in flight at once, want at most 6 (and the limit reached)", peak)
		}
		if completed != 20 || models["small"] != 20 || models["big"] != 40 {
			t.Errorf("completed %d, models %v: want every operation to switch to the fallback after 2 failures", completed, models)
		}
	})
	// A policy name the scenario does not have is an error naming it and listing those it has.
	if _, err := scenarios.LoadPolicy("", "limited-fallback", "nope"); err == nil || !strings.Contains(err.Error(), `policy "nope": scenario limited-fallback has no such policy (have: full-jitter, limited-fallback)`) {
		t.Errorf("unknown policy: err = %v", err)
	}
}

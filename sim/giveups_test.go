package sim

import (
	"context"
	"slices"
	"testing"
	"time"
)

// Every give-up records how long after its operation's start it happened,
// sorted: in the reference burst immediate retries spend their 8 attempts
// inside the 2 s outage and give up together.
func TestGiveUpTimes(t *testing.T) {
	for _, cfg := range []Config{reference(immediate), reference(exponential)} {
		res, err := RunContext(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GiveUps) != res.GaveUp || !slices.IsSorted(res.GiveUps) {
			t.Fatalf("%s: %d give-up times (sorted %v) for %d give-ups", res.Policy, len(res.GiveUps), slices.IsSorted(res.GiveUps), res.GaveUp)
		}
		for _, d := range res.GiveUps {
			if d <= 0 || d > 30*time.Second {
				t.Errorf("%s: give-up after %v", res.Policy, d)
			}
		}
		if p, ok := res.GiveUpPercentile(50); ok != (res.GaveUp > 0) || (ok && p != res.GiveUps[(len(res.GiveUps)-1)/2]) {
			t.Errorf("%s: median give-up %v, %v", res.Policy, p, ok)
		}
	}
}

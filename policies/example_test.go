package policies_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// The capped exponential backoff of the reference scenario.
func ExampleExponential() {
	b := policies.Exponential{Base: 500 * time.Millisecond, Factor: 2, Cap: 8 * time.Second}
	for n := range 6 {
		fmt.Print(b.Delay(n, 0, nil), " ")
	}
	// Output: 500ms 1s 2s 4s 8s 8s
}

// A policy decides after each failed attempt; time and randomness are passed
// in, so the same call gives the same answer in a simulator and in production.
func ExamplePolicy_Next() {
	p := policies.Policy{
		Backoff:     policies.FullJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 8 * time.Second},
		MaxAttempts: 3,
		Deadline:    20 * time.Second,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	overloaded := policies.Outcome{Class: policies.Capacity, Status: 529}

	d := p.Next(1, 0, 100*time.Millisecond, overloaded, rng)
	fmt.Println("after attempt 1: stop =", d.Stop, "| wait within [0, 500ms):", d.Delay >= 0 && d.Delay < 500*time.Millisecond)
	d = p.Next(3, d.Delay, 2*time.Second, overloaded, rng)
	fmt.Println("after attempt 3: stop =", d.Stop)
	d = p.Next(1, 0, 0, policies.Outcome{Class: policies.RetryAfter, Status: 429, ServerWait: 5 * time.Second}, rng)
	fmt.Println("429 asking for 5s: stop =", d.Stop, "| wait:", d.Delay)
	// A server wait past the deadline stops at once rather than sleeping.
	d = p.Next(1, 0, 0, policies.Outcome{Class: policies.RetryAfter, Status: 429, ServerWait: 30 * time.Second}, rng)
	fmt.Println("429 asking for 30s: stop =", d.Stop)
	// Output:
	// after attempt 1: stop = none | wait within [0, 500ms): true
	// after attempt 3: stop = attempts
	// 429 asking for 5s: stop = none | wait: 5s
	// 429 asking for 30s: stop = deadline
}

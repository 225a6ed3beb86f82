package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// goodput buckets the useful completions of a run (successes that reach a
// client still waiting) into windows of width w.
func goodput(log []exchange, w time.Duration, buckets int) []int {
	out := make([]int, buckets)
	for _, e := range log {
		if e.res.Outcome.Class != policies.Success || (e.req.GiveUpAt > 0 && e.res.At > e.req.GiveUpAt) {
			continue
		}
		if b := int(e.res.At / w); b < buckets {
			out[b]++
		}
	}
	return out
}

// metastable is the metastability experiment: open-loop Poisson arrivals
// at 70/s for 120 s against 10 workers of exponential service (mean
// 100 ms: capacity 100/s, load 70 %); from 20 s to 30 s only 5 workers
// (capacity 50/s). Clients time out after 1 s.
func metastable(seed uint64, maxAttempts int, log *[]exchange) Config {
	return Config{Seed: seed,
		Server: recorder{&Queue{Service: Exponential{Mean: 100 * ms},
			Phases: []WorkerPhase{{Duration: 20 * sec, Concurrency: 10}, {Duration: 10 * sec, Concurrency: 5}, {Concurrency: 10}}}, log},
		Workload: &OpenLoop{Rates: ConstantRate(70), Until: 120 * sec},
		Policy: Policy{Name: fmt.Sprintf("%d attempts", maxAttempts), Rules: policies.Policy{
			Backoff: policies.Constant{}, MaxAttempts: maxAttempts, AttemptTimeout: sec}},
	}
}

// Retries of timed-out work keep the server collapsed after the trigger is
// gone: with 3 immediate retries, goodput falls to almost nothing during
// the halved capacity and stays there until arrivals stop; without
// retries the queue drains within seconds of capacity coming back and
// goodput returns to the offered 70/s. Before the trigger both serve all.
func TestQueueMetastableWithRetries(t *testing.T) {
	const window = 10 * sec
	for seed := uint64(1); seed <= 3; seed++ {
		var withLog, withoutLog []exchange
		with := mustRun(t, metastable(seed, 4, &withLog))
		without := mustRun(t, metastable(seed, 1, &withoutLog))
		g, g0 := goodput(withLog, window, 12), goodput(withoutLog, window, 12)
		t.Logf("seed %d: goodput per 10 s, 3 retries: %v; attempts %d for %d operations, completed %d, wasted %d of %d served",
			seed, g, with.Attempts, with.Clients, with.Completed, counter(with, "server.wasted"), counter(with, "server.served"))
		t.Logf("seed %d: goodput per 10 s, no retries: %v; completed %d of %d, wasted %d of %d served",
			seed, g0, without.Completed, without.Clients, counter(without, "server.wasted"), counter(without, "server.served"))
		for b := 0; b < 2; b++ { // before the trigger: all served
			if g[b] < 600 || g0[b] < 600 {
				t.Errorf("seed %d, window %d: goodput %d and %d per 10 s before the trigger, want ~700 each", seed, b, g[b], g0[b])
			}
		}
		for b := 4; b < 12; b++ { // from 40 s on
			if g0[b] < 600 {
				t.Errorf("seed %d, window %d: without retries goodput %d, want recovered (~700)", seed, b, g0[b])
			}
			if g[b] > 100 {
				t.Errorf("seed %d, window %d: with retries goodput %d, want still collapsed (< 100)", seed, b, g[b])
			}
		}
	}
}

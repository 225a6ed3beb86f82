// Package runs is retrysim's orchestration: it runs the policies of a
// scenario on one seed or many, at every point of a sweep, and for the
// plots (timelines, pooled latencies), in parallel across runs and merged in
// a fixed order, so that what it returns does not depend on scheduling. It
// keeps each run's metrics (package metrics), unrounded; presentation is the
// report package's.
package runs

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// One simulates every policy of s on one seed, in parallel, and returns
// the results in the scenario's policy order.
func One(ctx context.Context, s *scenarios.Scenario, seed uint64) ([]sim.Result, error) {
	results := make([]sim.Result, len(s.Policies))
	err := Seeds(ctx, s, seed, 1, 0, func(_, p int, r *sim.Result) {
		results[p] = *r
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// chunksPerWorker sets the size of the chunks of jobs Seeds hands out.
// A run of a small scenario takes microseconds, so handing jobs out one at a
// time costs as much as running them; in chunks, a worker goes to the shared
// counter a few hundred times in all. Each chunk is a 1/(workers ·
// chunksPerWorker) share of the jobs not yet handed out (guided
// scheduling): large at first, then smaller and smaller, down to one job, so
// that the workers finish within about one run of each other however the
// runs' costs vary.
const chunksPerWorker = 16

// chunkSize is how many consecutive jobs a worker takes when remaining jobs
// are left to hand out to workers workers; at least 1.
func chunkSize(remaining, workers int) int {
	return max(1, remaining/(max(1, workers)*chunksPerWorker))
}

// Seeds simulates every policy of s on seeds first, first+1, …,
// first+k−1, spread over workers goroutines (0 means GOMAXPROCS, fewer when
// the runs together would need more memory than ParallelWorkers
// allows). For each
// run it calls each(seedIndex, policyIndex, result) from a worker goroutine;
// each must only store what it needs at that index (the pairs are distinct),
// so that what the caller builds does not depend on scheduling. The result
// is only valid during the call. Seeds stops early when ctx is cancelled
// (runs already started finish) and returns the first error in (seed,
// policy) order.
func Seeds(ctx context.Context, s *scenarios.Scenario, first uint64, k, workers int, each func(seed, policy int, r *sim.Result)) error {
	return seedList(ctx, s, first, k, nil, workers, each)
}

// seedList is Seeds over k seeds, first+at[0], first+at[1], … when at is
// set (then k is len(at)), first, first+1, … when it is nil. each gets the
// position in that list, not the seed's offset.
func seedList(ctx context.Context, s *scenarios.Scenario, first uint64, k int, at []int, workers int, each func(seed, policy int, r *sim.Result)) error {
	if workers <= 0 {
		workers = ParallelWorkers(runtime.GOMAXPROCS(0), s.Operations())
	}
	np := len(s.Policies)
	total := k * np
	workers = min(workers, total)
	errs := make([]error, total)
	// Job j is (seed j/np, policy j%np). Workers take chunks of
	// consecutive jobs from next; which worker runs a job changes nothing
	// but where it runs.
	var next atomic.Int64
	take := func() (start, end int) {
		for {
			start := int(next.Load())
			if start >= total {
				return total, total
			}
			end := start + chunkSize(total-start, workers)
			if next.CompareAndSwap(int64(start), int64(end)) {
				return start, end
			}
		}
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var runner sim.Runner // reuses its memory from run to run
			for {
				start, end := take()
				if start >= total {
					return
				}
				for j := start; j < end; j++ {
					if ctx.Err() != nil {
						return
					}
					seed, p := j/np, j%np
					offset := seed
					if at != nil {
						offset = at[seed]
					}
					r, err := runOne(ctx, &runner, s.Config(p, first+uint64(offset)), p)
					if err != nil {
						errs[j] = err
						continue
					}
					each(seed, p, &r)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// PanicError is a run that panicked: a bug, returned as an error so that
// the caller decides how to report it. Stack is the panicking goroutine's.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// runOne runs cfg, the run of policy p, turning a panic into a
// *PanicError (and resetting the runner, whose state is then unknown). It
// reports to the Progress in ctx, if any.
func runOne(ctx context.Context, runner *sim.Runner, cfg sim.Config, p int) (r sim.Result, err error) {
	end := watch(ctx, &cfg, p)
	defer func() {
		if v := recover(); v != nil {
			*runner = sim.Runner{}
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
		end(r.Events)
	}()
	return runner.RunContext(ctx, cfg)
}

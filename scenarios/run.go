package scenarios

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/retrysim/retrysim/sim"
)

// Run simulates every policy of s on one seed, each in its own goroutine,
// and returns the results in the scenario's policy order.
func (s *Scenario) Run(ctx context.Context, seed uint64) ([]sim.Result, error) {
	results := make([]sim.Result, len(s.Policies))
	err := s.RunSeeds(ctx, seed, 1, 0, func(_, p int, r *sim.Result) {
		results[p] = *r
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// parallelMemory is the memory that concurrent runs may take together when
// RunSeeds picks the number of workers itself: each run holds about
// bytesPerClient per client, so huge bursts run on fewer cores rather than
// exhausting memory on a machine with many.
const (
	parallelMemory int64 = 16 << 30
	bytesPerClient int64 = 100 // measured: docs/performance.md
)

// autoWorkers is one worker per core, but no more than fit parallelMemory.
func autoWorkers(cores, clients int) int {
	return int(min(int64(cores), max(1, parallelMemory/(int64(clients)*bytesPerClient))))
}

// chunksPerWorker sets the size of the chunks of jobs RunSeeds hands out.
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

// RunSeeds simulates every policy of s on seeds first, first+1, …,
// first+k−1, spread over workers goroutines (0 means GOMAXPROCS, fewer when
// the runs together would need more than 16 GiB). For each
// run it calls each(seedIndex, policyIndex, result) from a worker goroutine;
// each must only store what it needs at that index (the pairs are distinct),
// so that what the caller builds does not depend on scheduling. The result
// is only valid during the call. RunSeeds stops early when ctx is cancelled
// (runs already started finish) and returns the first error in (seed,
// policy) order.
func (s *Scenario) RunSeeds(ctx context.Context, first uint64, k, workers int, each func(seed, policy int, r *sim.Result)) error {
	if workers <= 0 {
		workers = autoWorkers(runtime.GOMAXPROCS(0), s.Workload.Clients)
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
					r, err := runOne(ctx, &runner, s.Config(p, first+uint64(seed)))
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

// runOne runs cfg, turning a panic into a *PanicError (and resetting the
// runner, whose state is then unknown).
func runOne(ctx context.Context, runner *sim.Runner, cfg sim.Config) (r sim.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			*runner = sim.Runner{}
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return runner.RunContext(ctx, cfg)
}

package runs

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/cputime"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// benchSeeds is a mid-sized scenario for multi-seed benchmarks: 10,000
// clients, two policies.
const benchSeeds = `
scenarios:
  - name: seeds
    server:
      phases:
        - duration: 5s
        - admit: 2000
          window: 1s
    clients:
      count: 10000
      max_attempts: 10
      deadline: 1m
    policies:
      - name: full-jitter
        cap: 20s
      - name: capped-exponential
        cap: 20s
`

// seedBenchScenarios returns the benchmarks' two scenarios: benchSeeds
// (10,000 clients) and the built-in default one.
func seedBenchScenarios(b *testing.B) (mid, def *scenarios.Scenario) {
	b.Helper()
	f, err := scenarios.Parse("bench.yaml", []byte(benchSeeds))
	if err != nil {
		b.Fatal(err)
	}
	builtin, err := scenarios.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	if def, err = builtin.Lookup(builtin.Default); err != nil {
		b.Fatal(err)
	}
	return f.Scenarios[0], def
}

// BenchmarkRunSeeds runs seeds through Seeds on 1 and on 2 workers, for
// two kinds of run. The speed-up is runs/s at workers=2 over runs/s at
// workers=1 (docs/performance.md). Run it with -cpu 2 so that two cores are
// there.
//
//   - workers=W: 32 seeds of a 10,000-client scenario; each run takes
//     milliseconds, so the simulation is all the work.
//   - default-1000-seeds/workers=W: 1000 seeds of the built-in default
//     scenario, as 'retrysim compare --seeds 1000' runs them; each run takes
//     microseconds, so handing out the runs must cost much less than that
//     for two workers to gain anything.
func BenchmarkRunSeeds(b *testing.B) {
	mid, def := seedBenchScenarios(b)
	for _, bench := range []struct {
		prefix string
		s      *scenarios.Scenario
		seeds  int
	}{
		{"", mid, 32},
		{"default-1000-seeds/", def, 1000},
	} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%sworkers=%d", bench.prefix, workers), func(b *testing.B) {
				s := bench.s
				runs := 0
				for b.Loop() {
					err := Seeds(context.Background(), s, s.Seed, bench.seeds, workers, func(_, _ int, r *sim.Result) {})
					if err != nil {
						b.Fatal(err)
					}
					runs += bench.seeds * len(s.Policies)
				}
				b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
			})
		}
	}
}

// BenchmarkParallelCeiling is the control for BenchmarkRunSeeds: the same
// number of jobs, split over workers the same way, but each job is pure
// arithmetic with no memory traffic. Its speed-up from 1 to 2 workers is the
// most this machine gives any code; on a machine with two free cores it is 2.
func BenchmarkParallelCeiling(b *testing.B) {
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			done := 0
			for b.Loop() {
				done += ceiling(workers, 64, 2_000_000)
			}
			b.ReportMetric(float64(done)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}

// ceilingSink keeps the arithmetic of ceiling from being optimised away.
var ceilingSink [2]uint64

// ceiling runs jobs jobs of work steps of pure arithmetic on workers
// goroutines fed by a channel, and returns jobs.
func ceiling(workers, jobs, work int) int {
	ch := make(chan int)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			x := uint64(w + 1)
			for range ch {
				for range work {
					x = x*6364136223846793005 + 1442695040888963407
				}
			}
			ceilingSink[w] = x
		})
	}
	for j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	return jobs
}

// BenchmarkRunSeedsSpeedup alternates 1 and 2 workers on the same seeds
// within every iteration and reports the ratio of their wall times
// (speedup), so that a machine whose speed drifts (a shared VM) affects both
// alike. It also reports the CPU time of 2 workers over that of 1
// (cpu-ratio: 1 means running in parallel costs no extra work), the cores
// the 2-worker runs actually got (cores-used: CPU time over wall time), and,
// as a control timed in the same iteration, the speed-up of pure arithmetic
// split the same way (ceiling-speedup: what the machine gave any code at
// that moment; 2 on two idle cores). Run it with -cpu 2.
//
//   - 32-seeds: 32 seeds of a 10,000-client scenario (runs of milliseconds).
//   - default-1000-seeds: 1000 seeds of the built-in default scenario, as
//     'retrysim compare --seeds 1000' runs them (runs of microseconds).
func BenchmarkRunSeedsSpeedup(b *testing.B) {
	mid, def := seedBenchScenarios(b)
	for _, bench := range []struct {
		name  string
		s     *scenarios.Scenario
		seeds int
	}{
		{"32-seeds", mid, 32},
		{"default-1000-seeds", def, 1000},
	} {
		b.Run(bench.name, func(b *testing.B) {
			s := bench.s
			var wall, cpu, ceil [3]time.Duration
			for b.Loop() {
				for _, workers := range []int{1, 2} {
					start, startCPU := time.Now(), cputime.Used()
					if err := Seeds(context.Background(), s, 1, bench.seeds, workers, func(_, _ int, r *sim.Result) {}); err != nil {
						b.Fatal(err)
					}
					wall[workers] += time.Since(start)
					cpu[workers] += cputime.Used() - startCPU
				}
				for _, workers := range []int{1, 2} {
					start := time.Now()
					ceiling(workers, 16, 500_000)
					ceil[workers] += time.Since(start)
				}
			}
			b.ReportMetric(float64(wall[1])/float64(wall[2]), "speedup")
			b.ReportMetric(float64(ceil[1])/float64(ceil[2]), "ceiling-speedup")
			if cpu[1] > 0 {
				b.ReportMetric(float64(cpu[2])/float64(cpu[1]), "cpu-ratio")
				b.ReportMetric(float64(cpu[2])/float64(wall[2]), "cores-used")
			}
		})
	}
}

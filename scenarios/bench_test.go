package scenarios

import (
	"context"
	"fmt"
	"testing"

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

// BenchmarkRunSeeds runs 32 seeds of a 10,000-client scenario on 1 and on 2
// workers. The speed-up is runs/s at workers=2 over runs/s at workers=1
// (docs/performance.md). Run it with -cpu 2 so that two cores are there.
func BenchmarkRunSeeds(b *testing.B) {
	f, err := Parse("bench.yaml", []byte(benchSeeds))
	if err != nil {
		b.Fatal(err)
	}
	s := f.Scenarios[0]
	const seeds = 32
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			runs := 0
			for b.Loop() {
				err := s.RunSeeds(context.Background(), 1, seeds, workers, func(_, _ int, r *sim.Result) {})
				if err != nil {
					b.Fatal(err)
				}
				runs += seeds * len(s.Policies)
			}
			b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}

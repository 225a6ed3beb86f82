package sim

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// hugeBurst is the shape of the built-in huge-burst scenario with n clients:
// a burst at t = 0 into a 10 s outage, then n/10 admitted per second; full
// jitter with a 30 s cap, 10 attempts, 2 min deadline.
func hugeBurst(n int) Config {
	return Config{
		Seed: 1,
		Server: &CapacityWindows{
			ResponseTime: Fixed(100 * time.Millisecond),
			Phases: []Phase{
				{Duration: 10 * time.Second, Reject: Rejection{Status: 529, Class: policies.Capacity}},
				{Admit: max(n/10, 1), Window: time.Second, Reject: Rejection{Status: 529, Class: policies.Capacity}},
			},
		},
		Workload: Burst{Clients: n},
		Policy: Policy{Name: "full-jitter", Decide: policies.Policy{
			Backoff:     policies.FullJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 30 * time.Second},
			MaxAttempts: 10,
			Deadline:    2 * time.Minute,
		}},
	}
}

var benchSizes = []int{1_000, 100_000, 1_000_000}

// BenchmarkEngine runs whole simulations of hugeBurst(n) and reports the
// engine's cost per event, events per second, allocations per event and the
// peak heap bytes per client.
func BenchmarkEngine(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			cfg := hugeBurst(n)
			events := 0
			var ms0, ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			b.ResetTimer()
			for b.Loop() {
				r, err := Run(cfg)
				if err != nil {
					b.Fatal(err)
				}
				events += r.Events
			}
			b.StopTimer()
			runtime.ReadMemStats(&ms1)
			elapsed := b.Elapsed()
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(events), "ns/event")
			b.ReportMetric(float64(events)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(events), "allocs/event")
		})
	}
}

package sim

import (
	"fmt"
	"math/rand/v2"
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
		Policy: Policy{Name: "full-jitter", Rules: policies.Policy{
			Backoff:     policies.FullJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 30 * time.Second},
			MaxAttempts: 10,
			Deadline:    2 * time.Minute,
		}},
	}
}

var benchSizes = []int{1_000, 100_000, 1_000_000}

// BenchmarkEngine runs whole simulations of hugeBurst(n) and reports the
// engine's cost per event, events per second, allocations per event and the
// peak heap bytes per client (bytes allocated per run, an upper bound: a run
// frees nothing before it returns).
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
			// Everything a run allocates stays live until it returns, so the
			// bytes allocated per run bound its peak heap from above.
			runs := b.N
			b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(runs)/float64(n), "peak-B/client")
		})
	}
}

// engineEvents caches the number of events of one run of hugeBurst(n), so
// that BenchmarkBareHeap does as many operations as the engine processes
// events.
var engineEvents = map[int]int{}

func eventsOf(b *testing.B, n int) int {
	if e, ok := engineEvents[n]; ok {
		return e
	}
	r, err := Run(hugeBurst(n))
	if err != nil {
		b.Fatal(err)
	}
	engineEvents[n] = r.Events
	return r.Events
}

// pair is what the bare heap orders: a time and an insertion sequence.
type pair struct {
	at  int64
	seq uint64
}

// bareHeap is the yardstick for the engine's queue: a plain binary min-heap
// of (time, sequence) pairs, specialised (no interfaces, no generics).
type bareHeap []pair

func (h *bareHeap) push(p pair) {
	*h = append(*h, p)
	s := *h
	i := len(s) - 1
	for i > 0 {
		j := (i - 1) / 2
		if s[j].at < p.at || (s[j].at == p.at && s[j].seq < p.seq) {
			break
		}
		s[i] = s[j]
		i = j
	}
	s[i] = p
}

func (h *bareHeap) pop() pair {
	s := *h
	top := s[0]
	n := len(s) - 1
	last := s[n]
	s = s[:n]
	*h = s
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && (s[r].at < s[c].at || (s[r].at == s[c].at && s[r].seq < s[c].seq)) {
			c = r
		}
		if last.at < s[c].at || (last.at == s[c].at && last.seq < s[c].seq) {
			break
		}
		s[i] = s[c]
		i = c
	}
	if n > 0 {
		s[i] = last
	}
	return top
}

// BenchmarkBareHeap is the yardstick of BenchmarkEngine: a binary heap
// holding one (time, sequence) pair per client, as the engine's queue does at
// the start of a burst, doing one pop and one push per event for as many
// events as the engine processes on hugeBurst(n). Pushed times are the popped
// time plus a pseudo-random wait below 30 s (an inline xorshift), like the
// engine's jittered retries.
func BenchmarkBareHeap(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			events := eventsOf(b, n)
			h := make(bareHeap, 0, n)
			total := 0
			b.ResetTimer()
			for b.Loop() {
				h = h[:0]
				var seq uint64
				for range n {
					h.push(pair{0, seq})
					seq++
				}
				x := uint64(88172645463325252)
				for range events {
					p := h.pop()
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					h.push(pair{p.at + int64(x%uint64(30*time.Second)), seq})
					seq++
				}
				total += events
			}
			elapsed := b.Elapsed()
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(total), "ns/event")
			b.ReportMetric(float64(total)/elapsed.Seconds(), "events/s")
		})
	}
}

// openQueue is a Poisson open loop of about n operations over 100 s at
// 90 % of a queue's capacity (exponential service, mean 100 ms), with a
// queue limit, drop-abandoned and an incident halving the workers for
// 10 s; clients time out after 1 s and retry twice with full jitter.
func openQueue(n int) Config {
	rate := float64(n) / 100
	workers := max(int(rate*0.1/0.9), 1)
	return Config{
		Seed: 1,
		Server: &Queue{Service: Exponential{Mean: 100 * time.Millisecond}, QueueLimit: 4 * workers, DropAbandoned: true,
			Phases: []WorkerPhase{{Duration: 40 * time.Second, Concurrency: workers}, {Duration: 10 * time.Second, Concurrency: max(workers/2, 1)}, {Concurrency: workers}}},
		Workload: &OpenLoop{Rates: ConstantRate(rate), Until: 100 * time.Second},
		Policy: Policy{Name: "full-jitter", Rules: policies.Policy{
			Backoff: policies.FullJitter{Base: 100 * time.Millisecond, Factor: 2, Cap: 2 * time.Second}, MaxAttempts: 3, AttemptTimeout: time.Second}},
	}
}

// closedMix is n/10 closed-loop workers running 10 operations each with
// exponential think time against an error mix (3 % mid-stream 529s, 1 %
// 500s, 2 % 429s with a 1 s retry-after; lognormal latency).
func closedMix(n int) Config {
	return Config{
		Seed: 1,
		Server: &ErrorMix{Latency: LogNormal{Median: 800 * time.Millisecond, P99: 8 * time.Second}, Stream: true, OutputTokens: 500,
			Phases: []MixPhase{{Outcomes: []MixOutcome{
				{P: 0.03, Reject: Rejection{Status: 529, Class: policies.Capacity}},
				{P: 0.01, Reject: Rejection{Status: 500, Class: policies.Transient}},
				{P: 0.02, Reject: Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: time.Second}}}}}},
		Workload: &ClosedLoop{Workers: max(n/10, 1), PerWorker: 10, Think: Exponential{Mean: time.Second}, Spread: 10 * time.Second},
		Policy: Policy{Name: "sdk", Rules: policies.Policy{
			Backoff: policies.SDKJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 8 * time.Second}, MaxAttempts: 3}},
	}
}

// limitedSessions is n/5 agent sessions of 5 turns behind a rate limit
// (requests and input tokens per minute) in front of a queue; a call that
// gives up is repeated (up to 2 per session). The policy honours
// retry-after.
func limitedSessions(n int) Config {
	sessions := max(n/5, 1)
	return Config{
		Seed: 1,
		Server: &RateLimit{RequestsPerMinute: int64(sessions) * 2, InputTokensPerMinute: min(int64(sessions)*4000, MaxPerMinute),
			Inner: &Queue{Concurrency: max(sessions/20, 1), Service: Uniform{Min: 200 * time.Millisecond, Max: 600 * time.Millisecond}}},
		Workload: &AgentSessions{Sessions: sessions, Turns: 5, Think: Uniform{Max: 2 * time.Second}, Spread: 30 * time.Second,
			Pause: 5 * time.Second, MaxRepeats: 2, InputTokens: 1000, InputGrowth: 500, OutputTokens: 300},
		// No gate: a closed policies.Gate allocates its hold's cause
		// (GateClosedError) each time it holds an operation.
		Policy: Policy{Name: "retry-after", Rules: policies.Policy{
			Backoff: policies.FullJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 8 * time.Second}, MaxAttempts: 5, Deadline: 2 * time.Minute}},
	}
}

// BenchmarkModels runs whole simulations of the server models and
// workloads and reports the cost per event and allocations per event.
func BenchmarkModels(b *testing.B) {
	for _, m := range []struct {
		name   string
		config func(int) Config
	}{{"queue-open-loop", openQueue}, {"error-mix-closed-loop", closedMix}, {"rate-limit-sessions", limitedSessions}} {
		for _, n := range []int{10_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/ops=%d", m.name, n), func(b *testing.B) {
				cfg := m.config(n)
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
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
				b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(events), "allocs/event")
				b.ReportMetric(float64(events)/float64(b.N), "events/run")
			})
		}
	}
}

// BenchmarkDistributions reports the cost of one draw of each distribution.
func BenchmarkDistributions(b *testing.B) {
	for _, d := range []struct {
		name string
		d    Distribution
	}{{"fixed", Fixed(time.Second)}, {"uniform", Uniform{Max: time.Second}}, {"exponential", Exponential{Mean: time.Second}},
		{"lognormal", LogNormal{Median: time.Second, P99: 10 * time.Second}}} {
		b.Run(d.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			var sum time.Duration
			for b.Loop() {
				sum += d.d.Sample(rng)
			}
			_ = sum
		})
	}
}

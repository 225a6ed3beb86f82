package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/retrysim/retrysim/internal/cputime"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
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

// floorSizes adds to benchSizes 10,000,000 clients, where neither the
// operations nor the queue fit any cache: about 5 GB (mostly the recorded
// log) and minutes per iteration; -short leaves it out.
var floorSizes = append(benchSizes[:len(benchSizes):len(benchSizes)], 10_000_000)

// measureRuns runs cfg b.N times (timed) and returns the events of all
// runs and the memory statistics before and after them.
func measureRuns(b *testing.B, cfg Config) (events int, ms0, ms1 runtime.MemStats) {
	b.Helper()
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
	return events, ms0, ms1
}

// BenchmarkEngine runs whole simulations of hugeBurst(n) and reports the
// engine's cost per event, events per second, allocations per event and the
// peak heap bytes per client (bytes allocated per run, an upper bound: a run
// frees nothing before it returns).
func BenchmarkEngine(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			events, ms0, ms1 := measureRuns(b, hugeBurst(n))
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

// eventLog is the queue traffic of one engine run, for the floor to replay:
// every push in order (time, operation, FIFO or heap) and how many pushes
// the engine made while processing each popped event.
type eventLog struct {
	n       int             // operations
	at      []time.Duration // push p's time
	op      []uint32        // push p's operation, with fifoBit set if it went to the FIFO
	initial int             // pushes before the first pop
	after   []uint8         // after[k]: pushes made while processing pop k
	result  Result          // the run's result
}

const fifoBit = 1 << 31

// recordRun runs cfg with the queue's log hook set and returns its traffic.
func recordRun(tb testing.TB, cfg Config) *eventLog {
	l := &eventLog{n: cfg.Workload.Operations()}
	var r runner
	r.q.log = func(e event, fifo bool) {
		pops := len(l.at) + 1 - r.q.len() // this push is in the queue already
		op := uint32(e.key & r.q.clientMask)
		if fifo {
			op |= fifoBit
		}
		l.at = append(l.at, e.at)
		l.op = append(l.op, op)
		if pops == 0 {
			l.initial++
			return
		}
		for len(l.after) < pops {
			l.after = append(l.after, 0)
		}
		if l.after[pops-1] == 255 {
			tb.Fatal("more than 255 pushes while processing one event")
		}
		l.after[pops-1]++
	}
	res, err := r.run(context.Background(), &cfg)
	if err != nil {
		tb.Fatal(err)
	}
	for len(l.after) < res.Events {
		l.after = append(l.after, 0)
	}
	l.result = res
	return l
}

// floorRecord stands for an operation's 64-byte state.
type floorRecord struct {
	at  time.Duration // time of the last event
	sum time.Duration
	_   [48]byte
}

// floor replays l through a queue of the engine's own design and code (the
// same radix heap, FIFO and 16-byte events, push and pop) and touches a
// 64-byte record per operation wherever the engine touches its operation's
// state: written when the operation is set up and when an event is
// scheduled for it, read and written when its event is popped. It makes no
// decision: which queue each push goes to, its time and sequence come from
// the log. With prefetch, it also prefetches the next event's record after
// each pop, as the engine does. It returns the number of events (pops).
func floor(l *eventLog, prefetchNext bool) int {
	recs := alignedRecords(l.n)
	var q queue
	q.init(l.n, l.n)
	mask := len(q.fifo) - 1
	p := 0
	push := func() {
		at, op := l.at[p], l.op[p]
		i := op &^ fifoBit
		recs[i].at = at
		e := event{at: at, key: uint64(p)<<q.clientBits | uint64(i)}
		if op&fifoBit != 0 {
			q.fifo[(q.fifoHead+q.fifoLen)&mask] = e
			q.fifoLen++
		} else {
			q.pushHeap(e)
		}
		p++
	}
	for range l.initial {
		push()
	}
	events := 0
	for q.len() > 0 {
		at, i := q.pop()
		if prefetchNext {
			if j, ok := q.peek(); ok {
				prefetch(unsafe.Pointer(&recs[j]))
			}
		}
		r := &recs[i]
		r.sum += at - r.at
		r.at = at
		for range l.after[events] {
			push()
		}
		events++
	}
	return events
}

// alignedRecords returns n zeroed records starting on a 64-byte boundary.
func alignedRecords(n int) []floorRecord {
	buf := make([]floorRecord, n+1)
	pad := (64 - uintptr(unsafe.Pointer(&buf[0]))%64) % 64
	return unsafe.Slice((*floorRecord)(unsafe.Add(unsafe.Pointer(&buf[0]), pad)), n)
}

// BenchmarkFloor times, in every iteration, one whole engine run of
// hugeBurst(n) and two replays of that run's queue traffic by floor: the
// plain floor, which touches each record when its event is popped, and the
// floor that also prefetches the next event's record as the engine does
// (floor-pf), in rotating order. It reports ns/event for each and the
// engine's time over each floor's. The floors are the queue and memory work
// the engine cannot avoid; the ratios are what deciding costs on top. A
// garbage collection runs (untimed) before each timed part, so that none
// pays for another's garbage. The ratios are also reported in CPU time
// (process user+system time), which a busy machine disturbs less than wall
// time.
func BenchmarkFloor(b *testing.B) {
	for _, n := range floorSizes {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			if n > 1_000_000 && testing.Short() {
				b.Skip("10,000,000 clients take about 5 GB and minutes")
			}
			cfg := hugeBurst(n)
			l := recordRun(b, cfg)
			for _, pf := range []bool{false, true} {
				if got := floor(l, pf); got != l.result.Events {
					b.Fatalf("floor replayed %d events, the engine processed %d", got, l.result.Events)
				}
			}
			// Wall and CPU time of the engine, the floor and floor-pf.
			var wall, cpu [3]time.Duration
			parts := [3]func(){
				func() {
					r, err := Run(cfg)
					if err != nil {
						b.Fatal(err)
					}
					if r.Events != l.result.Events {
						b.Fatalf("engine processed %d events, %d when recorded", r.Events, l.result.Events)
					}
				},
				func() { floor(l, false) },
				func() { floor(l, true) },
			}
			events, round := 0, 0
			for b.Loop() {
				for k := range parts {
					p := (k + round) % len(parts)
					runtime.GC()
					start, startCPU := time.Now(), cputime.Used()
					parts[p]()
					wall[p] += time.Since(start)
					cpu[p] += cputime.Used() - startCPU
				}
				round++
				events += l.result.Events
			}
			perEvent := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(events) }
			b.ReportMetric(perEvent(wall[0]), "engine-ns/event")
			b.ReportMetric(perEvent(wall[1]), "floor-ns/event")
			b.ReportMetric(perEvent(wall[2]), "floor-pf-ns/event")
			b.ReportMetric(float64(wall[0])/float64(wall[1]), "engine/floor")
			b.ReportMetric(float64(wall[0])/float64(wall[2]), "engine/floor-pf")
			if cpu[1] > 0 && cpu[2] > 0 {
				// CPU time leaves out the time the process waited for a
				// core, which on a shared machine is most of the noise.
				b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "cpu-engine/floor")
				b.ReportMetric(float64(cpu[0])/float64(cpu[2]), "cpu-engine/floor-pf")
			}
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

// openQueueRecovery is openQueue with its capacity cut declared as the
// incident: the cost of measuring the recovery.
func openQueueRecovery(n int) Config {
	c := openQueue(n)
	c.Incident = Incident{Start: 40 * time.Second, End: 50 * time.Second}
	return c
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

// contentionBurst is the AWS backoff study's setup with n clients: a burst
// against one row under optimistic concurrency, every message |N(10 ms,
// 2 ms)|, full jitter from 5 ms capped at 2 s, never giving up (no client
// can make more than n attempts: see the aws-occ-contention scenario).
func contentionBurst(n int) Config {
	return Config{
		Seed:     1,
		Server:   &Contention{Network: FoldedNormal{Mean: 10 * time.Millisecond, StdDev: 2 * time.Millisecond}},
		Workload: Burst{Clients: n},
		Policy: Policy{Name: "full-jitter", Rules: policies.Policy{
			Backoff: policies.FullJitter{Base: 5 * time.Millisecond, Factor: 2, Cap: 2 * time.Second}, MaxAttempts: n}},
	}
}

// BenchmarkModels runs whole simulations of the server models and
// workloads and reports the cost per event and allocations per event.
// Contention has one row, whose writes are one at a time: its sizes are
// clients of a burst, and its work grows faster than their number.
func BenchmarkModels(b *testing.B) {
	for _, m := range []struct {
		name   string
		config func(int) Config
		sizes  []int
	}{
		{"queue-open-loop", openQueue, []int{10_000, 1_000_000}},
		{"queue-open-loop-recovery", openQueueRecovery, []int{10_000, 1_000_000}},
		{"error-mix-closed-loop", closedMix, []int{10_000, 1_000_000}},
		{"rate-limit-sessions", limitedSessions, []int{10_000, 1_000_000}},
		{"contention-burst", contentionBurst, []int{100, 1_000}},
	} {
		for _, n := range m.sizes {
			b.Run(fmt.Sprintf("%s/ops=%d", m.name, n), func(b *testing.B) {
				events, ms0, ms1 := measureRuns(b, m.config(n))
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
		{"lognormal", LogNormal{Median: time.Second, P99: 10 * time.Second}},
		{"folded-normal", FoldedNormal{Mean: 10 * time.Millisecond, StdDev: 2 * time.Millisecond}}} {
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

// BenchmarkRecoveryCost runs the open-loop queue with and without its
// incident declared, alternately in each iteration, and reports the ratio
// of their times: what measuring the recovery costs.
func BenchmarkRecoveryCost(b *testing.B) {
	without, with := openQueue(1_000_000), openQueueRecovery(1_000_000)
	var tWithout, tWith time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := Run(without); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := Run(with); err != nil {
			b.Fatal(err)
		}
		tWithout, tWith = tWithout+t1.Sub(t0), tWith+time.Since(t1)
	}
	b.ReportMetric(float64(tWith)/float64(tWithout), "with/without")
}

// everyProcessCoordinator is a policy with every kind of per-process
// coordinator (gate, throttle, in-flight limit, breaker, adaptive
// throttle, the three retry budgets, send-rate limiter): the most retry
// layer a client process can carry.
func everyProcessCoordinator() Policy {
	return Policy{Name: "layered", Coordinators: []machine.Spec{machine.GateConfig{},
		machine.ThrottleConfig{Count: 10, Per: time.Second}, machine.LimitConfig{MaxInFlight: 4},
		policies.BreakerConfig{}, policies.AdaptiveThrottleConfig{},
		policies.RetryThrottlingConfig{}, policies.RatioBudgetConfig{},
		policies.RetryQuotaConfig{}, policies.CubicRateConfig{}},
		Rules: policies.Policy{Backoff: policies.FullJitter{Base: 50 * time.Millisecond, Factor: 2, Cap: time.Second}, MaxAttempts: 4}}
}

// splitOpenLoop is an open loop of arrivals regular arrivals over 10 s,
// dealt to processes client processes, each with everyProcessCoordinator's
// retry layer, against a server that fails one request in ten.
func splitOpenLoop(arrivals, processes int) Config {
	return Config{
		Seed: 1,
		Server: &ErrorMix{Latency: Fixed(10 * time.Millisecond),
			Phases: []MixPhase{{Outcomes: []MixOutcome{{P: 0.1, Reject: Rejection{Status: 500, Class: policies.Transient}}}}}},
		Workload: &OpenLoop{Rates: ConstantRate(float64(arrivals) / 10), Until: 10 * time.Second, Regular: true, Processes: processes},
		Policy:   everyProcessCoordinator(),
	}
}

// BenchmarkProcesses runs open loops dealt to many client processes and
// reports the bytes a run allocates per process that has an operation
// (B/process, over the same run with one process: what the work estimate
// counts per process) along with -benchmem's B/op.
func BenchmarkProcesses(b *testing.B) {
	for _, s := range []struct{ arrivals, processes int }{{100, 1_000_000}, {100_000, 100_000}} {
		b.Run(fmt.Sprintf("arrivals=%d/processes=%d", s.arrivals, s.processes), func(b *testing.B) {
			perRunOne := float64(allocatedBy(b, splitOpenLoop(s.arrivals, 1)))
			_, ms0, ms1 := measureRuns(b, splitOpenLoop(s.arrivals, s.processes))
			perRun := float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(b.N)
			b.ReportMetric((perRun-perRunOne)/float64(min(s.arrivals, s.processes)), "B/process")
		})
	}
}

// allocatedBy returns the bytes one run of cfg allocates.
func allocatedBy(b *testing.B, cfg Config) uint64 {
	b.Helper()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	if _, err := Run(cfg); err != nil {
		b.Fatal(err)
	}
	runtime.ReadMemStats(&ms1)
	return ms1.TotalAlloc - ms0.TotalAlloc
}

package sim

import (
	"time"

	"github.com/retrysim/retrysim/policies/machine"
)

// Result is what one run measured.
type Result struct {
	Policy string
	// Clients is the number of operations (one per client in a burst); with
	// a Chained workload, the number of operations that started.
	Clients   int
	Completed int
	// Attempts counts requests sent; Retries those that were not an
	// operation's first.
	Attempts int
	Retries  int
	GaveUp   int
	// GaveUpBy counts give-ups by policies.StopReason.
	GaveUpBy [machine.NumStopReasons]int
	// Fallbacks counts operations that switched to the fallback model.
	Fallbacks int
	// Latencies holds, sorted, the time from each completed operation's
	// start to its successful response.
	Latencies []time.Duration
	// GiveUps holds, sorted, the time from each operation's start to its
	// giving up: how long the error took to reach the caller.
	GiveUps []time.Duration
	// LastCompletion is the time of the last successful response; 0 if none.
	LastCompletion time.Duration
	// Admitted and Rejected count the server's decisions.
	Admitted, Rejected int
	// Events is the number of events the engine processed.
	Events int
	// Waited sums the waits the engine scheduled for operations before
	// their attempts: backoffs, server waits, the holds of a gate, pacer or
	// breaker, throttle slots (not the time queued for an in-flight slot).
	Waited time.Duration
	// Counters are what the server model and the workload counted beyond
	// the engine's counts, by name (CounterReporter).
	Counters Counters
	// Recovery is what the run measured around its incident, if
	// Config.Incident set one.
	Recovery Recovery
	// ByPriority splits the counts and times above by the operations'
	// priorities, highest first, when the workload gives them
	// (Prioritizer): one entry per priority some started operation had.
	ByPriority []PriorityResult
}

// Counter is a count a server model or a workload reports at the end of a
// run, beyond what the engine counts: a name such as "server.wasted" and a
// value (a duration counts nanoseconds). The model keeps its counts in its
// own typed state while it runs and reports them once.
type Counter struct {
	Name  string
	Value int64
}

// Counters are a run's counters, in the order they were reported.
type Counters []Counter

// Get returns the value of the counter called name, and false when
// nothing reported it.
func (c Counters) Get(name string) (int64, bool) {
	for _, x := range c {
		if x.Name == name {
			return x.Value, true
		}
	}
	return 0, false
}

// Add adds v to the counter called name, reporting it if it is new.
func (c *Counters) Add(name string, v int64) {
	for i := range *c {
		if (*c)[i].Name == name {
			(*c)[i].Value += v
			return
		}
	}
	*c = append(*c, Counter{name, v})
}

// CounterReporter is an optional interface of a Server, or of a
// workload's Chain, that counts more than the engine does: the engine
// asks it once, at the end of a run, to add its counts to c
// (Result.Counters).
type CounterReporter interface {
	ReportCounters(c *Counters)
}

// Amplification is attempts per client.
func (r *Result) Amplification() float64 {
	if r.Clients == 0 {
		return 0
	}
	return float64(r.Attempts) / float64(r.Clients)
}

// GiveUpPercentile is Percentile of the times to give up, and false when
// nothing gave up.
func (r *Result) GiveUpPercentile(p float64) (time.Duration, bool) {
	return nearestRank(r.GiveUps, p)
}

// MeanLatency is the mean completion latency, and false when nothing
// completed. The sum runs in sorted order, so it is the same everywhere.
func (r *Result) MeanLatency() (time.Duration, bool) {
	if len(r.Latencies) == 0 {
		return 0, false
	}
	var sum time.Duration
	for _, d := range r.Latencies {
		sum += d
	}
	return sum / time.Duration(len(r.Latencies)), true
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of the
// completion latencies, and false when nothing completed.
func (r *Result) Percentile(p float64) (time.Duration, bool) {
	return nearestRank(r.Latencies, p)
}

// nearestRank is the nearest-rank p-th percentile of sorted durations.
func nearestRank(sorted []time.Duration, p float64) (time.Duration, bool) {
	n := len(sorted)
	if n == 0 {
		return 0, false
	}
	// Nearest rank: the smallest value with at least p% of values <= it.
	rank := int(float64(n) * p / 100)
	if float64(rank) < float64(n)*p/100 {
		rank++
	}
	rank = min(max(rank, 1), n)
	return sorted[rank-1], true
}

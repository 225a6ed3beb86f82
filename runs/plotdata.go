package runs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// Timeline counts what one policy's run did per time bucket, on one seed:
// series[i] covers [i·Bucket, (i+1)·Bucket). Every series has the same
// length: up to the bucket of the run's last event.
type Timeline struct {
	Policy string        `json:"policy"`
	Bucket time.Duration `json:"bucket_ns"`
	// Admitted and Rejected count the attempts the server admitted and
	// rejected, by the time it decided them (their arrival, but for a
	// server that decides later, such as a contention server).
	Admitted []int `json:"admitted"`
	// Wasted counts the attempts of Admitted answered after their client
	// had stopped waiting (attempt timeout or deadline): work the server
	// did for no one (sim.Observer.OnWasted). Admitted less Wasted is the
	// work served in time.
	Wasted   []int `json:"wasted"`
	Rejected []int `json:"rejected"`
	// RejectedBy splits Rejected by the outcome's class.
	RejectedBy ClassCounts `json:"rejected_by"`
	// FirstAttempts and Retries count the attempts sent, by the time they
	// were sent: operations' first attempts and the others. Together they
	// are the offered load; over the run they add up to Admitted +
	// Rejected.
	FirstAttempts []int `json:"first_attempts"`
	Retries       []int `json:"retries"`
	// Completed counts operations that succeeded (goodput), by the time the
	// successful response reached the client.
	Completed []int `json:"completed"`
	// GaveUp counts operations that stopped without success, every reason.
	GaveUp []int `json:"gave_up"`
	// LocalRejected counts the give-ups of GaveUp that the policy's retry
	// controls caused by rejecting an attempt locally (not sent), by reason.
	LocalRejected LocalCounts `json:"local_rejected"`
	// InFlight is the number of attempts sent and not yet answered (the
	// response, or the client's timeout, had not reached the client) at the
	// end of each bucket: a level, not a count per bucket. The client-side
	// view of the server's queue and work in progress.
	InFlight []int `json:"in_flight"`
	// Members, for a scenario whose server is a pool (sim.MemberModel), count
	// per member the requests the pool sent it and those it failed, by
	// the time it decided them (their arrival), in the pool's member
	// order; nil for any other server. Over a member they add up to its
	// counters pool.NAME.requests and pool.NAME.failed.
	Members []MemberTimeline `json:"members,omitempty"`
	// PoolUnavailable counts, for a pool with a cooldown, the requests it
	// answered itself with 429 because every member was out (the counter
	// pool.unavailable); nil for any other server.
	PoolUnavailable []int `json:"pool_unavailable,omitempty"`
	// Served, for a queue (sim.ServiceModel), is the work its workers did
	// in each bucket, in requests of the mean service time: the worker
	// time spent in the bucket over the mean service. It is never above
	// the capacity per bucket (the workers times the bucket over the mean
	// service), so a timeline drawn from it never stands above what the
	// server can serve, as one of Admitted (binned at arrival) can.
	// ServedLate is the part of it done for clients that had stopped
	// waiting (wasted). Both are nil for any other server.
	Served     []float64 `json:"served,omitempty"`
	ServedLate []float64 `json:"served_late,omitempty"`

	answered []int // responses per bucket, while recording
	// busy and busyLate are Served and ServedLate in worker time while
	// recording (exact, so the same in any order); mean is the service's.
	busy, busyLate []int64
	mean           time.Duration
}

// MemberTimeline is one pool member's requests and failures per bucket.
type MemberTimeline struct {
	Name     string `json:"name"`
	Requests []int  `json:"requests"`
	Failed   []int  `json:"failed"`
}

// ClassCounts counts rejected attempts per bucket by policies.Class.
type ClassCounts struct {
	RetryAfter []int `json:"retry_after"` // rate limited with a wait (429)
	Capacity   []int `json:"capacity"`    // overloaded (529, 503)
	Transient  []int `json:"transient"`   // faults that may pass (500, 504)
	Terminal   []int `json:"terminal"`    // waiting cannot help (400, ...)
}

// LocalCounts counts give-ups per bucket by the retry control that rejected
// the attempt locally: policies.StopBudget, StopThrottled, StopCircuitOpen.
type LocalCounts struct {
	Budget      []int `json:"budget"`
	Throttled   []int `json:"throttled"`
	CircuitOpen []int `json:"circuit_open"`
}

// counts returns every series of t that counts events per bucket (all but
// InFlight), in a fixed order.
func (t *Timeline) counts() []*[]int {
	c := []*[]int{&t.Admitted, &t.Wasted, &t.Rejected,
		&t.RejectedBy.RetryAfter, &t.RejectedBy.Capacity, &t.RejectedBy.Transient, &t.RejectedBy.Terminal,
		&t.FirstAttempts, &t.Retries, &t.Completed, &t.GaveUp,
		&t.LocalRejected.Budget, &t.LocalRejected.Throttled, &t.LocalRejected.CircuitOpen}
	for i := range t.Members {
		c = append(c, &t.Members[i].Requests, &t.Members[i].Failed)
	}
	if t.PoolUnavailable != nil {
		c = append(c, &t.PoolUnavailable)
	}
	return append(c, &t.answered) // last: check leaves it out
}

// Buckets returns the number of buckets of t.
func (t *Timeline) Buckets() int { return len(t.Admitted) }

// Offered returns the attempts sent in bucket i: first attempts and retries.
func (t *Timeline) Offered(i int) int { return t.FirstAttempts[i] + t.Retries[i] }

// LocalRejections returns the give-ups in bucket i caused by the retry
// controls' local rejections, every reason.
func (t *Timeline) LocalRejections(i int) int {
	l := &t.LocalRejected
	return l.Budget[i] + l.Throttled[i] + l.CircuitOpen[i]
}

// MaxTimelineBuckets bounds a timeline's length: when a run outlasts that
// many buckets, the bucket doubles (adjacent buckets merge), so a bucket is
// always a whole multiple of the one asked for.
const MaxTimelineBuckets = 1000

// RecordTimeline runs cfg and counts its attempts and operations per
// bucket. It uses cfg.Observer, replacing any hooks already set.
func RecordTimeline(cfg sim.Config, bucket time.Duration) (Timeline, sim.Result, error) {
	return recordTimeline(context.Background(), cfg, 0, bucket)
}

// recordTimeline is RecordTimeline for the run of policy p, stopping when
// ctx is done and reporting to the Progress in ctx, if any.
func recordTimeline(ctx context.Context, cfg sim.Config, p int, bucket time.Duration) (Timeline, sim.Result, error) {
	if bucket <= 0 {
		return Timeline{}, sim.Result{}, errors.New("timeline bucket must be > 0")
	}
	t := Timeline{Policy: cfg.Policy.Name, Bucket: bucket}
	cfg.Observer = sim.Observer{
		OnSend: func(at time.Duration, _ int, retry bool) {
			if i := t.at(at); retry {
				t.Retries[i]++
			} else {
				t.FirstAttempts[i]++
			}
		},
		OnDecision: func(at time.Duration, _ int, class policies.Class) {
			i := t.at(at)
			if class == policies.Success {
				t.Admitted[i]++
				return
			}
			t.Rejected[i]++
			switch class {
			case policies.RetryAfter:
				t.RejectedBy.RetryAfter[i]++
			case policies.Capacity:
				t.RejectedBy.Capacity[i]++
			case policies.Transient:
				t.RejectedBy.Transient[i]++
			default:
				t.RejectedBy.Terminal[i]++
			}
		},
		OnWasted:   func(at time.Duration, _ int) { t.Wasted[t.at(at)]++ },
		OnResponse: func(at time.Duration, _ int, _ policies.Class) { t.answered[t.at(at)]++ },
		OnComplete: func(at time.Duration, _ int) { t.Completed[t.at(at)]++ },
		OnGiveUp: func(at time.Duration, _ int, reason policies.StopReason) {
			i := t.at(at)
			t.GaveUp[i]++
			switch reason {
			case policies.StopBudget:
				t.LocalRejected.Budget[i]++
			case policies.StopThrottled:
				t.LocalRejected.Throttled[i]++
			case policies.StopCircuitOpen:
				t.LocalRejected.CircuitOpen[i]++
			}
		},
	}
	if pool, ok := sim.ModelAs[sim.MemberModel](cfg.Server); ok {
		names := pool.MemberNames()
		t.Members = make([]MemberTimeline, len(names))
		for i, name := range names {
			t.Members[i].Name = name
		}
		if pool.AllOut() {
			t.PoolUnavailable = []int{}
		}
		cfg.Server = pool.Observed(func(at time.Duration, member int, failed bool) {
			i := t.at(at)
			if member < 0 {
				t.PoolUnavailable[i]++
				return
			}
			m := &t.Members[member]
			m.Requests[i]++
			if failed {
				m.Failed[i]++
			}
		})
	}
	if q, ok := cfg.Server.(sim.ServiceModel); ok {
		if mean, ok := q.MeanService(); ok && mean > 0 {
			t.mean, t.busy, t.busyLate = mean, []int64{}, []int64{}
			cfg.Server = q.ObservedService(t.serve)
		}
	}
	var runner sim.Runner
	r, err := runOne(ctx, &runner, cfg, p)
	t.finish()
	return t, r, err
}

// at returns the bucket of time at, coarsening t and growing its series
// as needed.
func (t *Timeline) at(at time.Duration) int {
	i := int(at / t.Bucket)
	for i >= MaxTimelineBuckets {
		t.coarsen()
		i = int(at / t.Bucket)
	}
	if len(t.Admitted) <= i {
		for _, s := range t.counts() {
			*s = append(*s, make([]int, i+1-len(*s))...)
		}
		if t.busy != nil {
			t.busy = append(t.busy, make([]int64, i+1-len(t.busy))...)
			t.busyLate = append(t.busyLate, make([]int64, i+1-len(t.busyLate))...)
		}
	}
	return i
}

// serve adds a worker's time from start to done to the buckets it spans;
// late says its client had stopped waiting.
func (t *Timeline) serve(start, done time.Duration, late bool) {
	if done <= start {
		return
	}
	t.at(done - 1) // grows and coarsens first: the buckets below are final
	for i := t.at(start); time.Duration(i)*t.Bucket < done; i++ {
		lo, hi := max(start, time.Duration(i)*t.Bucket), min(done, time.Duration(i+1)*t.Bucket)
		t.busy[i] += int64(hi - lo)
		if late {
			t.busyLate[i] += int64(hi - lo)
		}
	}
}

// finish computes InFlight from the attempts sent and answered per bucket.
func (t *Timeline) finish() {
	t.InFlight = make([]int, len(t.Admitted))
	level := 0
	for i := range t.InFlight {
		level += t.Offered(i) - t.answered[i]
		t.InFlight[i] = level
	}
	t.answered = nil
	if t.busy != nil {
		for _, s := range []*[]int64{&t.busy, &t.busyLate} {
			*s = append(*s, make([]int64, len(t.Admitted)-len(*s))...)
		}
		t.Served, t.ServedLate = make([]float64, len(t.busy)), make([]float64, len(t.busy))
		for i := range t.busy {
			t.Served[i] = float64(t.busy[i]) / float64(t.mean)
			t.ServedLate[i] = float64(t.busyLate[i]) / float64(t.mean)
		}
		t.busy, t.busyLate = nil, nil
	}
}

// coarsen doubles the bucket, merging buckets 2i and 2i+1 into i: counts
// add up; InFlight, a level at a bucket's end, keeps the later bucket's.
func (t *Timeline) coarsen() {
	t.Bucket *= 2
	for _, s := range t.counts() {
		*s = coarsened(*s, func(a, b int) int { return a + b })
	}
	t.InFlight = coarsened(t.InFlight, func(_, b int) int { return b })
	for _, s := range []*[]int64{&t.busy, &t.busyLate} {
		*s = coarsened(*s, func(a, b int64) int64 { return a + b })
	}
	for _, s := range []*[]float64{&t.Served, &t.ServedLate} {
		*s = coarsened(*s, func(a, b float64) float64 { return a + b })
	}
}

// coarsened merges s's buckets 2i and 2i+1 into i with merge, in place; an
// odd last bucket stays as it is.
func coarsened[T int | int64 | float64](s []T, merge func(a, b T) T) []T {
	if s == nil {
		return nil
	}
	for i := range s {
		if i%2 == 1 {
			s[i/2] = merge(s[i-1], s[i])
		} else {
			s[i/2] = s[i]
		}
	}
	return s[:(len(s)+1)/2]
}

// clone returns a copy of t that shares no memory with it.
func (t Timeline) clone() Timeline {
	c := t
	c.Members = slices.Clone(t.Members)
	for _, s := range c.counts() {
		*s = slices.Clone(*s)
	}
	c.InFlight = slices.Clone(c.InFlight)
	c.Served, c.ServedLate = slices.Clone(t.Served), slices.Clone(t.ServedLate)
	return c
}

// check says what is wrong with a timeline read from a file, recorded
// with buckets of asked: a bucket that is not asked·2^k, series of
// different lengths or over MaxTimelineBuckets, counts and levels that
// are not whole numbers from 0 to 2^53, or an end past the largest
// time.Duration.
func (t *Timeline) check(asked time.Duration) error {
	b := asked
	for b > 0 && b < t.Bucket && b <= math.MaxInt64/2 {
		b *= 2
	}
	if b <= 0 || b != t.Bucket {
		return fmt.Errorf("timeline of %q: bucket %d ns, want %d ns doubled 0 or more times", t.Policy, t.Bucket, asked)
	}
	n := len(t.Admitted)
	if n > MaxTimelineBuckets || n > 0 && t.Bucket > math.MaxInt64/time.Duration(n) {
		return fmt.Errorf("timeline of %q: %d buckets of %d ns, over %d buckets or the largest time", t.Policy, n, t.Bucket, MaxTimelineBuckets)
	}
	for _, s := range append(t.counts()[:len(t.counts())-1], &t.InFlight) {
		if len(*s) != n {
			return fmt.Errorf("timeline of %q: series of %d and %d buckets", t.Policy, n, len(*s))
		}
		for i, v := range *s {
			if v < 0 || v > maxExactCount {
				return fmt.Errorf("timeline of %q: bucket %d counts %d, want a whole number from 0 to 2^53", t.Policy, i, v)
			}
		}
	}
	if t.Served != nil || t.ServedLate != nil {
		for _, s := range [][]float64{t.Served, t.ServedLate} {
			if len(s) != n {
				return fmt.Errorf("timeline of %q: served series of %d buckets, want %d", t.Policy, len(s), n)
			}
			for i, v := range s {
				if !(v >= 0 && v <= maxExactCount) {
					return fmt.Errorf("timeline of %q: bucket %d serves %v, want a number from 0 to 2^53", t.Policy, i, v)
				}
			}
		}
	}
	for i, w := range t.Wasted {
		if w > t.Admitted[i] {
			return fmt.Errorf("timeline of %q: bucket %d wastes %d attempts of %d admitted", t.Policy, i, w, t.Admitted[i])
		}
	}
	if len(t.Members) > sim.MaxPoolMembers {
		return fmt.Errorf("timeline of %q: %d pool members, over %d", t.Policy, len(t.Members), sim.MaxPoolMembers)
	}
	for _, m := range t.Members {
		if err := sim.CheckMemberName(m.Name); err != nil {
			return fmt.Errorf("timeline of %q: %w", t.Policy, err)
		}
		for i, f := range m.Failed {
			if f > m.Requests[i] {
				return fmt.Errorf("timeline of %q: member %q fails %d of %d requests in bucket %d", t.Policy, m.Name, f, m.Requests[i], i)
			}
		}
	}
	return nil
}

// checkMembers says what is wrong with the pool members of timelines read
// from a file, for a scenario with server model s: they must be the
// pool's, by name and in order, or none for a server that is not a pool;
// PoolUnavailable is there for a pool with a cooldown only.
func checkMembers(t *Timeline, s sim.ServerModel) error {
	var want []string
	allOut := false
	if pool, ok := sim.ModelAs[sim.MemberModel](s); ok {
		want = pool.MemberNames()
		allOut = pool.AllOut()
	}
	if (t.PoolUnavailable != nil) != allOut {
		return fmt.Errorf("timeline of %q: pool_unavailable %v, want it only for a pool with a cooldown", t.Policy, t.PoolUnavailable != nil)
	}
	got := make([]string, len(t.Members))
	for i, m := range t.Members {
		got[i] = m.Name
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("timeline of %q: pool members %q, want %q", t.Policy, got, want)
	}
	return nil
}

// DefaultBucket is the timeline bucket for a server: the one it names
// (sim.TimeScaler), or else the period of its capacity's last step that
// admits requests (a capacity window's length), so that a full bucket
// equals the capacity; one second for a server without a capacity
// (sim.CapacityProfile) or one that admits nothing.
func DefaultBucket(s sim.ServerModel) time.Duration {
	if t, ok := sim.ModelAs[sim.TimeScaler](s); ok {
		return t.TimeScale()
	}
	if p, ok := sim.ModelAs[sim.CapacityProfile](s); ok {
		steps := p.Capacity()
		for i := len(steps) - 1; i >= 0; i-- {
			if st := steps[i]; st.Requests > 0 && st.Per > 0 {
				return st.Per
			}
		}
	}
	return time.Second
}

// PlotData is everything the plots of one scenario need.
type PlotData struct {
	Scenario    string
	Description string
	Server      sim.ServerModel
	Clients     int
	// Timelines, one per policy, are from the first seed.
	Timelines []Timeline
	// Completions[p] counts policy p's completion latencies, in
	// nanoseconds, pooled over every seed. A histogram keeps at most
	// stats.MaxHistogramCounters counters however many seeds and clients
	// there are, at a resolution of 2^-stats.HistogramBits of the latency.
	Completions []*stats.Histogram
	// Runs has every policy's metrics on every seed.
	Runs *MultiSeed
	// Incident is the scenario's incident, zero if it has none.
	Incident sim.Incident
}

// CollectPlotData runs every policy of s on k seeds from first (in
// parallel, merged in seed order) for statistics and pooled latencies, then
// once more per policy on the first seed for the timeline. done, if set, is
// called after each run, from worker goroutines. What it keeps grows with
// k only by the metrics of each run (MultiSeed); the latencies go into one
// histogram per policy.
func CollectPlotData(ctx context.Context, s *scenarios.Scenario, first uint64, k int, bucket time.Duration, done func()) (*PlotData, error) {
	var each func(int, int, *sim.Result)
	if done != nil {
		each = func(int, int, *sim.Result) { done() }
	}
	r, err := runGroup(ctx, &Group{Scenario: s, First: first, Seeds: k, Plot: true, Bucket: bucket}, each)
	if err != nil {
		return nil, err
	}
	return r.Plot, nil
}

// latencyHists counts every policy's completion latencies, one histogram
// per policy; add may be called from several goroutines. Counts add up the
// same in any order, so no run waits for the seeds before it.
type latencyHists struct {
	h     []*stats.Histogram
	locks []sync.Mutex
}

func newLatencyHists(policies int) *latencyHists {
	l := &latencyHists{h: make([]*stats.Histogram, policies), locks: make([]sync.Mutex, policies)}
	for p := range l.h {
		l.h[p] = new(stats.Histogram)
	}
	return l
}

func (l *latencyHists) add(p int, r *sim.Result) {
	l.locks[p].Lock()
	for _, d := range r.Latencies {
		l.h[p].Add(int64(d))
	}
	l.locks[p].Unlock()
}

// recordTimelines records one timeline per policy of s on seed first.
func recordTimelines(ctx context.Context, s *scenarios.Scenario, first uint64, bucket time.Duration) ([]Timeline, error) {
	timelines := make([]Timeline, len(s.Policies))
	for p := range s.Policies {
		t, _, err := recordTimeline(ctx, s.Config(p, first), p, bucket)
		if err != nil {
			return nil, err
		}
		timelines[p] = t
	}
	return timelines, nil
}

// plotData puts together the plot data of s from its runs, one histogram
// of completion latencies per policy (every seed) and one timeline per
// policy on the first seed.
func plotData(s *scenarios.Scenario, runs *MultiSeed, hists []*stats.Histogram, timelines []Timeline, bucket time.Duration) *PlotData {
	d := &PlotData{Scenario: s.Name, Description: s.Description, Server: s.Server,
		Clients: s.Operations(), Runs: runs, Completions: hists, Timelines: timelines, Incident: s.Incident}
	// Policies that ran longer may have coarser buckets: give all the same.
	widest := bucket
	for _, t := range d.Timelines {
		widest = max(widest, t.Bucket)
	}
	for i := range d.Timelines {
		// Every bucket is bucket·2^k (a file's are checked), so this ends.
		for d.Timelines[i].Bucket < widest {
			d.Timelines[i].coarsen()
		}
	}
	return d
}

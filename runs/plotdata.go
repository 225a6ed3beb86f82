package runs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// Timeline counts one policy's requests per time bucket on one seed.
type Timeline struct {
	Policy string        `json:"policy"`
	Bucket time.Duration `json:"bucket_ns"`
	// Admitted[i] and Rejected[i] count the requests that arrived in
	// [i·Bucket, (i+1)·Bucket).
	Admitted []int `json:"admitted"`
	Rejected []int `json:"rejected"`
}

// MaxTimelineBuckets bounds a timeline's length: when a run outlasts that
// many buckets, the bucket doubles (adjacent buckets merge), so a bucket is
// always a whole multiple of the one asked for.
const MaxTimelineBuckets = 1000

// RecordTimeline runs cfg and counts its requests per bucket. It uses
// cfg.OnRequest, replacing any hook already set.
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
	cfg.OnRequest = func(at time.Duration, admitted bool) {
		i := int(at / t.Bucket)
		for i >= MaxTimelineBuckets {
			t.coarsen()
			i = int(at / t.Bucket)
		}
		for len(t.Admitted) <= i {
			t.Admitted = append(t.Admitted, 0)
			t.Rejected = append(t.Rejected, 0)
		}
		if admitted {
			t.Admitted[i]++
		} else {
			t.Rejected[i]++
		}
	}
	var runner sim.Runner
	r, err := runOne(ctx, &runner, cfg, p)
	return t, r, err
}

// coarsen doubles the bucket, merging buckets 2i and 2i+1 into i.
func (t *Timeline) coarsen() {
	t.Bucket *= 2
	for i := range t.Admitted {
		if i%2 == 1 {
			t.Admitted[i/2] += t.Admitted[i]
			t.Rejected[i/2] += t.Rejected[i]
		} else {
			t.Admitted[i/2], t.Rejected[i/2] = t.Admitted[i], t.Rejected[i]
		}
	}
	n := (len(t.Admitted) + 1) / 2
	t.Admitted, t.Rejected = t.Admitted[:n], t.Rejected[:n]
}

// DefaultBucket is the timeline bucket for a server: the period of its
// capacity's last step that admits requests (a capacity window's length),
// so that a full bucket equals the capacity; one second for a server
// without a capacity (sim.CapacityProfile) or one that admits nothing.
func DefaultBucket(s sim.ServerModel) time.Duration {
	if p, ok := s.(sim.CapacityProfile); ok {
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
}

// CollectPlotData runs every policy of s on k seeds from first (in
// parallel, merged in seed order) for statistics and pooled latencies, then
// once more per policy on the first seed for the timeline. done, if set, is
// called after each run, from worker goroutines. What it keeps grows with
// k only by the metrics of each run (MultiSeed); the latencies go into one
// histogram per policy.
func CollectPlotData(ctx context.Context, s *scenarios.Scenario, first uint64, k int, bucket time.Duration, done func()) (*PlotData, error) {
	hists := newLatencyHists(len(s.Policies))
	runs, err := Collect(ctx, s, first, k, func(seed, p int, r *sim.Result) {
		hists.add(p, r)
		if done != nil {
			done()
		}
	})
	if err != nil {
		return nil, err
	}
	timelines, err := recordTimelines(ctx, s, first, bucket)
	if err != nil {
		return nil, err
	}
	return plotData(s, runs, hists.h, timelines, bucket), nil
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
		Clients: s.Operations(), Runs: runs, Completions: hists, Timelines: timelines}
	// Policies that ran longer may have coarser buckets: give all the same.
	widest := bucket
	for _, t := range d.Timelines {
		widest = max(widest, t.Bucket)
	}
	for i := range d.Timelines {
		for d.Timelines[i].Bucket < widest {
			d.Timelines[i].coarsen()
		}
	}
	return d
}

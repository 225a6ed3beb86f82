package runs

import (
	"context"
	"math"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// MultiSeed holds every policy's metrics on seeds FirstSeed,
// FirstSeed+1, …, FirstSeed+Seeds()−1, unrounded. It keeps numbers, not
// whole results, so that many seeds fit in memory.
type MultiSeed struct {
	Scenario  string
	FirstSeed uint64
	Policies  []string
	// Clients is the number of operations of each run.
	Clients int
	// Metrics are the metrics kept, those reported for the scenario
	// (metrics.For), in registry order.
	Metrics []*metrics.Metric
	// values[p][m][s] is Metrics[m] of policy p on seed FirstSeed+s; NaN
	// where the metric does not exist.
	values [][][]float64
	seeds  int
}

// NewMultiSeed prepares a MultiSeed for k seeds of s's policies from first.
func NewMultiSeed(s *scenarios.Scenario, first uint64, k int) *MultiSeed {
	m := &MultiSeed{Scenario: s.Name, FirstSeed: first, Clients: s.Operations(), seeds: k,
		Metrics: s.Metrics(), values: make([][][]float64, len(s.Policies))}
	for p := range m.values {
		m.Policies = append(m.Policies, s.Policies[p].Name)
		m.values[p] = make([][]float64, len(m.Metrics))
		for i := range m.Metrics {
			m.values[p][i] = make([]float64, k)
		}
	}
	return m
}

// Add records policy p's result on seed index s. Calls for distinct (s, p)
// may run concurrently, as Seeds makes them.
func (m *MultiSeed) Add(s, p int, r *sim.Result) {
	for i, metric := range m.Metrics {
		m.values[p][i][s] = metric.ValueOrNaN(r)
	}
}

// set records policy p's metric values on seed index s, in the order of
// Metrics.
func (m *MultiSeed) set(s, p int, values []float64) {
	for i, v := range values {
		m.values[p][i][s] = v
	}
}

// Seeds returns the number of seeds.
func (m *MultiSeed) Seeds() int { return m.seeds }

func (m *MultiSeed) index(metric *metrics.Metric) int {
	for i, x := range m.Metrics {
		if x == metric {
			return i
		}
	}
	return -1
}

// Series returns policy p's values of metric on every seed in seed order,
// NaN where it does not exist; nil when the metric is not kept. The slice
// is the MultiSeed's own: do not change it.
func (m *MultiSeed) Series(p int, metric *metrics.Metric) []float64 {
	i := m.index(metric)
	if i < 0 {
		return nil
	}
	return m.values[p][i]
}

// Values returns policy p's values of metric over the seeds in seed order,
// and for each value its seed index; seeds where the metric does not exist
// (latency when nothing completed) are left out.
func (m *MultiSeed) Values(p int, metric *metrics.Metric) (values []float64, seeds []int) {
	for s, v := range m.Series(p, metric) {
		if !math.IsNaN(v) {
			values = append(values, v)
			seeds = append(seeds, s)
		}
	}
	return values, seeds
}

// Value returns policy p's metric on seed index s, and false when it does
// not exist (or is not kept).
func (m *MultiSeed) Value(p int, metric *metrics.Metric, s int) (float64, bool) {
	series := m.Series(p, metric)
	if series == nil || math.IsNaN(series[s]) {
		return 0, false
	}
	return series[s], true
}

// Collect runs every policy of s on k seeds from first (Seeds, on as many
// workers as suit it) and keeps their metrics. each, if set, is also called
// for every run, from worker goroutines, as Seeds calls it.
func Collect(ctx context.Context, s *scenarios.Scenario, first uint64, k int, each func(seed, policy int, r *sim.Result)) (*MultiSeed, error) {
	m := NewMultiSeed(s, first, k)
	err := Seeds(ctx, s, first, k, 0, func(seed, p int, r *sim.Result) {
		m.Add(seed, p, r)
		if each != nil {
			each(seed, p, r)
		}
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Package check holds what 'retrysim check' verifies for CI: a scenario's
// expectations (bounds on a policy's metrics, on one run or a statistic
// over seeds), comparisons with a baseline recorded earlier, and the
// reports of both as tables, markdown and JUnit XML. docs/ci.md describes
// them.
package check

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/stats"
)

// Result is one expectation measured against one policy's runs.
type Result struct {
	Scenario    string
	Policy      string
	Expectation scenarios.Expectation
	// Source says where the expectation was written, e.g. "scenarios.yaml:42:7".
	Source string
	// FirstSeed and Seeds give the runs measured: seeds FirstSeed,
	// FirstSeed+1, …; Seeds is 1 for a single-run expectation.
	FirstSeed uint64
	Seeds     int
	// Missing counts runs in which the metric had no value (latencies when
	// nothing completed); a statistic is taken over the others.
	Missing int
	// Measured is the metric or statistic; meaningful only when HasValue.
	Measured float64
	HasValue bool
	Pass     bool
}

// Evaluate measures e on a policy's values of its metric on consecutive
// seeds from firstSeed (series[0] is firstSeed's), unrounded, NaN where the
// metric has no value. A single-run expectation reads series[0] only. An
// expectation whose metric has no value in any run fails: a bound cannot
// hold on nothing.
func Evaluate(e scenarios.Expectation, policy string, firstSeed uint64, series []float64) Result {
	r := Result{Expectation: e, Policy: policy, FirstSeed: firstSeed}
	if len(series) == 0 {
		return r
	}
	if !e.OverSeeds() {
		series = series[:1]
	}
	r.Seeds = len(series)
	values := make([]float64, 0, len(series))
	for _, v := range series {
		if math.IsNaN(v) {
			r.Missing++
		} else {
			values = append(values, v)
		}
	}
	if len(values) == 0 {
		return r
	}
	if e.OverSeeds() {
		r.Measured = statOf(e.Stat, stats.Summarize(values))
	} else {
		r.Measured = values[0]
	}
	// Compare the value as the report prints it (four decimals), so that an
	// expectation copied from the report holds.
	r.Measured = metrics.Round(r.Measured, 4)
	r.HasValue = true
	r.Pass = e.Op.Holds(r.Measured, e.Value)
	return r
}

// MeasuredText is the measured value as the reports print it: up to four
// decimals, "none" when the metric had no value.
func (r *Result) MeasuredText() string {
	if !r.HasValue {
		return "none"
	}
	return formatNumber(r.Measured)
}

// RunsText says which runs were measured: "seed 1" or "seeds 1..100".
func (r *Result) RunsText() string {
	if r.Seeds <= 1 {
		return "seed " + strconv.FormatUint(r.FirstSeed, 10)
	}
	s := fmt.Sprintf("seeds %d..%d", r.FirstSeed, r.FirstSeed+uint64(r.Seeds)-1)
	if r.Missing > 0 {
		s += fmt.Sprintf(" (%d without a value)", r.Missing)
	}
	return s
}

// Explain says in words why a result failed; "" when it passed.
func (r *Result) Explain() string {
	switch {
	case r.Pass:
		return ""
	case !r.HasValue:
		return fmt.Sprintf("%s has no value in %s (%s)", r.Expectation.Metric, r.RunsText(), missingReason(r.Expectation.Metric))
	}
	subject := r.Expectation.Metric
	if r.Expectation.OverSeeds() {
		subject = string(r.Expectation.Stat) + "(" + subject + ")"
	}
	return fmt.Sprintf("%s is %s over %s; expected %s", subject, r.MeasuredText(), r.RunsText(), r.Expectation)
}

// formatNumber prints v with at most four decimals and no trailing zeros.
func formatNumber(v float64) string {
	return strconv.FormatFloat(metrics.Round(v, 4), 'f', -1, 64)
}

// statOf picks a statistic from a Summary.
func statOf(s scenarios.Stat, sum stats.Summary) float64 {
	switch s {
	case scenarios.StatMean:
		return sum.Mean
	case scenarios.StatMedian:
		return sum.Median
	case scenarios.StatP5:
		return sum.P5
	case scenarios.StatP95:
		return sum.P95
	case scenarios.StatMin:
		return sum.Min
	default:
		return sum.Max
	}
}

// Seeds is how many seeds checking s takes: 0 without expectations, 1
// unless one takes a statistic over seeds, then s.CheckSeeds, or seeds
// when it is > 0 (retrysim check --seeds).
func Seeds(s *scenarios.Scenario, seeds int) int {
	switch {
	case len(s.Expect) == 0:
		return 0
	case !slices.ContainsFunc(s.Expect, func(e scenarios.Expect) bool { return e.OverSeeds() }):
		return 1
	case seeds > 0:
		return seeds
	}
	return s.CheckSeeds
}

// Measure measures each expectation of s, in file order, on m: s's runs
// on Seeds(s, seeds) seeds from s.Seed.
func Measure(s *scenarios.Scenario, m *runs.MultiSeed) []Result {
	out := make([]Result, len(s.Expect))
	for i := range s.Expect {
		e := &s.Expect[i]
		metric, _ := metrics.Lookup(e.Metric) // the loader checked the name
		out[i] = Evaluate(e.Expectation, s.Policies[e.Policy].Name, s.Seed, m.Series(e.Policy, metric))
		out[i].Scenario = s.Name
		out[i].Source = e.Source()
	}
	return out
}

// missingReason says why a run may have no value of the named metric.
func missingReason(name string) string {
	m, ok := metrics.Lookup(name)
	if !ok {
		m = &metrics.Metric{} // the default reason
	}
	return m.MissingReason()
}

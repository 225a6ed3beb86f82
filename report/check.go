package report

import (
	"fmt"
	"strconv"

	"github.com/retrysim/retrysim/scenarios"
)

// CheckResult is one expectation measured against one policy's runs.
type CheckResult struct {
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

// Evaluate measures e over runs, the policy's results on consecutive seeds
// starting at firstSeed (runs[0] is firstSeed). A single-run expectation
// reads runs[0] only. An expectation whose metric has no value in any run
// fails: a bound cannot hold on nothing.
func Evaluate(e scenarios.Expectation, firstSeed uint64, runs []PolicyResult) CheckResult {
	r := CheckResult{Expectation: e, FirstSeed: firstSeed}
	if len(runs) == 0 {
		return r
	}
	r.Policy = runs[0].Policy
	m, ok := LookupMetric(e.Metric)
	if !ok {
		return r
	}
	if !e.OverSeeds() {
		runs = runs[:1]
	}
	r.Seeds = len(runs)
	values := make([]float64, 0, len(runs))
	for _, run := range runs {
		if v, ok := m.Value(run); ok {
			values = append(values, v)
		} else {
			r.Missing++
		}
	}
	if len(values) == 0 {
		return r
	}
	if e.OverSeeds() {
		r.Measured = statOf(e.Stat, Summarize(values))
	} else {
		r.Measured = values[0]
	}
	// Compare the value as the report prints it (four decimals), so that an
	// expectation copied from the report holds.
	r.Measured = round(r.Measured, 4)
	r.HasValue = true
	r.Pass = e.Op.Holds(r.Measured, e.Value)
	return r
}

// MeasuredText is the measured value as the reports print it: up to four
// decimals, "none" when the metric had no value.
func (r *CheckResult) MeasuredText() string {
	if !r.HasValue {
		return "none"
	}
	return formatNumber(r.Measured)
}

// RunsText says which runs were measured: "seed 1" or "seeds 1..100".
func (r *CheckResult) RunsText() string {
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
func (r *CheckResult) Explain() string {
	switch {
	case r.Pass:
		return ""
	case !r.HasValue:
		return fmt.Sprintf("%s has no value in %s (nothing completed)", r.Expectation.Metric, r.RunsText())
	}
	subject := r.Expectation.Metric
	if r.Expectation.OverSeeds() {
		subject = string(r.Expectation.Stat) + "(" + subject + ")"
	}
	return fmt.Sprintf("%s is %s over %s; expected %s", subject, r.MeasuredText(), r.RunsText(), r.Expectation)
}

// formatNumber prints v with at most four decimals and no trailing zeros.
func formatNumber(v float64) string {
	return strconv.FormatFloat(round(v, 4), 'f', -1, 64)
}

// statOf picks a statistic from a Summary.
func statOf(s scenarios.Stat, sum Summary) float64 {
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

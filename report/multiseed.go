package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/stats"
)

// MultiSeedSchema names the JSON schema of a multi-seed comparison.
// docs/output.md describes it; a change to it gets a new version.
const MultiSeedSchema = "retrysim/multi-seed/v1"

// Alpha is the significance level of the comparisons between policies.
const Alpha = stats.Alpha

// MultiSeedDocument is the JSON form of a multi-seed comparison.
type MultiSeedDocument struct {
	Schema    string        `json:"schema"`
	Scenario  string        `json:"scenario"`
	FirstSeed uint64        `json:"first_seed"`
	Seeds     int           `json:"seeds"`
	Baseline  string        `json:"baseline"`
	Test      string        `json:"test"`
	Alpha     float64       `json:"alpha"`
	Policies  []PolicyStats `json:"policies"`

	metrics  []*metrics.Metric // the metrics of every policy's Metrics, in order
	warnings []string
}

// Warnings are the reasons some comparisons could not find a difference
// even if there were one (too few seeds that differ, for example), one line
// each, "policy: metric vs baseline: reason". The document's JSON does not
// carry them.
func (d *MultiSeedDocument) Warnings() []string { return d.warnings }

// PolicyStats is one policy's statistics, one entry per metric in the
// order of Metrics.
type PolicyStats struct {
	Policy  string        `json:"policy"`
	Metrics []MetricStats `json:"metrics"`
}

// MetricStats describes one metric of one policy over the seeds.
type MetricStats struct {
	Metric string `json:"metric"`
	Better string `json:"better"` // "higher" or "lower"
	// N is the number of seeds on which the metric exists.
	N int `json:"n"`
	// Summary is null when N is 0.
	Summary *stats.Summary `json:"summary"`
	// VsBaseline compares with the first policy; null for the first policy.
	VsBaseline *Difference `json:"vs_baseline"`
}

// Difference compares a policy's metric with the baseline policy's, seed by
// seed.
type Difference struct {
	// Pairs is the number of seeds on which both have the metric.
	Pairs int `json:"pairs"`
	// DeltaMean is the mean over those seeds of (policy − baseline).
	DeltaMean float64 `json:"delta_mean"`
	// DeltaPercent is DeltaMean relative to the baseline's mean over the
	// same seeds; null when that mean is 0.
	DeltaPercent *float64 `json:"delta_percent"`
	// P is the two-sided p-value of the Wilcoxon signed-rank test.
	P float64 `json:"p_value"`
	// Verdict is better or worse when P < Alpha, else ~ (stats.Same).
	Verdict stats.Verdict `json:"verdict"`
}

// Stats computes the document of m: a summary of every metric of every
// policy over the seeds, and a paired comparison of each policy with the
// first one, on unrounded values; the document rounds them for
// presentation.
func Stats(m *runs.MultiSeed) MultiSeedDocument {
	doc := MultiSeedDocument{
		Schema: MultiSeedSchema, Scenario: m.Scenario, FirstSeed: m.FirstSeed, Seeds: m.Seeds(),
		Test: "wilcoxon-signed-rank", Alpha: Alpha, Policies: make([]PolicyStats, len(m.Policies)),
		metrics: m.Metrics,
	}
	if len(m.Policies) > 0 {
		doc.Baseline = m.Policies[0]
	}
	for p, name := range m.Policies {
		ps := PolicyStats{Policy: name, Metrics: make([]MetricStats, len(m.Metrics))}
		for i, metric := range m.Metrics {
			vals, _ := m.Values(p, metric)
			ms := MetricStats{Metric: metric.Name, Better: metric.Better.Word(), N: len(vals)}
			if len(vals) > 0 {
				s := roundSummary(stats.Summarize(vals))
				ms.Summary = &s
			}
			if p > 0 {
				d := stats.Paired(m.Series(0, metric), m.Series(p, metric), metric.Better)
				ms.VsBaseline = difference(d)
				if d.Pairs > 0 {
					for _, w := range d.Warnings {
						doc.warnings = append(doc.warnings, fmt.Sprintf("%s: %s vs %s: %s", name, metric.Name, doc.Baseline, w))
					}
				}
			}
			ps.Metrics[i] = ms
		}
		doc.Policies[p] = ps
	}
	return doc
}

// difference is the JSON form of a comparison, rounded.
func difference(d stats.Difference) *Difference {
	out := &Difference{Pairs: d.Pairs, P: 1, Verdict: stats.Same}
	if d.Pairs == 0 {
		return out
	}
	out.DeltaMean = round(d.DeltaMean, 4)
	if !math.IsNaN(d.DeltaPercent) {
		pct := round(d.DeltaPercent, 2)
		out.DeltaPercent = &pct
	}
	out.P = roundSig(d.Test.P, 4)
	out.Verdict = d.Verdict
	return out
}

// roundSummary rounds every field to 4 decimals so that the last bits of a
// float never decide what the output looks like.
func roundSummary(s stats.Summary) stats.Summary {
	for _, f := range []*float64{&s.Mean, &s.CILow, &s.CIHigh, &s.StdDev, &s.Median, &s.P5, &s.P95, &s.Min, &s.Max} {
		*f = round(*f, 4)
	}
	return s
}

// round rounds to the given number of decimals, for stable, readable output.
func round(v float64, decimals int) float64 { return metrics.Round(v, decimals) }

// roundSig rounds v to the given number of significant digits.
func roundSig(v float64, digits int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', digits, 64), 64)
	return f
}

// formatP prints a p-value as benchstat does: three decimals, or "<0.001".
func formatP(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return fmt.Sprintf("p=%.3f", p)
}

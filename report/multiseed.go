package report

import (
	"fmt"
	"math"
	"slices"
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
	Schema    string `json:"schema"`
	Scenario  string `json:"scenario"`
	FirstSeed uint64 `json:"first_seed"`
	Seeds     int    `json:"seeds"`
	// Origin says what produced the report; nil (left out) in reports
	// written before it existed.
	Origin *Origin `json:"origin,omitempty"`
	// Baseline is the reference policy: the one every other policy is
	// compared with (Reference says how it is chosen).
	Baseline string        `json:"baseline"`
	Test     string        `json:"test"`
	Alpha    float64       `json:"alpha"`
	Policies []PolicyStats `json:"policies"`
	// Warnings are the reasons some comparisons could not find a
	// difference even if there were one, one line each: "policy: metric vs
	// baseline: reason" for a comparison with too few seeds that differ,
	// or one line for the whole document when it has too few seeds for any
	// comparison to be significant. Never null.
	Warnings []string `json:"warnings"`

	metrics []*metrics.Metric // the metrics of every policy's Metrics, in order
}

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
	// VsBaseline compares with the reference policy (the document's
	// Baseline); null for the reference itself.
	VsBaseline *Difference `json:"vs_baseline"`
	// Values are the metric on every seed, from FirstSeed on, rounded as
	// the single-seed report rounds them; null where it has no value. A
	// baseline pairs them with a new run, seed by seed.
	Values []*float64 `json:"values"`
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
	// Verdict is better or worse when P < Alpha, else ~ (stats.Same);
	// "not comparable" for a metric over a subset of the operations when
	// the two policies' subsets differ significantly (metrics.Comparable).
	Verdict stats.Verdict `json:"verdict"`
	// Note says why a comparison is not comparable ("completes 1837
	// fewer") or has no pairs ("nothing completed"); omitted otherwise.
	Note string `json:"note,omitempty"`
	// nearZero: the reference's mean is too near 0 (or the metric a share)
	// for a relative change to mean much; Text writes the change as an
	// amount (NearZero).
	nearZero bool
	// Differing is the number of pairs whose values differ, the test's N.
	// Below stats.MinDifferingPairs (but above 0) the test cannot reach
	// significance, and Text says so. The JSON carries a warning instead.
	Differing int `json:"-"`
}

// Stats computes the document of m with the default reference policy
// (Reference): a summary of every metric of every policy over the seeds,
// and a paired comparison of each policy with the reference, on unrounded
// values; the document rounds them for presentation.
func Stats(m *runs.MultiSeed) MultiSeedDocument { return StatsVs(m, DefaultReference) }

// DefaultReference, given as the reference policy's index, asks for the
// one Reference picks.
const DefaultReference = -1

// Reference returns the index of the default reference policy of m: the
// first policy, in the scenario's order, that completes at least one
// operation on every seed, so that its latency metrics exist on every seed
// and every other policy's latencies can be paired with them. When no
// policy does, it is the first policy, and ok is false.
func Reference(m *runs.MultiSeed) (ref int, ok bool) {
	for p := range m.Policies {
		if completesOnEverySeed(m, p) {
			return p, true
		}
	}
	return 0, false
}

// completesOnEverySeed reports whether policy p of m completes an
// operation on each of its seeds.
func completesOnEverySeed(m *runs.MultiSeed, p int) bool {
	for _, v := range m.Series(p, metrics.Completed) {
		if !(v > 0) {
			return false
		}
	}
	return m.Seeds() > 0
}

// StatsVs is Stats with policy ref (an index into m.Policies) as the
// reference, or the default one when ref is DefaultReference. It panics if
// ref is out of range.
func StatsVs(m *runs.MultiSeed, ref int) MultiSeedDocument {
	if ref == DefaultReference {
		ref, _ = Reference(m)
	}
	doc := MultiSeedDocument{
		Schema: MultiSeedSchema, Scenario: m.Scenario, FirstSeed: m.FirstSeed, Seeds: m.Seeds(),
		Baseline: m.Policies[ref], Test: "wilcoxon-signed-rank", Alpha: Alpha,
		Policies: make([]PolicyStats, len(m.Policies)), Warnings: []string{}, metrics: m.Metrics,
	}
	if def, ok := Reference(m); !ok && ref == def {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("no policy completes an operation on every seed: comparing with the first policy, %s; latencies pair only on the seeds where both complete", doc.Baseline))
	}
	tooFewSeeds := doc.Seeds < stats.MinDifferingPairs
	underpowered := 0
	for p, name := range m.Policies {
		ps := PolicyStats{Policy: name, Metrics: make([]MetricStats, len(m.Metrics))}
		for i, metric := range m.Metrics {
			vals, _ := m.Values(p, metric)
			ms := MetricStats{Metric: metric.Name, Better: metric.Better.Word(), N: len(vals), Values: perSeed(metric, m.Series(p, metric))}
			if len(vals) > 0 {
				s := roundSummary(Summarize(metric, vals))
				ms.Summary = &s
			}
			if p != ref {
				d := stats.Paired(m.Series(ref, metric), m.Series(p, metric), metric.Better)
				ms.VsBaseline = difference(d)
				ms.VsBaseline.Note = missingNote(m, p, ref, metric)
				ms.VsBaseline.nearZero = metric.Proportion || math.IsNaN(d.DeltaPercent) ||
					(d.DeltaMean != 0 && math.Abs(100*d.DeltaMean/d.DeltaPercent) < nearZeroMean(metric))
				if sub := metric.Subset(); sub != nil && d.Pairs > 0 && slices.Contains(m.Metrics, sub) {
					sd := stats.Paired(m.Series(ref, sub), m.Series(p, sub), sub.Better)
					if !metrics.Comparable(metric, sd.Verdict, d.Verdict) {
						ms.VsBaseline.Verdict = stats.NotComparable
						ms.VsBaseline.Note = SubsetChange(sub, sd.DeltaMean)
					}
				}
				if d.Pairs > 0 && !tooFewSeeds {
					for _, w := range d.Warnings {
						doc.Warnings = append(doc.Warnings, fmt.Sprintf("%s: %s vs %s: %s", name, metric.Name, doc.Baseline, w))
					}
				}
				if ms.VsBaseline.underpowered() {
					underpowered++
				}
			}
			ps.Metrics[i] = ms
		}
		doc.Policies[p] = ps
	}
	if tooFewSeeds && underpowered > 0 {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("%s: no comparison can be significant at α = %.2f: the two-sided signed-rank test needs at least %d seeds on which the policies differ; run more seeds",
			seedRange(&doc), Alpha, stats.MinDifferingPairs))
	}
	return doc
}

// nearZeroMean is the smallest magnitude of the reference's mean relative
// to which a change of metric reads as a percentage: one operation or
// request per run, one millisecond, 0.01 of a ratio. Below it, "+2000%"
// says more about the reference than about the change.
func nearZeroMean(metric *metrics.Metric) float64 {
	switch metric.Unit {
	case metrics.Ratio:
		return 0.01
	}
	return 1
}

// NearZero reports whether d's change is written as an amount rather than
// relative to the reference's mean: the metric is a share, or the
// reference's mean is near 0 (below one operation, one millisecond or
// 0.01 of a ratio).
func NearZero(d *Difference) bool { return d.nearZero }

// SubsetChange says how a policy's subset of the operations (those
// completed, or those that gave up) differs, delta per run on average,
// from another's: "completes 1837.6 fewer", "gives up 3 more".
func SubsetChange(subset *metrics.Metric, delta float64) string {
	verb := "completes"
	if subset == metrics.GaveUp {
		verb = "gives up"
	}
	more := "more"
	if delta < 0 {
		more = "fewer"
	}
	return fmt.Sprintf("%s %s %s", verb, strconv.FormatFloat(round(math.Abs(delta), 1), 'f', -1, 64), more)
}

// missingNote says why policy p and the reference ref have no seed on
// which both have metric: which of them never has it, and why. It is ""
// when they have common seeds.
func missingNote(m *runs.MultiSeed, p, ref int, metric *metrics.Metric) string {
	vp, _ := m.Values(p, metric)
	vr, _ := m.Values(ref, metric)
	switch {
	case len(vp) == 0:
		return metric.MissingReason()
	case len(vr) == 0:
		return "the reference: " + metric.MissingReason()
	}
	for i, v := range m.Series(p, metric) {
		if !math.IsNaN(v) && !math.IsNaN(m.Series(ref, metric)[i]) {
			return ""
		}
	}
	return "no common seeds"
}

// Summarize is stats.Summarize of a metric's values; a proportion's
// interval stays inside [0, 1]: Wilson's score interval over seeds for a
// count of runs (recovery.recovered), the clipped t interval of the
// per-seed shares for a share of operations (goodput_share), whose
// values are not trials of one Bernoulli draw each (docs/statistics.md).
func Summarize(metric *metrics.Metric, vals []float64) stats.Summary {
	s := stats.Summarize(vals)
	switch {
	case !metric.Proportion || s.N == 0:
	case metric.Unit == metrics.Count:
		// A run that did or did not (recovery.recovered): each seed is
		// one trial.
		s.CILow, s.CIHigh = stats.Wilson(s.Mean, s.N)
	default:
		// A share of each run's operations: the t interval of the
		// per-seed shares (their spread already reflects the
		// operations each run had), kept inside [0, 1]. A share that is
		// the same on every seed has no spread to show.
		s.CILow, s.CIHigh = max(s.CILow, 0), min(s.CIHigh, 1)
	}
	return s
}

// SummarizeSeries is Summarize of the values of a per-seed series that
// exist: NaN (a seed without a value) is skipped.
func SummarizeSeries(metric *metrics.Metric, series []float64) stats.Summary {
	var vals []float64
	for _, v := range series {
		if !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	return Summarize(metric, vals)
}

// perSeed is series as the JSON report writes it: rounded, null for NaN.
func perSeed(metric *metrics.Metric, series []float64) []*float64 {
	out := make([]*float64, len(series))
	for i, v := range series {
		if !math.IsNaN(v) {
			r := metric.RoundForJSON(v)
			out[i] = &r
		}
	}
	return out
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
	out.Differing = d.Test.N
	return out
}

// underpowered reports whether the comparison could not have been
// significant: some pairs differ, but too few.
func (d *Difference) underpowered() bool {
	return d.Differing > 0 && d.Differing < stats.MinDifferingPairs
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

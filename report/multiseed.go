package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/retrysim/retrysim/sim"
)

// MultiSeedSchema names the JSON schema of a multi-seed comparison.
// docs/output.md describes it; a change to it gets a new version.
const MultiSeedSchema = "retrysim/multi-seed/v1"

// Alpha is the significance level of the comparisons between policies.
const Alpha = 0.05

// MultiSeed holds every policy's metrics on seeds FirstSeed,
// FirstSeed+1, …, FirstSeed+Seeds−1. It keeps numbers, not whole results,
// so that many seeds fit in memory.
type MultiSeed struct {
	Scenario  string
	FirstSeed uint64
	Policies  []string
	// First[p] is policy p's full row on the first seed.
	First []PolicyResult
	// values[p][m][s] is metric m (in the order of Metrics) of policy p on
	// seed FirstSeed+s; NaN where the metric does not exist.
	values [][][]float64
	seeds  int
}

// NewMultiSeed prepares a MultiSeed for k seeds of the given policies.
func NewMultiSeed(scenario string, first uint64, k int, policies []string) *MultiSeed {
	m := &MultiSeed{Scenario: scenario, FirstSeed: first, Policies: policies, seeds: k,
		First: make([]PolicyResult, len(policies)), values: make([][][]float64, len(policies))}
	for p := range m.values {
		m.values[p] = make([][]float64, len(Metrics))
		for i := range Metrics {
			m.values[p][i] = make([]float64, k)
		}
	}
	return m
}

// Add records policy p's result on seed index s. Calls for distinct (s, p)
// may run concurrently, as scenarios.RunSeeds makes them.
func (m *MultiSeed) Add(s, p int, r *sim.Result) {
	row := Row(r)
	if s == 0 {
		m.First[p] = row
	}
	for i, metric := range Metrics {
		v, ok := metric.Value(row)
		if !ok {
			v = math.NaN()
		}
		m.values[p][i][s] = v
	}
}

// Seeds returns the number of seeds.
func (m *MultiSeed) Seeds() int { return m.seeds }

func metricIndex(metric Metric) int {
	for i := range Metrics {
		if Metrics[i].Name == metric.Name {
			return i
		}
	}
	panic("report: metric " + metric.Name + " is not in the registry")
}

// Values returns policy p's values of metric over the seeds in seed order,
// and for each value its seed index; seeds where the metric does not exist
// (latency when nothing completed) are left out.
func (m *MultiSeed) Values(p int, metric Metric) (values []float64, seeds []int) {
	for s, v := range m.values[p][metricIndex(metric)] {
		if !math.IsNaN(v) {
			values = append(values, v)
			seeds = append(seeds, s)
		}
	}
	return values, seeds
}

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
	Summary *Summary `json:"summary"`
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
	// Verdict is "better" or "worse" when P < Alpha, else "~".
	Verdict string `json:"verdict"`
}

func betterName(b Better) string {
	if b == HigherIsBetter {
		return "higher"
	}
	return "lower"
}

// Stats computes the document: a Summary of every metric of every policy and
// a paired comparison of each policy with the first one.
func (m *MultiSeed) Stats() MultiSeedDocument {
	doc := MultiSeedDocument{
		Schema: MultiSeedSchema, Scenario: m.Scenario, FirstSeed: m.FirstSeed, Seeds: m.Seeds(),
		Test: "wilcoxon-signed-rank", Alpha: Alpha, Policies: make([]PolicyStats, len(m.Policies)),
	}
	if len(m.Policies) > 0 {
		doc.Baseline = m.Policies[0]
	}
	for p, name := range m.Policies {
		ps := PolicyStats{Policy: name, Metrics: make([]MetricStats, len(Metrics))}
		for i, metric := range Metrics {
			vals, _ := m.Values(p, metric)
			ms := MetricStats{Metric: metric.Name, Better: betterName(metric.Better), N: len(vals)}
			if len(vals) > 0 {
				s := roundSummary(Summarize(vals))
				ms.Summary = &s
			}
			if p > 0 {
				d := m.compare(0, p, metric)
				ms.VsBaseline = &d
			}
			ps.Metrics[i] = ms
		}
		doc.Policies[p] = ps
	}
	return doc
}

// compare tests policy p against policy base on metric, pairing by seed.
func (m *MultiSeed) compare(base, p int, metric Metric) Difference {
	var xs, ys []float64
	i := metricIndex(metric)
	for s, x := range m.values[base][i] {
		if y := m.values[p][i][s]; !math.IsNaN(x) && !math.IsNaN(y) {
			xs = append(xs, x)
			ys = append(ys, y)
		}
	}
	d := Difference{Pairs: len(xs), P: 1, Verdict: "~"}
	if len(xs) == 0 {
		return d
	}
	var sumX, sumD float64
	for i := range xs {
		sumX += xs[i]
		sumD += ys[i] - xs[i]
	}
	d.DeltaMean = round(sumD/float64(len(xs)), 4)
	if meanX := sumX / float64(len(xs)); meanX != 0 {
		pct := round(100*(sumD/float64(len(xs)))/meanX, 2)
		d.DeltaPercent = &pct
	}
	t := SignedRank(xs, ys)
	d.P = roundSig(t.P, 4)
	if t.P < Alpha {
		higher := t.WPlus > t.WMinus
		if higher == (metric.Better == HigherIsBetter) {
			d.Verdict = "better"
		} else {
			d.Verdict = "worse"
		}
	}
	return d
}

// roundSummary rounds every field to 4 decimals so that the last bits of a
// float never decide what the output looks like.
func roundSummary(s Summary) Summary {
	for _, f := range []*float64{&s.Mean, &s.CILow, &s.CIHigh, &s.StdDev, &s.Median, &s.P5, &s.P95, &s.Min, &s.Max} {
		*f = round(*f, 4)
	}
	return s
}

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

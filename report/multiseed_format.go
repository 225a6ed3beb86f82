package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/stats"
)

// WriteMultiSeed renders a multi-seed document in format, one of Formats.
// Tables show the headline metrics; JSON and CSV carry every metric.
func WriteMultiSeed(w io.Writer, format Format, doc *MultiSeedDocument) error {
	return writeAs(w, format,
		func() any { return doc },
		func(w io.Writer) error { return writeMultiCSV(w, doc) },
		func(w io.Writer, markdown bool) error { return writeMultiTable(w, markdown, doc) })
}

// seedRange describes the seeds of doc in words, e.g. "seeds 1–100".
func seedRange(doc *MultiSeedDocument) string {
	if doc.Seeds == 1 {
		return fmt.Sprintf("seed %d", doc.FirstSeed)
	}
	return fmt.Sprintf("seeds %d–%d", doc.FirstSeed, doc.FirstSeed+uint64(doc.Seeds)-1)
}

// Stats finds the policy's statistics of the named metric; nil if it has
// none.
func (ps *PolicyStats) Stats(metric string) *MetricStats { return metricStats(ps, metric) }

// metricStats finds a policy's statistics of one metric.
func metricStats(ps *PolicyStats, metric string) *MetricStats {
	for i := range ps.Metrics {
		if ps.Metrics[i].Metric == metric {
			return &ps.Metrics[i]
		}
	}
	return nil
}

// MultiSeedColumns returns the columns of the multi-seed tables of doc.
func MultiSeedColumns(doc *MultiSeedDocument) []string {
	return []string{"policy", "n", "mean ± 95% CI", "median", "p5", "p95", "vs " + doc.Baseline}
}

// HeadlineMetrics returns the metrics of doc that tables of statistics show.
func (d *MultiSeedDocument) HeadlineMetrics() []*metrics.Metric { return metrics.Headline(d.metrics) }

// MultiSeedRows returns the table rows of one metric: one per policy, with
// missing values as missing.
func MultiSeedRows(doc *MultiSeedDocument, metric *metrics.Metric, missing string) [][]string {
	dec := metric.Decimals()
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', dec, 64) }
	var rows [][]string
	for i := range doc.Policies {
		ps := &doc.Policies[i]
		ms := metricStats(ps, metric.Name)
		row := []string{ps.Policy, strconv.Itoa(ms.N), missing, missing, missing, missing, ""}
		if s := ms.Summary; s != nil {
			half := max(s.CIHigh-s.Mean, 0)
			row[2] = num(s.Mean) + " ± " + num(half)
			if metric.Proportion {
				// Clipped to [0, 1], or Wilson's: not symmetric about the mean.
				row[2] = num(s.Mean) + " [" + num(s.CILow) + ", " + num(s.CIHigh) + "]"
			}
			row[3], row[4], row[5] = num(s.Median), num(s.P5), num(s.P95)
		}
		if d := ms.VsBaseline; d != nil {
			row[6] = d.Text()
		}
		rows = append(rows, row)
	}
	return rows
}

// Text writes a comparison with the baseline as benchstat does: the
// change of the mean and the p-value, or "~" when not significant, and
// then, when the test could not have been significant, how few seeds
// differ: "~ (p=0.250, only 3 seeds differ)".
func (d *Difference) Text() string {
	if d.Pairs == 0 {
		if d.Note == "" {
			return "n/a: no common seeds"
		}
		return "n/a: " + d.Note
	}
	if d.Verdict == stats.NotComparable {
		return "not comparable: " + d.Note
	}
	if d.Verdict == stats.Same {
		if d.underpowered() {
			return fmt.Sprintf("~ (%s, only %d %s)", formatP(d.P), d.Differing, plural(d.Differing, "seed differs", "seeds differ"))
		}
		return "~ (" + formatP(d.P) + ")"
	}
	change := strconv.FormatFloat(d.DeltaMean, 'f', -1, 64)
	if d.DeltaMean > 0 {
		change = "+" + change
	}
	switch pct := d.DeltaPercent; {
	case d.nearZero:
		// An amount: a share, or a change from (nearly) nothing.
	case pct != nil && *pct > maxPercent:
		// More than ten times the reference reads better as a factor.
		change = fmt.Sprintf("×%.1f", 1+*pct/100)
	case pct != nil:
		change = fmt.Sprintf("%+.1f%%", *pct)
	}
	return fmt.Sprintf("%s %s (%s)", change, d.Verdict, formatP(d.P))
}

// MetricTitle names a metric for the title of its table: its name, its
// direction and, for a metric over a subset of the operations, which:
// "latency_ms.p99 (lower is better; completed operations only)".
func MetricTitle(m *metrics.Metric) string {
	if m.Proportion {
		if m.Unit == metrics.Count {
			return fmt.Sprintf("%s (%s; a share of runs: mean [95%% Wilson interval])", m.Name, m.Better)
		}
		return fmt.Sprintf("%s (%s; a share: mean [95%% interval, inside 0 to 1])", m.Name, m.Better)
	}
	if m.Subset() != nil {
		return fmt.Sprintf("%s (%s; %s)", m.Name, m.Better, m.Over)
	}
	return fmt.Sprintf("%s (%s)", m.Name, m.Better)
}

// maxPercent is the largest change Text shows as a percentage.
const maxPercent = 900

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func writeMultiTable(w io.Writer, markdown bool, doc *MultiSeedDocument) error {
	cols := MultiSeedColumns(doc)
	align := TextColumns(len(cols), 0, len(cols)-1) // policy and verdict left
	intro := fmt.Sprintf("scenario %s, %s (n = seeds on which the metric exists)\n"+
		"mean ± half-width of its 95%% confidence interval (Student's t); median, p5, p95 over seeds\n"+
		"vs %s (the reference policy): change of the mean, paired by seed, Wilcoxon signed-rank test; ~ means no significant difference at α = %.2f\n",
		doc.Scenario, seedRange(doc), doc.Baseline, doc.Alpha)
	if markdown {
		intro = strings.ReplaceAll(strings.TrimSuffix(intro, "\n"), "\n", "  \n") + "\n"
	}
	if _, err := io.WriteString(w, intro); err != nil {
		return err
	}
	if err := writeTradeSummary(w, markdown, doc); err != nil {
		return err
	}
	for _, m := range doc.HeadlineMetrics() {
		if err := writeMultiMetric(w, markdown, doc, m, cols, align); err != nil {
			return err
		}
	}
	return writeMultiPriorities(w, markdown, doc, cols, align)
}

// writeMultiMetric writes one metric's table of statistics, under its title.
func writeMultiMetric(w io.Writer, markdown bool, doc *MultiSeedDocument, m *metrics.Metric, cols []string, align []bool) error {
	if markdown {
		fmt.Fprintf(w, "\n#### %s\n\n", MetricTitle(m))
	} else {
		fmt.Fprintf(w, "\n%s\n", MetricTitle(m))
	}
	return WriteTable(w, markdown, cols, MultiSeedRows(doc, m, "-"), align)
}

// multiSeedCSVHeader is the header row of the multi-seed CSV.
var multiSeedCSVHeader = []string{"scenario", "first_seed", "seeds", "policy", "metric", "better", "n",
	"mean", "ci95_low", "ci95_high", "stddev", "median", "p5", "p95", "min", "max",
	"baseline", "pairs", "delta_mean", "delta_percent", "p_value", "verdict", "note"}

func writeMultiCSV(w io.Writer, doc *MultiSeedDocument) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(multiSeedCSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, ps := range doc.Policies {
		for _, ms := range ps.Metrics {
			row := []string{doc.Scenario, strconv.FormatUint(doc.FirstSeed, 10), strconv.Itoa(doc.Seeds),
				ps.Policy, ms.Metric, ms.Better, strconv.Itoa(ms.N)}
			if s := ms.Summary; s != nil {
				row = append(row, f(s.Mean), f(s.CILow), f(s.CIHigh), f(s.StdDev), f(s.Median), f(s.P5), f(s.P95), f(s.Min), f(s.Max))
			} else {
				row = append(row, "", "", "", "", "", "", "", "", "")
			}
			if d := ms.VsBaseline; d != nil {
				pct := ""
				if d.DeltaPercent != nil {
					pct = f(*d.DeltaPercent)
				}
				row = append(row, doc.Baseline, strconv.Itoa(d.Pairs), f(d.DeltaMean), pct, f(d.P), d.Verdict.String(), d.Note)
			} else {
				row = append(row, "", "", "", "", "", "", "")
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

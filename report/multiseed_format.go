package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// HeadlineMetrics are the metrics that multi-seed tables, box plots and
// sweep tables show; JSON and CSV carry every metric.
var HeadlineMetrics = []string{"completed", "attempts", "gave_up", "amplification", "latency_ms.p50", "latency_ms.p99", "last_completion_ms"}

// WriteMultiSeed renders a multi-seed document as table, markdown, csv or
// json.
func WriteMultiSeed(w io.Writer, format string, doc *MultiSeedDocument) error {
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

// decimals is how many decimals tables show for a metric.
func decimals(metric string) int {
	switch {
	case strings.HasPrefix(metric, "latency_ms."), metric == "last_completion_ms":
		return 1
	case metric == "amplification":
		return 3
	}
	return 2
}

// metricStats finds a policy's statistics of one metric.
func metricStats(ps *PolicyStats, metric string) *MetricStats {
	for i := range ps.Metrics {
		if ps.Metrics[i].Metric == metric {
			return &ps.Metrics[i]
		}
	}
	return nil
}

// MultiSeedColumns are the columns of the multi-seed tables.
var MultiSeedColumns = []string{"policy", "n", "mean ± 95% CI", "median", "p5", "p95", "vs "}

// MultiSeedRows returns the table rows of one metric: one per policy, with
// missing values as missing.
func MultiSeedRows(doc *MultiSeedDocument, metric string, missing string) [][]string {
	dec := decimals(metric)
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', dec, 64) }
	var rows [][]string
	for i := range doc.Policies {
		ps := &doc.Policies[i]
		ms := metricStats(ps, metric)
		row := []string{ps.Policy, strconv.Itoa(ms.N), missing, missing, missing, missing, ""}
		if s := ms.Summary; s != nil {
			half := max(s.CIHigh-s.Mean, 0)
			row[2] = num(s.Mean) + " ± " + num(half)
			row[3], row[4], row[5] = num(s.Median), num(s.P5), num(s.P95)
		}
		if d := ms.VsBaseline; d != nil {
			row[6] = Verdict(d)
		}
		rows = append(rows, row)
	}
	return rows
}

// Verdict formats a comparison with the baseline as benchstat does: the
// change of the mean and the p-value, or "~" when not significant.
func Verdict(d *Difference) string {
	if d.Pairs == 0 {
		return "n/a: no common seeds"
	}
	if d.Verdict == "~" {
		return "~ (" + formatP(d.P) + ")"
	}
	change := strconv.FormatFloat(d.DeltaMean, 'f', -1, 64)
	if d.DeltaMean > 0 {
		change = "+" + change
	}
	if d.DeltaPercent != nil {
		change = fmt.Sprintf("%+.1f%%", *d.DeltaPercent)
	}
	return fmt.Sprintf("%s %s (%s)", change, d.Verdict, formatP(d.P))
}

func writeMultiTable(w io.Writer, markdown bool, doc *MultiSeedDocument) error {
	cols := append([]string(nil), MultiSeedColumns...)
	cols[len(cols)-1] += doc.Baseline
	align := leftAligned(len(cols), 0, len(cols)-1) // policy and verdict left
	intro := fmt.Sprintf("scenario %s, %s (n = seeds on which the metric exists)\n"+
		"mean ± half-width of its 95%% confidence interval (Student's t); median, p5, p95 over seeds\n"+
		"vs %s: change of the mean, paired by seed, Wilcoxon signed-rank test; ~ means no significant difference at α = %.2f\n",
		doc.Scenario, seedRange(doc), doc.Baseline, doc.Alpha)
	if markdown {
		intro = strings.ReplaceAll(strings.TrimSuffix(intro, "\n"), "\n", "  \n") + "\n"
	}
	if _, err := io.WriteString(w, intro); err != nil {
		return err
	}
	for _, metric := range HeadlineMetrics {
		m, _ := LookupMetric(metric)
		if markdown {
			fmt.Fprintf(w, "\n#### %s (%s)\n\n", metric, m.Better)
		} else {
			fmt.Fprintf(w, "\n%s (%s)\n", metric, m.Better)
		}
		if err := table(w, markdown, cols, MultiSeedRows(doc, metric, "-"), align); err != nil {
			return err
		}
	}
	return nil
}

// MultiSeedCSVHeader is the header row of the multi-seed CSV.
var MultiSeedCSVHeader = []string{"scenario", "first_seed", "seeds", "policy", "metric", "better", "n",
	"mean", "ci95_low", "ci95_high", "stddev", "median", "p5", "p95", "min", "max",
	"baseline", "pairs", "delta_mean", "delta_percent", "p_value", "verdict"}

func writeMultiCSV(w io.Writer, doc *MultiSeedDocument) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(MultiSeedCSVHeader); err != nil {
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
				row = append(row, doc.Baseline, strconv.Itoa(d.Pairs), f(d.DeltaMean), pct, f(d.P), d.Verdict)
			} else {
				row = append(row, "", "", "", "", "", "")
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/stats"
)

// TradeRow is one policy's line of the trade summary: what it completes,
// what a completion costs, whom it abandons and why, how long its
// completions take, and what it trades against the reference policy. The
// numbers are means per run over the seeds.
type TradeRow struct {
	Policy string
	// Completed and Operations are the operations completed and run
	// (completed plus given up).
	Completed, Operations float64
	// AttemptsPerCompletion, P50 and P99 are NaN when nothing completed.
	AttemptsPerCompletion float64
	// GaveUpBy lists the reasons with give-ups: "attempts=20 deadline=2".
	GaveUpBy string
	P50, P99 float64
	// P50N and P99N are the seeds on which they exist (those on which
	// something completed).
	P50N, P99N int
	// Verdict weighs the policy against the reference on every axis
	// (Dominance); "reference" for the reference itself.
	Verdict string
}

// tradeAxes are the axes of the dominance verdict, in the order its
// words list them. Latencies are axes only where they are comparable
// (metrics.Comparable); a policy that completes fewer cannot win on them.
var tradeAxes = []*metrics.Metric{metrics.Completed, metrics.Attempts, metrics.P50, metrics.P99}

// TradeSummary returns the trade summary of doc, one row per policy.
func TradeSummary(doc *MultiSeedDocument) []TradeRow {
	var rows []TradeRow
	mean := func(ps *PolicyStats, name string) float64 {
		if ms := metricStats(ps, name); ms != nil && ms.Summary != nil {
			return ms.Summary.Mean
		}
		return math.NaN()
	}
	for i := range doc.Policies {
		ps := &doc.Policies[i]
		row := TradeRow{Policy: ps.Policy, Completed: mean(ps, metrics.Completed.Name),
			AttemptsPerCompletion: mean(ps, metrics.AttemptsPerCompletion.Name),
			P50:                   mean(ps, metrics.P50.Name), P99: mean(ps, metrics.P99.Name)}
		row.Operations = row.Completed + mean(ps, metrics.GaveUp.Name)
		if ms := metricStats(ps, metrics.P50.Name); ms != nil {
			row.P50N = ms.N
		}
		if ms := metricStats(ps, metrics.P99.Name); ms != nil {
			row.P99N = ms.N
		}
		var parts []string
		for _, m := range metrics.GaveUpBy() {
			if v := mean(ps, m.Name); v > 0 {
				parts = append(parts, m.Part()+"="+trimNumber(v))
			}
		}
		row.GaveUpBy = strings.Join(parts, " ")
		switch {
		case ps.Policy == doc.Baseline:
			row.Verdict = "reference"
		case doc.Seeds == 1:
			row.Verdict = "one seed: no test (run --seeds N)"
		default:
			row.Verdict = Dominance(ps)
		}
		rows = append(rows, row)
	}
	return rows
}

// Dominance weighs a policy against the reference on every axis of the
// trade (completions, attempts, and the latencies where comparable), from
// the paired comparisons of its statistics: "better on every axis" when it
// is significantly better on each, "better, worse on none" when better on
// some and not different on the others, "worse on every axis" and "worse,
// better on none" the other way round, otherwise "a trade" naming what it
// gains and what it pays ("a trade: completes 2 more, sends 40% more"), or
// "no significant difference". Nothing ranks on one axis alone.
func Dominance(ps *PolicyStats) string {
	var gains, losses, words, notComparable []string
	axes := 0
	for _, m := range tradeAxes {
		ms := metricStats(ps, m.Name)
		if ms == nil || ms.VsBaseline == nil {
			continue
		}
		d := ms.VsBaseline
		if d.Pairs > 0 && d.Verdict != stats.NotComparable {
			axes++
		}
		switch d.Verdict {
		case stats.Better:
			gains = append(gains, axisWords(m, d))
			words = append(words, axisWords(m, d))
		case stats.Worse:
			losses = append(losses, axisWords(m, d))
			words = append(words, axisWords(m, d))
		case stats.NotComparable:
			notComparable = append(notComparable, m.Part())
		}
	}
	// "Every axis" only when every axis was weighed: a latency that is
	// not comparable is not better (or worse) with the others.
	every := len(notComparable) == 0
	var out string
	switch {
	case len(gains) == 0 && len(losses) == 0:
		out = "no significant difference"
	case len(gains) == axes && every:
		out = "better on every axis: " + strings.Join(gains, ", ")
	case len(losses) == axes && every:
		out = "worse on every axis: " + strings.Join(losses, ", ")
	case len(losses) == 0:
		out = "better, worse on none: " + strings.Join(gains, ", ")
	case len(gains) == 0:
		out = "worse, better on none: " + strings.Join(losses, ", ")
	default:
		out = "a trade: " + strings.Join(words, ", ")
	}
	switch {
	case len(notComparable) == 2:
		out += " (latencies not comparable)"
	case len(notComparable) == 1:
		out += " (" + notComparable[0] + " not comparable)"
	}
	return out
}

// axisWords says how a policy differs from the reference on one axis:
// "completes 2 more", "sends 40% fewer", "p99 35% lower".
func axisWords(m *metrics.Metric, d *Difference) string {
	up := d.DeltaMean > 0
	switch m {
	case metrics.Completed:
		return SubsetChange(m, d.DeltaMean)
	case metrics.Attempts:
		return "sends " + relative(d, "more", "fewer", up)
	}
	return m.Part() + " " + relative(d, "higher", "lower", up)
}

// relative is a change as a percentage of the reference's mean, or as an
// amount when that mean is near 0 (NearZero).
func relative(d *Difference, more, fewer string, up bool) string {
	word := fewer
	if up {
		word = more
	}
	if d.DeltaPercent == nil || NearZero(d) {
		return trimNumber(math.Abs(d.DeltaMean)) + " " + word
	}
	if *d.DeltaPercent > maxPercent {
		return fmt.Sprintf("×%.1f %s", 1+*d.DeltaPercent/100, word)
	}
	pct := math.Abs(*d.DeltaPercent)
	dec := 0
	if pct < 10 {
		dec = 1
	}
	return strconv.FormatFloat(pct, 'f', dec, 64) + "% " + word
}

// trimNumber writes v with at most one decimal, without a trailing ".0".
func trimNumber(v float64) string {
	return strconv.FormatFloat(round(v, 1), 'f', -1, 64)
}

// writeTradeSummary writes the summary of doc as a table (or markdown).
func writeTradeSummary(w io.Writer, markdown bool, doc *MultiSeedDocument) error {
	title := fmt.Sprintf("The trade, per policy (means per run over %s; p50 and p99 over completed operations only; vs %s)", seedRange(doc), doc.Baseline)
	if markdown {
		fmt.Fprintf(w, "\n#### %s\n\n", title)
	} else {
		fmt.Fprintf(w, "\n%s\n", title)
	}
	header, rows := TradeCells(doc, "-")
	return WriteTable(w, markdown, header, rows, TextColumns(len(header), 0, 3, len(header)-1))
}

// TradeCells returns the trade summary of doc as a header and rows of
// text, missing values as missing.
func TradeCells(doc *MultiSeedDocument, missing string) (header []string, rows [][]string) {
	header = []string{"policy", "completed", "attempts/completion", "gave up, by reason", "p50_ms", "p99_ms", "vs " + doc.Baseline}
	num := func(v float64, dec int) string {
		if math.IsNaN(v) {
			return missing
		}
		return strconv.FormatFloat(v, 'f', dec, 64)
	}
	for _, r := range TradeSummary(doc) {
		done := missing
		if r.Operations > 0 {
			done = fmt.Sprintf("%s of %s (%s)", trimNumber(r.Completed), trimNumber(r.Operations), SharePercent(r.Completed/r.Operations))
		}
		gave := r.GaveUpBy
		if gave == "" {
			gave = missing
		}
		// A mean over fewer seeds than the run says over how many.
		withN := func(v float64, n int) string {
			cell := num(v, 1)
			if n > 0 && n < doc.Seeds {
				cell += fmt.Sprintf(" (n=%d)", n)
			}
			return cell
		}
		rows = append(rows, []string{r.Policy, done, num(r.AttemptsPerCompletion, 2), gave, withN(r.P50, r.P50N), withN(r.P99, r.P99N), r.Verdict})
	}
	return header, rows
}

// SharePercent writes a share as a percentage that never rounds a part to
// all or nothing: "90%", "1.5%", ">99.9%".
func SharePercent(share float64) string {
	pct := 100 * share
	switch {
	case pct == 0 || pct == 100:
		return fmt.Sprintf("%.0f%%", pct)
	case pct > 99.9:
		return ">99.9%"
	case pct < 0.1:
		return "<0.1%"
	case pct < 10 || pct > 99:
		return fmt.Sprintf("%.1f%%", pct)
	}
	return fmt.Sprintf("%.0f%%", pct)
}

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
	// Unit names the workload's own unit of work when it has one that
	// spans calls ("sessions", metrics.Metric.Work), "" otherwise; then
	// Done and Run are the units completed and run (completed plus
	// failed), Spent what they cost besides calls ("resumed=3 tokens
	// wasted=2.6M"), and the other fields count calls.
	Unit      string
	Done, Run float64
	Spent     string
}

// tradeAxes are the axes of the dominance verdict of ps, in the order its
// words list them: what it completes, what it sends, and its latencies.
// Latencies are axes only where they are comparable (metrics.Comparable);
// a policy that completes fewer cannot win on them. Where the workload
// has its own unit of work (sessions), the units completed replace the
// calls completed: a session that fails stops early, so it leaves calls
// unsent, and more calls completed is not more work done.
func tradeAxes(ps *PolicyStats) []*metrics.Metric {
	done := metrics.Completed
	if w := workMetric(ps, metrics.WorkDone); w != nil {
		done = w
	}
	return []*metrics.Metric{done, metrics.Attempts, metrics.P50, metrics.P99}
}

// workMetric returns ps's metric of the workload's own unit of work with
// role r (metrics.Metric.Work), nil if it has none.
func workMetric(ps *PolicyStats, r metrics.WorkRole) *metrics.Metric {
	for i := range ps.Metrics {
		if m, ok := metrics.Lookup(ps.Metrics[i].Metric); ok && m.Work == r {
			return m
		}
	}
	return nil
}

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
		if done := workMetric(ps, metrics.WorkDone); done != nil {
			row.Unit, row.Done = done.WorkUnit(), mean(ps, done.Name)
			row.Run = row.Done
			if lost := workMetric(ps, metrics.WorkLost); lost != nil {
				row.Run += mean(ps, lost.Name)
			}
			var spent []string
			for _, ms := range ps.Metrics {
				if m, ok := metrics.Lookup(ms.Metric); ok && m.Work == metrics.WorkSpent {
					_, what, _ := strings.Cut(m.Name, ".")
					spent = append(spent, strings.ReplaceAll(what, "_", " ")+"="+ShortCount(mean(ps, m.Name)))
				}
			}
			row.Spent = strings.Join(spent, " ")
		}
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
// some and not different on the others ("better where comparable" when a
// latency could not be weighed), "worse on every axis" and "worse,
// better on none" the other way round, otherwise "a trade" naming what it
// gains and what it pays ("a trade: completes 2 more, sends 40% more"), or
// "no significant difference". Nothing ranks on one axis alone.
func Dominance(ps *PolicyStats) string {
	var gains, losses, words, notComparable []string
	axes := 0
	calls := workMetric(ps, metrics.WorkDone) != nil
	for _, m := range tradeAxes(ps) {
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
			gains = append(gains, axisWords(m, d, calls))
			words = append(words, axisWords(m, d, calls))
		case stats.Worse:
			losses = append(losses, axisWords(m, d, calls))
			words = append(words, axisWords(m, d, calls))
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
	case len(losses) == 0 && !every:
		// A latency left out may be far worse in the same row (the p99 of
		// a policy that completes more): "worse on none" would deny it.
		out = "better where comparable: " + strings.Join(gains, ", ")
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
// "completes 2 more", "sends 40% fewer", "p99 35% lower"; with calls
// (a workload whose unit of work spans calls), "completes 3 more
// sessions", "sends 40% fewer calls", "call p99 35% lower".
func axisWords(m *metrics.Metric, d *Difference, calls bool) string {
	up := d.DeltaMean > 0
	switch {
	case m == metrics.Completed:
		return SubsetChange(m, d.DeltaMean)
	case m.Work == metrics.WorkDone:
		return SubsetChange(metrics.Completed, d.DeltaMean) + " " + m.WorkUnit()
	case m == metrics.Attempts && calls:
		return "sends " + relative(d, "more", "fewer", up) + " calls"
	case m == metrics.Attempts:
		return "sends " + relative(d, "more", "fewer", up)
	case calls:
		return "call " + m.Part() + " " + relative(d, "higher", "lower", up)
	}
	return m.Part() + " " + relative(d, "higher", "lower", up)
}

// ShortCount writes a count of up to three significant digits with a
// suffix for thousands and millions: "12", "2.6k", "1.54M".
func ShortCount(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(metrics.Round(v/1e6, 2), 'f', -1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(metrics.Round(v/1e3, 1), 'f', -1, 64) + "k"
	}
	return trimNumber(v)
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
	if unit := tradeUnit(doc); unit != "" {
		title = fmt.Sprintf("The trade, per policy: %s first, then the calls they cost (means per run over %s; p50 and p99 over completed calls only; vs %s)", unit, seedRange(doc), doc.Baseline)
	}
	if markdown {
		fmt.Fprintf(w, "\n#### %s\n\n", title)
	} else {
		fmt.Fprintf(w, "\n%s\n", title)
	}
	header, rows := TradeCells(doc, "-")
	text := TextColumns(len(header), 0, 3, len(header)-1) // policy, give-ups, verdict
	if tradeUnit(doc) != "" {
		text = TextColumns(len(header), 0, 2, 5, len(header)-1) // and the sessions' cost
	}
	return WriteTable(w, markdown, header, rows, text)
}

// TradeCells returns the trade summary of doc as a header and rows of
// text, missing values as missing.
//
// Where the workload's unit of work spans calls (TradeRow.Unit), its
// columns lead: the units completed of those run and what they cost
// besides calls; the columns of calls follow, named as calls, their
// completions as a share of the calls each policy made (a policy whose
// sessions fail early makes fewer calls, so the counts alone are not
// like for like).
func TradeCells(doc *MultiSeedDocument, missing string) (header []string, rows [][]string) {
	unit := tradeUnit(doc)
	header = []string{"policy", "completed", "attempts/completion", "gave up, by reason", "p50_ms", "p99_ms", "vs " + doc.Baseline}
	if unit != "" {
		header = []string{"policy", unit + " completed", unit + ": cost besides calls", "calls completed", "attempts/call completed", "calls gave up, by reason", "call p50_ms", "call p99_ms", "vs " + doc.Baseline}
	}
	num := func(v float64, dec int) string {
		if math.IsNaN(v) {
			return missing
		}
		return strconv.FormatFloat(v, 'f', dec, 64)
	}
	share := func(done, of float64) string {
		if !(of > 0) {
			return missing
		}
		return fmt.Sprintf("%s of %s (%s)", trimNumber(done), trimNumber(of), SharePercent(done/of))
	}
	for _, r := range TradeSummary(doc) {
		done := share(r.Completed, r.Operations)
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
		row := []string{r.Policy, done, num(r.AttemptsPerCompletion, 2), gave, withN(r.P50, r.P50N), withN(r.P99, r.P99N), r.Verdict}
		if unit != "" {
			spent := r.Spent
			if spent == "" {
				spent = missing
			}
			row = append([]string{r.Policy, share(r.Done, r.Run), spent}, row[1:]...)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// tradeUnit names the unit of work, spanning calls, that every policy of
// doc reports ("sessions"), or "" when they do not.
func tradeUnit(doc *MultiSeedDocument) string {
	unit := ""
	for i := range doc.Policies {
		m := workMetric(&doc.Policies[i], metrics.WorkDone)
		if m == nil || unit != "" && m.WorkUnit() != unit {
			return ""
		}
		unit = m.WorkUnit()
	}
	return unit
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

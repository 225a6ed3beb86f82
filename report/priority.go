package report

import (
	"fmt"
	"io"
	"slices"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/sim"
)

// Levels returns the priority levels a metric set reports by priority
// (its by_priority metrics), in the set's order: highest first.
func Levels(set []*metrics.Metric) []sim.Priority {
	var out []sim.Priority
	for _, m := range set {
		if p, _, ok := m.Level(); ok && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// priorityRows returns the rows of the section by priority of a one-seed
// table: for each result and each level, the columns of the metrics of
// table that exist by priority, over the level's operations; the header
// names the policy, then the priority, then Columns' others, and text
// says which columns hold text.
func priorityRows(results []sim.Result, table []*metrics.Metric, levels []sim.Priority) (header []string, rows [][]string, text []bool) {
	base := byPriorityOnly(table, levels[0])
	cols := Columns(base)
	text = textColumns(base)
	text = slices.Concat(text[:1], []bool{true}, text[1:])
	header = slices.Concat(cols[:1], []string{"priority"}, cols[1:])
	for i := range results {
		for _, p := range levels {
			sub, ok := results[i].OfPriority(p)
			if !ok {
				sub = &sim.Result{} // no operation of that level started
			}
			pr := Row(sub, base)
			pr.Policy = results[i].Policy
			cells := Cells(pr, "-")
			rows = append(rows, slices.Concat(cells[:1], []string{p.String()}, cells[1:]))
		}
	}
	return header, rows, text
}

// byPriorityOnly returns the metrics of set that exist by priority.
func byPriorityOnly(set []*metrics.Metric, p sim.Priority) []*metrics.Metric {
	var out []*metrics.Metric
	for _, m := range set {
		if _, ok := metrics.ByPriority(p, m); ok {
			out = append(out, m)
		}
	}
	return out
}

// writePriorities writes the section by priority under a one-seed table,
// when the scenario's operations have priorities.
func writePriorities(w io.Writer, markdown bool, c *Comparison, table []*metrics.Metric) error {
	levels := Levels(c.metrics())
	if len(levels) == 0 {
		return nil
	}
	if markdown {
		fmt.Fprintf(w, "\n#### By priority, seed %d\n\n", c.Seed)
	} else {
		fmt.Fprintf(w, "\nby priority\n")
	}
	header, rows, text := priorityRows(c.Results, table, levels)
	return WriteTable(w, markdown, header, rows, text)
}

// multiPriorityMetrics are the metrics the multi-seed tables show by
// priority, level by level: what each level completed and lost, and its
// tail.
var multiPriorityMetrics = []*metrics.Metric{metrics.Completed, metrics.GaveUp, metrics.P99}

// writeMultiPriorities writes the multi-seed tables by priority, when the
// scenario's operations have priorities: for each level, a table of each
// of multiPriorityMetrics (the JSON and CSV carry every metric by
// priority).
func writeMultiPriorities(w io.Writer, markdown bool, doc *MultiSeedDocument, cols []string, align []bool) error {
	for _, p := range Levels(doc.metrics) {
		for _, base := range multiPriorityMetrics {
			m, _ := metrics.ByPriority(p, base)
			if !slices.Contains(doc.metrics, m) {
				continue
			}
			if err := writeMultiMetric(w, markdown, doc, m, cols, align); err != nil {
				return err
			}
		}
	}
	return nil
}

package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/retrysim/retrysim/sim"
)

// A breakdown is a table of a run's counters per part of its topology:
// every counter PREFIX.PART.WHAT (sim.Result.Counters) is the value of
// column WHAT in the row of PART. The counters are read generically, so
// that a counter a model adds shows up without a change here.
type breakdown struct {
	prefix string // "pool."
	title  string // the table's heading
	part   string // the column of the parts' names
	json   string // the document's field
}

// breakdowns are the tables under the single-run table, in order: a
// pool's members (pool.NAME.requests, .failed, .ejections or .cooldowns)
// and a layered policy's retry layers (layers.outer.attempts,
// layers.NAME.attempts, ...).
var breakdowns = []breakdown{
	{"pool.", "pool members", "member", "pool_members"},
	{"layers.", "retry layers", "layer", "layers"},
}

// BreakdownRow is one part of one policy's run: its counters by what they
// count (JSON writes them in alphabetical order).
type BreakdownRow struct {
	Policy string           `json:"policy"`
	Name   string           `json:"name"`
	Counts map[string]int64 `json:"counts"`
}

// breakdownTable is a breakdown of every policy's run: its rows (policies
// in order, parts in the order their counters were reported) and its
// columns (the whats, in the order first reported).
type breakdownTable struct {
	breakdown
	rows  []BreakdownRow
	whats []string
}

// split returns the part and what of a counter name PREFIX.PART.WHAT, and
// false for any other name (pool.requests counts the whole pool).
func (b breakdown) split(name string) (part, what string, ok bool) {
	rest, ok := strings.CutPrefix(name, b.prefix)
	i := strings.LastIndexByte(rest, '.')
	if !ok || i <= 0 || i == len(rest)-1 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// breakdownTables returns the breakdowns of results that have any rows.
func breakdownTables(results []sim.Result) []breakdownTable {
	var out []breakdownTable
	for _, b := range breakdowns {
		t := breakdownTable{breakdown: b}
		for p := range results {
			r := &results[p]
			first := len(t.rows)
			for _, c := range r.Counters {
				part, what, ok := b.split(c.Name)
				if !ok {
					continue
				}
				i := slices.IndexFunc(t.rows[first:], func(row BreakdownRow) bool { return row.Name == part })
				if i < 0 {
					t.rows = append(t.rows, BreakdownRow{Policy: r.Policy, Name: part, Counts: map[string]int64{}})
					i = len(t.rows) - 1 - first
				}
				t.rows[first+i].Counts[what] += c.Value
				if !slices.Contains(t.whats, what) {
					t.whats = append(t.whats, what)
				}
			}
		}
		if len(t.rows) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// cells returns row's cells: policy, part, then each what ("-" where the
// row has no such counter).
func (t *breakdownTable) cells(row BreakdownRow, missing string) []string {
	cells := []string{row.Policy, row.Name}
	for _, w := range t.whats {
		if v, ok := row.Counts[w]; ok {
			cells = append(cells, strconv.FormatInt(v, 10))
		} else {
			cells = append(cells, missing)
		}
	}
	return cells
}

// writeBreakdowns writes c's breakdowns under its table, each with a
// heading; nothing for a run with none.
func writeBreakdowns(w io.Writer, markdown bool, c *Comparison) error {
	for _, t := range breakdownTables(c.Results) {
		if markdown {
			fmt.Fprintf(w, "\n#### %s%s, seed %d\n\n", strings.ToUpper(t.title[:1]), t.title[1:], c.Seed)
		} else {
			fmt.Fprintf(w, "\n%s\n", t.title)
		}
		rows := make([][]string, len(t.rows))
		for i, row := range t.rows {
			rows[i] = t.cells(row, "-")
		}
		header := append([]string{"policy", t.part}, t.whats...)
		if err := WriteTable(w, markdown, header, rows, TextColumns(len(header), 0, 1)); err != nil {
			return err
		}
	}
	return nil
}

// breakdownCSVColumns returns the columns the single-run CSV adds for the
// breakdowns of results, one per counter (pool.east.requests), in table
// order; none for a run without.
func breakdownCSVColumns(results []sim.Result) (cols []string) {
	for _, t := range breakdownTables(results) {
		for _, row := range t.rows {
			for _, w := range t.whats {
				if _, ok := row.Counts[w]; !ok {
					continue
				}
				if name := t.prefix + row.Name + "." + w; !slices.Contains(cols, name) {
					cols = append(cols, name)
				}
			}
		}
	}
	return cols
}

// breakdownCSVCells returns r's cells of cols (breakdownCSVColumns): its
// counter, or empty where it has none.
func breakdownCSVCells(r *sim.Result, cols []string) []string {
	cells := make([]string, len(cols))
	for i, name := range cols {
		if v, ok := r.Counters.Get(name); ok {
			cells[i] = strconv.FormatInt(v, 10)
		}
	}
	return cells
}

// Package report turns simulation results into tables (text, markdown, CSV)
// and JSON. docs/output.md describes every format.
package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// Formats lists the output formats Write accepts.
var Formats = []string{"table", "markdown", "csv", "json"}

// Comparison is the result of running every policy of one scenario on one seed.
type Comparison struct {
	Scenario string
	Seed     uint64
	Results  []sim.Result // in the scenario's policy order
}

// Latency holds completion-latency percentiles in milliseconds; nil when no
// operation completed.
type Latency struct {
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
}

// PolicyResult is one policy's row, as JSON and the tables show it.
type PolicyResult struct {
	Policy           string         `json:"policy"`
	Clients          int            `json:"clients"`
	Completed        int            `json:"completed"`
	Attempts         int            `json:"attempts"`
	Retries          int            `json:"retries"`
	GaveUp           int            `json:"gave_up"`
	GaveUpBy         map[string]int `json:"gave_up_by"`
	Amplification    float64        `json:"amplification"`
	LatencyMS        Latency        `json:"latency_ms"`
	LastCompletionMS *float64       `json:"last_completion_ms"`
}

// Document is the JSON form of a Comparison.
type Document struct {
	Scenario string         `json:"scenario"`
	Seed     uint64         `json:"seed"`
	Results  []PolicyResult `json:"results"`
}

// stopReasons are the reasons reported in gave_up_by, in a fixed order.
var stopReasons = []policies.StopReason{policies.StopAttempts, policies.StopDeadline, policies.StopTerminal, policies.StopQueueFull}

// ms converts a duration to milliseconds; exact for any realistic duration.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Row converts one result.
func Row(r *sim.Result) PolicyResult {
	pr := PolicyResult{
		Policy:        r.Policy,
		Clients:       r.Clients,
		Completed:     r.Completed,
		Attempts:      r.Attempts,
		Retries:       r.Retries,
		GaveUp:        r.GaveUp,
		GaveUpBy:      map[string]int{},
		Amplification: round(r.Amplification(), 4),
	}
	for _, reason := range stopReasons {
		pr.GaveUpBy[reason.String()] = r.GaveUpBy[reason]
	}
	pct := func(p float64) *float64 {
		if d, ok := r.Percentile(p); ok {
			v := ms(d)
			return &v
		}
		return nil
	}
	pr.LatencyMS = Latency{P50: pct(50), P95: pct(95), P99: pct(99)}
	if r.Completed > 0 {
		v := ms(r.LastCompletion)
		pr.LastCompletionMS = &v
	}
	return pr
}

// round rounds to the given number of decimals, for stable, readable output.
func round(v float64, decimals int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', decimals, 64), 64)
	return f
}

// JSON returns the document for c.
func (c *Comparison) JSON() Document {
	doc := Document{Scenario: c.Scenario, Seed: c.Seed, Results: make([]PolicyResult, len(c.Results))}
	for i := range c.Results {
		doc.Results[i] = Row(&c.Results[i])
	}
	return doc
}

// Write renders c in the named format.
func Write(w io.Writer, format string, c *Comparison) error {
	return writeAs(w, format,
		func() any { return c.JSON() },
		func(w io.Writer) error { return writeCSV(w, c) },
		func(w io.Writer, markdown bool) error { return writeTable(w, markdown, c) })
}

// writeAs renders one document in one of Formats: indented JSON of doc(),
// or the document's own CSV and table (or markdown table) writers.
func writeAs(w io.Writer, format string, doc func() any, csv func(io.Writer) error, table func(w io.Writer, markdown bool) error) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc())
	case "csv":
		return csv(w)
	case "table", "markdown":
		return table(w, format == "markdown")
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

var columns = []string{"policy", "clients", "completed", "attempts", "retries", "gave_up", "gave_up_by", "amplification", "p50_ms", "p95_ms", "p99_ms", "last_completion_ms"}

// cells formats one row; missing values are "-" in tables and empty in CSV.
func cells(pr PolicyResult, missing string) []string {
	num := func(v *float64) string {
		if v == nil {
			return missing
		}
		return strconv.FormatFloat(*v, 'f', 1, 64)
	}
	var by []string
	for _, reason := range stopReasons {
		if n := pr.GaveUpBy[reason.String()]; n > 0 {
			by = append(by, fmt.Sprintf("%s=%d", reason, n))
		}
	}
	gaveUpBy := strings.Join(by, " ")
	if gaveUpBy == "" {
		gaveUpBy = missing
	}
	return []string{
		pr.Policy,
		strconv.Itoa(pr.Clients),
		strconv.Itoa(pr.Completed),
		strconv.Itoa(pr.Attempts),
		strconv.Itoa(pr.Retries),
		strconv.Itoa(pr.GaveUp),
		gaveUpBy,
		strconv.FormatFloat(pr.Amplification, 'f', 2, 64),
		num(pr.LatencyMS.P50),
		num(pr.LatencyMS.P95),
		num(pr.LatencyMS.P99),
		num(pr.LastCompletionMS),
	}
}

func writeCSV(w io.Writer, c *Comparison) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{"scenario", "seed"}, columns...)); err != nil {
		return err
	}
	for i := range c.Results {
		row := cells(Row(&c.Results[i]), "")
		if err := cw.Write(append([]string{c.Scenario, strconv.FormatUint(c.Seed, 10)}, row...)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeTable(w io.Writer, markdown bool, c *Comparison) error {
	if markdown {
		fmt.Fprintf(w, "**%s**, seed %d\n\n", c.Scenario, c.Seed)
	} else {
		fmt.Fprintf(w, "scenario %s, seed %d\n", c.Scenario, c.Seed)
	}
	rows := make([][]string, len(c.Results))
	for i := range c.Results {
		rows[i] = cells(Row(&c.Results[i]), "-")
	}
	// Text columns (policy, gave_up_by) left, numbers right.
	return table(w, markdown, columns, rows, leftAligned(len(columns), 0, 6))
}

// Package report turns results into text: tables (ASCII and markdown),
// CSV, JSON and a self-contained HTML page. docs/output.md describes every
// format. Numbers are rounded here, for presentation only; the metrics
// themselves (package metrics) and the statistics over seeds (package
// stats) are computed on unrounded values. Plots are in report/plot, so
// that this package does not depend on a plotting library.
package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/sim"
)

// Format is an output format of the data a command prints.
type Format string

const (
	Table    Format = "table"
	Markdown Format = "markdown"
	CSV      Format = "csv"
	JSON     Format = "json"
	// HTML is the self-contained page of WriteHTML; Write and the other
	// writers of tables do not take it.
	HTML Format = "html"
)

// Formats returns the formats Write, WriteMultiSeed and WriteSweep accept.
func Formats() []Format { return []Format{Table, Markdown, CSV, JSON} }

// FormatNames joins the names of formats with ", ", for messages.
func FormatNames(formats []Format) string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// Comparison is the result of running every policy of one scenario on one seed.
type Comparison struct {
	Scenario string
	Seed     uint64
	Results  []sim.Result // in the scenario's policy order
	// Metrics are the metrics reported, metrics.For the scenario's
	// policies; nil means metrics.Default().
	Metrics []*metrics.Metric
	// Ref is the index of the policy the markdown trade summary names as
	// the reference, or DefaultReference: the first policy that completes
	// an operation (the first policy if none does).
	Ref int
	// Origin, if set, is what the JSON report says produced it.
	Origin *Origin
}

// tradeDoc returns c as a one-seed statistics document, for its trade
// summary: every metric of every policy with its one value.
func (c *Comparison) tradeDoc() *MultiSeedDocument {
	set := c.metrics()
	doc := &MultiSeedDocument{Scenario: c.Scenario, FirstSeed: c.Seed, Seeds: 1, metrics: set}
	ref := c.Ref
	if ref == DefaultReference {
		ref = max(0, slices.IndexFunc(c.Results, func(r sim.Result) bool { return r.Completed > 0 }))
	}
	for p := range c.Results {
		r := &c.Results[p]
		ps := PolicyStats{Policy: r.Policy}
		for _, m := range set {
			ms := MetricStats{Metric: m.Name, Better: m.Better.Word()}
			if v := m.ValueOrNaN(r); !math.IsNaN(v) {
				s := roundSummary(Summarize(m, []float64{v}))
				ms.N, ms.Summary = 1, &s
			}
			ps.Metrics = append(ps.Metrics, ms)
		}
		doc.Policies = append(doc.Policies, ps)
	}
	if ref < len(doc.Policies) {
		doc.Baseline = doc.Policies[ref].Policy
	}
	return doc
}

func (c *Comparison) metrics() []*metrics.Metric {
	if c.Metrics == nil {
		return metrics.Default()
	}
	return c.Metrics
}

// PolicyResult is one policy's row: the values of a set of metrics,
// unrounded (NaN where a metric does not exist). Its JSON form nests the
// metrics by their names ("latency_ms.p99" is field p99 of latency_ms) and
// rounds each as the metric says.
type PolicyResult struct {
	Policy  string
	Clients int
	Metrics []*metrics.Metric
	Values  []float64
}

// Row converts one result, with the metrics of set.
func Row(r *sim.Result, set []*metrics.Metric) PolicyResult {
	pr := PolicyResult{Policy: r.Policy, Clients: r.Clients, Metrics: set, Values: make([]float64, len(set))}
	for i, m := range set {
		pr.Values[i] = m.ValueOrNaN(r)
	}
	return pr
}

// Value returns the row's value of m, and false when it does not exist or
// the row does not have the metric.
func (pr *PolicyResult) Value(m *metrics.Metric) (float64, bool) {
	i := slices.Index(pr.Metrics, m)
	if i < 0 || math.IsNaN(pr.Values[i]) {
		return 0, false
	}
	return pr.Values[i], true
}

// jsonGroups splits metric names into JSON fields: a name "a.b" is field b
// of object a. Metrics that share an object are consecutive in the
// registry; the fields of an object are written in alphabetical order.
func jsonGroups(set []*metrics.Metric) (fields []string, members [][]int) {
	for i, m := range set {
		field, _, nested := strings.Cut(m.Name, ".")
		if !nested || len(fields) == 0 || fields[len(fields)-1] != field {
			fields = append(fields, field)
			members = append(members, nil)
		}
		members[len(members)-1] = append(members[len(members)-1], i)
	}
	for g, idx := range members {
		if strings.Contains(set[idx[0]].Name, ".") {
			slices.SortStableFunc(members[g], func(a, b int) int { return strings.Compare(set[a].Part(), set[b].Part()) })
		}
	}
	return fields, members
}

// MarshalJSON writes the row as docs/output.md describes it.
func (pr PolicyResult) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"policy":`)
	name, err := json.Marshal(pr.Policy)
	if err != nil {
		return nil, err
	}
	b.Write(name)
	fmt.Fprintf(&b, `,"clients":%d`, pr.Clients)
	value := func(i int) error {
		v := pr.Values[i]
		if math.IsNaN(v) {
			b.WriteString("null")
			return nil
		}
		num, err := json.Marshal(pr.Metrics[i].RoundForJSON(v))
		b.Write(num)
		return err
	}
	fields, members := jsonGroups(pr.Metrics)
	for g, field := range fields {
		fmt.Fprintf(&b, `,%q:`, field)
		if !strings.Contains(pr.Metrics[members[g][0]].Name, ".") {
			if err := value(members[g][0]); err != nil {
				return nil, err
			}
			continue
		}
		b.WriteByte('{')
		for j, i := range members[g] {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:", pr.Metrics[i].Part())
			if err := value(i); err != nil {
				return nil, err
			}
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// SingleSeedSchema names the JSON schema of a single-seed comparison.
// docs/output.md describes it; reports written before it existed have no
// schema field and are read as this one.
const SingleSeedSchema = "retrysim/single-seed/v1"

// Document is the JSON form of a Comparison.
type Document struct {
	Schema   string `json:"schema"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Origin says what produced the report; nil (left out) in reports
	// written before it existed.
	Origin  *Origin        `json:"origin,omitempty"`
	Results []PolicyResult `json:"results"`
	// PoolMembers and Layers are the counters of a pool's members and of
	// a layered policy's retry layers, per policy (docs/output.md); left
	// out when no run has any.
	PoolMembers []BreakdownRow `json:"pool_members,omitempty"`
	Layers      []BreakdownRow `json:"layers,omitempty"`
}

// JSON returns the document for c.
func (c *Comparison) JSON() Document {
	doc := Document{Schema: SingleSeedSchema, Scenario: c.Scenario, Seed: c.Seed, Origin: c.Origin, Results: make([]PolicyResult, len(c.Results))}
	for i := range c.Results {
		doc.Results[i] = Row(&c.Results[i], c.metrics())
	}
	for _, t := range breakdownTables(c.Results) {
		switch t.json {
		case "pool_members":
			doc.PoolMembers = t.rows
		case "layers":
			doc.Layers = t.rows
		}
	}
	return doc
}

// Write renders c in format, one of Formats.
func Write(w io.Writer, format Format, c *Comparison) error {
	return writeAs(w, format,
		func() any { return c.JSON() },
		func(w io.Writer) error { return writeCSV(w, c) },
		func(w io.Writer, markdown bool) error { return writeTable(w, markdown, c) })
}

// writeAs renders one document in one of Formats: indented JSON of doc(),
// or the document's own CSV and table (or markdown table) writers.
func writeAs(w io.Writer, format Format, doc func() any, csv func(io.Writer) error, table func(w io.Writer, markdown bool) error) error {
	switch format {
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc())
	case CSV:
		return csv(w)
	case Table, Markdown:
		return table(w, format == Markdown)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, FormatNames(Formats()))
}

// Columns returns the columns of the single-run table of a metric set:
// policy, clients and one per metric column, in registry order.
func Columns(set []*metrics.Metric) []string {
	cols := []string{"policy", "clients"}
	for _, m := range set {
		if cols[len(cols)-1] != m.Column {
			cols = append(cols, m.Column)
		}
	}
	return cols
}

// TableMetrics returns the metrics of set that are columns of the
// single-run table: all but the Detail ones.
func TableMetrics(set []*metrics.Metric) []*metrics.Metric {
	var out []*metrics.Metric
	for _, m := range set {
		if !m.Detail {
			out = append(out, m)
		}
	}
	return out
}

// textColumns reports which columns of Columns(set) hold text: the policy
// and those that list several metrics (part=value).
func textColumns(set []*metrics.Metric) []bool {
	text := []bool{true, false}
	for i, m := range set {
		if i > 0 && set[i-1].Column == m.Column {
			text[len(text)-1] = true
			continue
		}
		text = append(text, family(m))
	}
	return text
}

// family reports whether m is a part of a column family (client.idle_ms
// in client): its cell reads part=value, as a family of several does,
// even when it is the only one shown.
func family(m *metrics.Metric) bool { return strings.HasPrefix(m.Name, m.Column+".") }

// FormatValue writes a metric's value as the single-run table shows it:
// counts whole, ratios with two decimals, milliseconds with one.
func FormatValue(m *metrics.Metric, v float64) string {
	switch m.Unit {
	case metrics.Ratio:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case metrics.Milliseconds:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// Cells formats one row as the table shows it, column by column (Columns);
// a missing value is missing ("-" in tables, empty in CSV). A column of
// several metrics lists those that are not 0 as part=value.
func Cells(pr PolicyResult, missing string) []string {
	cells := []string{pr.Policy, strconv.Itoa(pr.Clients)}
	var parts []string
	for i, m := range pr.Metrics {
		shared := (i > 0 && pr.Metrics[i-1].Column == m.Column) || (i+1 < len(pr.Metrics) && pr.Metrics[i+1].Column == m.Column) || family(m)
		v := pr.Values[i]
		if !shared {
			if math.IsNaN(v) {
				cells = append(cells, missing)
			} else {
				cells = append(cells, FormatValue(m, v))
			}
			continue
		}
		if !math.IsNaN(v) && v != 0 {
			parts = append(parts, m.Part()+"="+FormatValue(m, v))
		}
		if i+1 == len(pr.Metrics) || pr.Metrics[i+1].Column != m.Column {
			cell := strings.Join(parts, " ")
			if cell == "" {
				cell = missing
			}
			cells = append(cells, cell)
			parts = nil
		}
	}
	return cells
}

// CSVColumns returns the columns of the single-run CSV of a metric set:
// tidy, one column per metric (a metric that shares its column in the
// table, such as a give-up reason, gets its own, named after the metric:
// gave_up_by.deadline).
func CSVColumns(set []*metrics.Metric) []string {
	cols := []string{"policy", "clients"}
	for i, m := range set {
		shared := (i > 0 && set[i-1].Column == m.Column) || (i+1 < len(set) && set[i+1].Column == m.Column)
		if shared {
			cols = append(cols, m.Name)
		} else {
			cols = append(cols, m.Column)
		}
	}
	return cols
}

func writeCSV(w io.Writer, c *Comparison) error {
	cw := csv.NewWriter(w)
	// The breakdowns' counters are columns after the metrics' (a run
	// without pools or layers has none).
	extra := breakdownCSVColumns(c.Results)
	if err := cw.Write(slices.Concat([]string{"scenario", "seed"}, CSVColumns(c.metrics()), extra)); err != nil {
		return err
	}
	for i := range c.Results {
		pr := Row(&c.Results[i], c.metrics())
		row := []string{c.Scenario, strconv.FormatUint(c.Seed, 10), pr.Policy, strconv.Itoa(pr.Clients)}
		for j, m := range pr.Metrics {
			cell := ""
			if v := pr.Values[j]; !math.IsNaN(v) {
				cell = FormatValue(m, v)
			}
			row = append(row, cell)
		}
		row = append(row, breakdownCSVCells(&c.Results[i], extra)...)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeTable(w io.Writer, markdown bool, c *Comparison) error {
	if markdown {
		fmt.Fprintf(w, "**%s**, seed %d\n", c.Scenario, c.Seed)
	} else {
		fmt.Fprintf(w, "scenario %s, seed %d\n", c.Scenario, c.Seed)
	}
	set := TableMetrics(c.metrics())
	rows := make([][]string, len(c.Results))
	for i := range c.Results {
		rows[i] = Cells(Row(&c.Results[i], set), "-")
	}
	if markdown && len(c.Results) > 0 {
		// The trade first, as in the multi-seed markdown; the table keeps
		// its one table (the README shows it).
		if err := writeTradeSummary(w, true, c.tradeDoc()); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n#### Results, seed %d\n", c.Seed)
	}
	if markdown {
		fmt.Fprintln(w)
	}
	// Text columns (policy, gave_up_by) left, numbers right.
	if err := WriteTable(w, markdown, Columns(set), rows, textColumns(set)); err != nil {
		return err
	}
	if err := writePriorities(w, markdown, c, set); err != nil {
		return err
	}
	return writeBreakdowns(w, markdown, c)
}

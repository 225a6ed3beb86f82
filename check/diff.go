package check

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/stats"
)

// DiffSchema names the JSON schema of 'retrysim diff'.
const DiffSchema = "retrysim/diff/v1"

// Diff is two reports of one scenario on the same seeds, compared metric by
// metric (CompareSeeds with OldFile as the baseline).
type Diff struct {
	OldFile, NewFile         string
	OldScenario, NewScenario string
	FirstSeed                uint64
	Seeds                    int
	Changes                  []SeedChange
	Family                   Family
	// All shows every row in a table; by default only those that changed
	// (Shown), then a count of the others.
	All bool
}

// Shown reports whether a table of the diff shows c without --all: it
// failed, changed significantly (better, worse, not comparable), or a
// value appeared or vanished.
func (c *SeedChange) Shown() bool {
	return c.Fail || c.Verdict != Unchanged || c.Metric == nil || (c.Base.N == 0) != (c.Now.N == 0)
}

// Worse counts the metrics that are worse beyond their tolerance.
func (d *Diff) Worse() int {
	n := 0
	for i := range d.Changes {
		if d.Changes[i].Fail {
			n++
		}
	}
	return n
}

// NewDiff compares new with old. They must be on the same seeds; their
// scenarios may have other names (another file, another version).
func NewDiff(oldFile string, old *SeedSet, newFile string, new *SeedSet, tol Tolerances, alpha float64) (*Diff, error) {
	if old.FirstSeed != new.FirstSeed || old.Seeds != new.Seeds {
		return nil, fmt.Errorf("%s is on %s and %s on %s: a diff pairs the same seeds (run both with the same --seed and --seeds)",
			oldFile, seedRange(old.FirstSeed, old.Seeds), newFile, seedRange(new.FirstSeed, new.Seeds))
	}
	cs, fam := CompareSeeds(oldFile, old, new, tol, alpha)
	return &Diff{OldFile: oldFile, NewFile: newFile, OldScenario: old.Scenario, NewScenario: new.Scenario,
		FirstSeed: old.FirstSeed, Seeds: old.Seeds, Changes: cs, Family: fam}, nil
}

func seedRange(first uint64, n int) string {
	if n == 1 {
		return fmt.Sprintf("seed %d", first)
	}
	return fmt.Sprintf("seeds %d-%d", first, first+uint64(n-1))
}

// DiffFormats are the formats WriteDiff accepts.
func DiffFormats() []report.Format {
	return []report.Format{report.Table, report.Markdown, report.JSON, report.CSV}
}

// diffHeader is the header of the diff's table and CSV.
var diffHeader = []string{"policy", "metric", "old", "new", "change", "p", "verdict", "note"}

func (c *SeedChange) verdictText() string {
	switch {
	case c.Fail:
		return "worse (beyond tolerance)"
	case c.Verdict == Worsened:
		return "worse (within tolerance)"
	}
	return c.Verdict.String()
}

func (c *SeedChange) diffRow() []string {
	if c.Metric == nil {
		return []string{c.Policy, "(policy missing)", "", "", "", "", c.verdictText(), c.Note}
	}
	return []string{c.Policy, c.Metric.Name, c.MeanText(c.Base), c.MeanText(c.Now), c.ChangeText(), c.PText(), c.verdictText(), c.Note}
}

// WriteDiff renders d: a table (or markdown) of every metric of every
// policy, with a line on what was compared and how; JSON (schema
// DiffSchema); or CSV with one row per metric.
func WriteDiff(w io.Writer, format report.Format, d *Diff) error {
	switch format {
	case report.Table, report.Markdown:
		scen := d.OldScenario
		if d.NewScenario != d.OldScenario {
			scen += " → " + d.NewScenario
		}
		how := fmt.Sprintf("Paired by seed, two-sided signed-rank test; ~ means no significant difference.\np adjusted for the family: %s.", d.Family.Describe())
		if d.Seeds == 1 {
			how = "One seed: no test, every difference shown (run both with --seeds N for a paired test)."
		}
		fmt.Fprintf(w, "%s → %s: scenario %s, %s\n%s\n\n", d.OldFile, d.NewFile, scen, seedRange(d.FirstSeed, d.Seeds), how)
		var rows [][]string
		for i := range d.Changes {
			if d.All || d.Changes[i].Shown() {
				rows = append(rows, d.Changes[i].diffRow())
			}
		}
		if len(rows) > 0 {
			if err := report.WriteTable(w, format == report.Markdown, diffHeader, rows, textExcept(8, 2, 3, 4, 5)); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
		if hidden := len(d.Changes) - len(rows); hidden > 0 {
			what := "show no significant change"
			if d.Seeds == 1 {
				what = "are unchanged"
			}
			fmt.Fprintf(w, "%d other metrics %s (--all shows them).\n", hidden, what)
		}
		_, err := fmt.Fprintf(w, "%d of %d metrics worse beyond tolerance.\n", d.Worse(), len(d.Changes))
		return err
	case report.CSV:
		cw := csv.NewWriter(w)
		cw.Write([]string{"policy", "metric", "better", "old_n", "old_mean", "new_n", "new_mean", "delta_mean", "delta_percent", "p_value", "p_adjusted", "verdict", "fail", "note"})
		for i := range d.Changes {
			j := d.Changes[i].jsonRow()
			cw.Write([]string{j.Policy, j.Metric, j.Better, strconv.Itoa(j.Old.N), num(j.Old.Mean), strconv.Itoa(j.New.N), num(j.New.Mean),
				num(j.DeltaMean), num(j.DeltaPercent), num(j.P), num(j.PAdjusted), j.Verdict, strconv.FormatBool(j.Fail), j.Note})
		}
		cw.Flush()
		return cw.Error()
	case report.JSON:
		doc := diffJSON{Schema: DiffSchema, Old: d.OldFile, New: d.NewFile, OldScenario: d.OldScenario, NewScenario: d.NewScenario,
			FirstSeed: d.FirstSeed, Seeds: d.Seeds, Test: "wilcoxon-signed-rank", Alpha: d.Family.Alpha,
			Correction: Correction, Tests: d.Family.Tests, Distinct: d.Family.Distinct, Counted: d.Family.Counted, Rows: []diffRowJSON{}}
		if d.Seeds == 1 {
			doc.Test = "none (one seed)"
		}
		for i := range d.Changes {
			doc.Rows = append(doc.Rows, d.Changes[i].jsonRow())
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, report.FormatNames(DiffFormats()))
}

type diffJSON struct {
	Schema      string `json:"schema"`
	Old         string `json:"old"`
	New         string `json:"new"`
	OldScenario string `json:"old_scenario"`
	NewScenario string `json:"new_scenario"`
	FirstSeed   uint64 `json:"first_seed"`
	Seeds       int    `json:"seeds"`
	Test        string `json:"test"`
	// Alpha is the family-wise false-alarm rate over the Tests (Distinct,
	// Counted: Family's) that Correction adjusts for.
	Alpha      float64       `json:"alpha"`
	Correction string        `json:"correction"`
	Tests      int           `json:"tests"`
	Distinct   int           `json:"distinct_tests"`
	Counted    int           `json:"counted_tests"`
	Rows       []diffRowJSON `json:"rows"`
}

type sideJSON struct {
	N    int      `json:"n"`
	Mean *float64 `json:"mean"`
	Low  *float64 `json:"ci95_low"`
	High *float64 `json:"ci95_high"`
}

type diffRowJSON struct {
	Policy       string   `json:"policy"`
	Metric       string   `json:"metric"`
	Better       string   `json:"better"`
	Old          sideJSON `json:"old"`
	New          sideJSON `json:"new"`
	Pairs        int      `json:"pairs"`
	DeltaMean    *float64 `json:"delta_mean"`
	DeltaPercent *float64 `json:"delta_percent"`
	P            *float64 `json:"p_value"`
	PAdjusted    *float64 `json:"p_adjusted"`
	Verdict      string   `json:"verdict"`
	Fail         bool     `json:"fail"`
	Note         string   `json:"note"`
}

func ptr(v float64, decimals int) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	r := metrics.Round(v, decimals)
	return &r
}

func side(s stats.Summary, decimals int) sideJSON {
	if s.N == 0 {
		return sideJSON{}
	}
	return sideJSON{N: s.N, Mean: ptr(s.Mean, decimals), Low: ptr(s.CILow, decimals), High: ptr(s.CIHigh, decimals)}
}

func (c *SeedChange) jsonRow() diffRowJSON {
	j := diffRowJSON{Policy: c.Policy, Verdict: c.Verdict.String(), Fail: c.Fail, Note: c.Note}
	if c.Metric == nil {
		j.Metric = "(policy missing)"
		return j
	}
	dec := c.Metric.Decimals() + 2
	j.Metric, j.Better = c.Metric.Name, c.Metric.Better.Word()
	j.Old, j.New = side(c.Base, dec), side(c.Now, dec)
	j.Pairs = c.Diff.Pairs
	if c.Diff.Pairs > 0 {
		j.DeltaMean = ptr(c.Diff.DeltaMean, dec)
		j.DeltaPercent = ptr(c.Diff.DeltaPercent, 2)
		if c.Seeds > 1 {
			j.P, j.PAdjusted = ptr(c.Diff.Test.P, 4), ptr(c.AdjustedP, 4)
		}
	}
	return j
}

func num(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

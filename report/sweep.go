package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/runs"
)

// SweepSchema names the JSON schema of a sweep; docs/output.md describes it.
const SweepSchema = "retrysim/sweep/v1"

// SweepDocument is the JSON form of a Sweep.
type SweepDocument struct {
	Schema    string `json:"schema"`
	Scenario  string `json:"scenario"`
	FirstSeed uint64 `json:"first_seed"`
	Seeds     int    `json:"seeds"`
	// Baseline is the reference policy of every point's comparisons
	// (vs_baseline), the same at every point.
	Baseline string           `json:"baseline"`
	Params   []SweepParamJSON `json:"params"`
	Points   []SweepPointJSON `json:"points"`
}

// SweepParamJSON describes one swept parameter.
type SweepParamJSON struct {
	Name   string    `json:"name"`
	Unit   string    `json:"unit"`
	Values []float64 `json:"values"`
	Labels []string  `json:"labels"`
}

// SweepPointJSON is one point: the parameters' values (in the order of
// params) and every policy's statistics there.
type SweepPointJSON struct {
	Values   []float64     `json:"values"`
	Policies []PolicyStats `json:"policies"`
}

// SweepReference returns the index of the default reference policy of a
// sweep: the first policy that completes an operation on every seed at
// every point (as Reference does for one point), so that one policy is the
// reference throughout; the first policy when none does.
func SweepReference(sw *runs.Sweep) int {
	if len(sw.Points) == 0 {
		return 0
	}
	for p := range sw.Points[0].Runs.Policies {
		all := true
		for _, pt := range sw.Points {
			all = all && completesOnEverySeed(pt.Runs, p)
		}
		if all {
			return p
		}
	}
	return 0
}

// SweepJSON returns the document of sw, with policy ref (an index into
// the policies, or DefaultReference for SweepReference's) as the
// reference of every point's comparisons.
func SweepJSON(sw *runs.Sweep, ref int) SweepDocument {
	if ref == DefaultReference {
		ref = SweepReference(sw)
	}
	doc := SweepDocument{Schema: SweepSchema, Scenario: sw.Scenario, FirstSeed: sw.FirstSeed, Seeds: sw.Seeds,
		Params: []SweepParamJSON{}, Points: []SweepPointJSON{}}
	if len(sw.Points) > 0 {
		doc.Baseline = sw.Points[0].Runs.Policies[ref]
	}
	for _, ax := range sw.Axes {
		doc.Params = append(doc.Params, SweepParamJSON{Name: ax.Name, Unit: ax.Unit, Values: ax.Values, Labels: ax.Labels})
	}
	for _, pt := range sw.Points {
		st := StatsVs(pt.Runs, ref)
		vals := make([]float64, len(pt.Index))
		for i, j := range pt.Index {
			vals[i] = sw.Axes[i].Values[j]
		}
		doc.Points = append(doc.Points, SweepPointJSON{Values: vals, Policies: st.Policies})
	}
	return doc
}

// WriteSweep renders a sweep in format, one of Formats; ref is the
// reference policy of the JSON's comparisons, as SweepJSON takes it.
func WriteSweep(w io.Writer, format Format, sw *runs.Sweep, ref int) error {
	return writeAs(w, format,
		func() any { return SweepJSON(sw, ref) },
		func(w io.Writer) error { return writeSweepCSV(w, sw) },
		func(w io.Writer, markdown bool) error { return writeSweepTable(w, markdown, sw) })
}

// SweepSeeds says which seeds a sweep ran, in words: "seed 1" or "mean
// over seeds 1–20".
func SweepSeeds(sw *runs.Sweep) string {
	if sw.Seeds == 1 {
		return fmt.Sprintf("seed %d", sw.FirstSeed)
	}
	return fmt.Sprintf("mean over seeds %d–%d", sw.FirstSeed, sw.FirstSeed+uint64(sw.Seeds)-1)
}

// SweepRows returns the sweep table: a header and one row per point and
// policy, with each headline metric's mean over the seeds.
func SweepRows(sw *runs.Sweep, missing string) (header []string, rows [][]string) {
	for _, ax := range sw.Axes {
		header = append(header, ax.Name)
	}
	header = append(header, "policy")
	var headline []*metrics.Metric
	if len(sw.Points) > 0 {
		headline = metrics.Headline(sw.Points[0].Runs.Metrics)
	}
	for _, m := range headline {
		header = append(header, m.Name)
	}
	for _, pt := range sw.Points {
		st := Stats(pt.Runs)
		_, low := CompletedShares(pt.Runs)
		for pi, ps := range st.Policies {
			var row []string
			for i, j := range pt.Index {
				row = append(row, sw.Axes[i].Labels[j])
			}
			row = append(row, ps.Policy)
			for _, metric := range headline {
				ms := metricStats(&ps, metric.Name)
				if ms.Summary == nil {
					row = append(row, missing)
					continue
				}
				dec := metric.Decimals()
				if sw.Seeds == 1 && dec == 2 { // a count on one seed is a whole number
					dec = 0
				}
				cell := strconv.FormatFloat(ms.Summary.Mean, 'f', dec, 64)
				if low[pi] && metric.Subset() == metrics.Completed {
					cell += SurvivorMark
				}
				row = append(row, cell)
			}
			rows = append(rows, row)
		}
	}
	return header, rows
}

func writeSweepTable(w io.Writer, markdown bool, sw *runs.Sweep) error {
	header, rows := SweepRows(sw, "-")
	names := make([]string, len(sw.Axes))
	for i, ax := range sw.Axes {
		names[i] = ax.Name
	}
	intro := fmt.Sprintf("sweep of %s over %s (%s)", sw.Scenario, strings.Join(names, " × "), SweepSeeds(sw))
	if markdown {
		fmt.Fprintf(w, "**%s**\n\n", intro)
	} else {
		fmt.Fprintln(w, intro)
	}
	// Parameters and numbers right, the policy column (after the
	// parameters) left.
	if err := WriteTable(w, markdown, header, rows, TextColumns(len(header), len(sw.Axes))); err != nil {
		return err
	}
	for _, row := range rows {
		for _, cell := range row {
			if strings.HasSuffix(cell, SurvivorMark) {
				_, err := fmt.Fprintln(w, SurvivorNote())
				return err
			}
		}
	}
	return nil
}

// SurvivorMark follows a value over completed operations only of a policy
// that completes under LowCompletion of the best policy's share there.
const SurvivorMark = " *"

// SurvivorNote explains SurvivorMark, under a table that has one.
func SurvivorNote() string {
	return fmt.Sprintf("* over completed operations only, of a policy that completes under %.0f%% of the share the best policy completes there: it describes the operations that survived, and ranks nothing", 100*LowCompletion)
}

func writeSweepCSV(w io.Writer, sw *runs.Sweep) error {
	cw := csv.NewWriter(w)
	header := []string{"scenario", "first_seed", "seeds"}
	for _, ax := range sw.Axes {
		h := ax.Name
		if ax.Unit != "" {
			h += "_" + ax.Unit
		}
		header = append(header, h)
	}
	header = append(header, "policy", "metric", "n", "mean", "ci95_low", "ci95_high", "median", "p5", "p95")
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, pt := range sw.Points {
		st := Stats(pt.Runs)
		for _, ps := range st.Policies {
			for _, ms := range ps.Metrics {
				row := []string{sw.Scenario, strconv.FormatUint(sw.FirstSeed, 10), strconv.Itoa(sw.Seeds)}
				for i, j := range pt.Index {
					row = append(row, f(sw.Axes[i].Values[j]))
				}
				row = append(row, ps.Policy, ms.Metric, strconv.Itoa(ms.N))
				if s := ms.Summary; s != nil {
					row = append(row, f(s.Mean), f(s.CILow), f(s.CIHigh), f(s.Median), f(s.P5), f(s.P95))
				} else {
					row = append(row, "", "", "", "", "", "")
				}
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

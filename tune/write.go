package tune

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/stats"
)

// Formats are the formats Write writes; the first is the default.
func Formats() []report.Format { return []report.Format{report.Table, report.Markdown, report.JSON} }

// Write writes r in format f: tables (ASCII or markdown) with a few lines
// of text, or JSON (schema Schema).
func Write(w io.Writer, f report.Format, r *Result) error {
	if f == report.JSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false) // targets hold < and >
		enc.SetIndent("", "  ")
		return enc.Encode(r.document())
	}
	md := f == report.Markdown
	fmt.Fprintf(w, "tune policy %s on %s: %s, seeds %s (the same for every point)\n", r.Policy, strings.Join(r.Scenarios, ", "), r.Objective.Goal(), seedRange(r.FirstSeed, r.Seeds))
	fmt.Fprintf(w, "searched %s: %s\n", r.spaceText(), r.spentText())
	if r.Note != "" {
		fmt.Fprintf(w, "note: %s\n", r.Note)
	}
	pt := r.Chosen
	switch {
	case pt != nil:
		fmt.Fprintf(w, "\nchosen: %s (objective %s)\n\n", pt.Label, r.objectiveText(pt))
	case r.Closest != nil:
		fmt.Fprintf(w, "\nno point meets every target; the closest, %s, %s and fails %d (objective %s)\n", r.Closest.Label, shortfallText(r.Closest.Shortfall), r.Closest.Failing, r.objectiveText(r.Closest))
		fmt.Fprintf(w, "(closest: the smallest shortfall, a point's worst over its targets of how far the value held to falls short of the target's, relative to the target's)\n\n")
		pt = r.Closest
	default:
		_, err := fmt.Fprintf(w, "\nno point is a valid scenario: %s\n", r.Candidates[0].Invalid)
		return err
	}
	if r.Chosen != nil {
		edge := false
		for i, q := range r.Space {
			if n := len(q.Values); n > 1 && (pt.Index[i] == 0 || pt.Index[i] == n-1) {
				fmt.Fprintf(w, "note: %s=%s is at an end of its range: a wider range may do better\n", q.Name, q.Label(pt.Index[i]))
				edge = true
			}
		}
		if edge {
			fmt.Fprintln(w)
		}
	}
	if err := report.WriteTable(w, md, []string{"scenario", "target", "measured", "95% CI", "held to", "result", "met at"}, r.targetRows(pt), []bool{true, true}); err != nil {
		return err
	}
	if len(r.RunnersUp) > 0 {
		fmt.Fprintf(w, "\nrunners-up (objective vs the chosen point, paired by seed; ~ = no significant difference):\n\n")
		if err := report.WriteTable(w, md, []string{"point", "objective", "change", "p", "verdict"}, r.runnerRows(), []bool{true}); err != nil {
			return err
		}
	}
	if r.Chosen == nil {
		for _, m := range r.Met {
			if m.Met == 0 {
				fmt.Fprintf(w, "\nbinding: %s holds at none of the points\n", m.Target)
			}
		}
	}
	return nil
}

// shortfallText says how far a point falls short of feasible.
func shortfallText(sf float64) string {
	if math.IsInf(sf, 1) {
		return "falls short by an unknown amount (a failing target's metric has no value)"
	}
	return "falls short by " + strconv.FormatFloat(metrics.Round(100*sf, 2), 'f', -1, 64) + "%"
}

func seedRange(first uint64, n int) string {
	if n == 1 {
		return strconv.FormatUint(first, 10)
	}
	return fmt.Sprintf("%d..%d", first, first+uint64(n)-1)
}

func (r *Result) spaceText() string {
	var parts []string
	for _, q := range r.Space {
		if len(q.Values) == 1 {
			parts = append(parts, fmt.Sprintf("%s (%s)", q.Name, q.Label(0)))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%d values, %s..%s)", q.Name, len(q.Values), q.Label(0), q.Label(len(q.Values)-1)))
	}
	return strings.Join(parts, ", ")
}

func (r *Result) spentText() string {
	invalid := 0
	for _, c := range r.Candidates {
		if c.Invalid != "" {
			invalid++
		}
	}
	s := fmt.Sprintf("%d stage(s), %d points", r.Stages, len(r.Candidates))
	if invalid > 0 {
		noun := "points were not valid scenarios"
		if invalid == 1 {
			noun = "point was not a valid scenario"
		}
		s += fmt.Sprintf(" (%d %s, not run)", invalid, noun)
	}
	return s + fmt.Sprintf(", %d runs", r.Runs)
}

// number prints v with the decimals of metric m.
func number(m *metrics.Metric, v float64) string {
	return strconv.FormatFloat(metrics.Round(v, m.Decimals()), 'f', -1, 64)
}

func (r *Result) objectiveText(c *Candidate) string {
	return summaryText(r.Objective.Metric, c.Objective)
}

// summaryText is "mean ± half its 95% interval", a share's "mean [low,
// high]", or "none".
func summaryText(m *metrics.Metric, s stats.Summary) string {
	if s.N == 0 {
		return "none"
	}
	text := number(m, s.Mean)
	if m.Proportion && s.N > 1 { // its interval is not symmetric (report.Summarize)
		return fmt.Sprintf("%s [%s, %s]", text, number(m, s.CILow), number(m, s.CIHigh))
	}
	if s.N > 1 {
		text += " ± " + number(m, (s.CIHigh-s.CILow)/2)
	}
	return text
}

func (r *Result) targetRows(c *Candidate) [][]string {
	var rows [][]string
	for i, t := range c.Targets {
		m, _ := metrics.Lookup(t.Target.Expectation.Metric)
		measured, ci, bound, result := "none", "", "", "FAIL"
		if t.HasValue {
			measured, bound = number(m, t.Measured), number(m, t.Bound)
			if t.Summary.N > 1 {
				ci = number(m, t.Summary.CILow) + ".." + number(m, t.Summary.CIHigh)
			}
		}
		if t.Pass {
			result = "ok"
		}
		rows = append(rows, []string{t.Target.Scenario, t.Target.Expectation.String(), measured, ci, bound, result, fmt.Sprintf("%d points", r.Met[i].Met)})
	}
	return rows
}

func (r *Result) runnerRows() [][]string {
	m := r.Objective.Metric
	var rows [][]string
	for _, u := range r.RunnersUp {
		change, p := "", ""
		if u.Diff.Pairs > 0 {
			change = number(m, u.Diff.DeltaMean)
			if u.Diff.DeltaMean > 0 {
				change = "+" + change
			}
			p = strconv.FormatFloat(metrics.Round(u.Diff.Test.P, 3), 'f', -1, 64)
			if u.Diff.Test.P < 0.001 {
				p = "<0.001"
			}
		}
		rows = append(rows, []string{u.Label, summaryText(m, u.Objective), change, p, u.Verdict.String()})
	}
	return rows
}

// Schema names the JSON document Write writes.
const Schema = "retrysim/tune/v1"

type jsonPoint struct {
	Point    map[string]string `json:"point"`
	Stage    int               `json:"stage"`
	Feasible bool              `json:"feasible"`
	Failing  int               `json:"failing"`
	// Shortfall is Candidate.Shortfall; absent for a point that is not
	// valid or whose failing target's metric has no value.
	Shortfall *float64      `json:"shortfall,omitempty"`
	Objective stats.Summary `json:"objective"`
	Targets   []jsonTarget  `json:"targets,omitempty"`
	Invalid   string        `json:"invalid,omitempty"`
}

type jsonTarget struct {
	Scenario string        `json:"scenario"`
	Target   string        `json:"target"`
	Source   string        `json:"source"`
	Measured *float64      `json:"measured"`
	HeldTo   *float64      `json:"held_to"`
	Pass     bool          `json:"pass"`
	Summary  stats.Summary `json:"summary"`
}

type jsonRunnerUp struct {
	jsonPoint
	// Change and P are nil without pairs of seeds that both have a value.
	Change  *float64      `json:"change"`
	P       *float64      `json:"p"`
	Verdict stats.Verdict `json:"verdict"`
}

type jsonDoc struct {
	Schema    string         `json:"schema"`
	Policy    string         `json:"policy"`
	Scenarios []string       `json:"scenarios"`
	Objective string         `json:"objective"`
	Goal      string         `json:"goal"`
	FirstSeed uint64         `json:"first_seed"`
	Seeds     int            `json:"seeds"`
	Stages    int            `json:"stages"`
	Runs      int            `json:"runs"`
	Note      string         `json:"note,omitempty"`
	Chosen    *jsonPoint     `json:"chosen"`
	Closest   *jsonPoint     `json:"closest,omitempty"`
	RunnersUp []jsonRunnerUp `json:"runners_up"`
	Met       []jsonMet      `json:"targets_met"`
	Points    []jsonPoint    `json:"points"`
}

type jsonMet struct {
	Target string `json:"target"`
	Points int    `json:"points"`
}

func (r *Result) document() jsonDoc {
	d := jsonDoc{Schema: Schema, Policy: r.Policy, Scenarios: r.Scenarios, Objective: r.Objective.String(), Goal: r.Objective.Goal(),
		FirstSeed: r.FirstSeed, Seeds: r.Seeds, Stages: r.Stages, Runs: r.Runs, Note: r.Note, RunnersUp: []jsonRunnerUp{}}
	if r.Chosen != nil {
		p := r.point(r.Chosen)
		d.Chosen = &p
	}
	if r.Closest != nil {
		p := r.point(r.Closest)
		d.Closest = &p
	}
	for _, u := range r.RunnersUp {
		ju := jsonRunnerUp{jsonPoint: r.point(u.Candidate), Verdict: u.Verdict}
		if u.Diff.Pairs > 0 {
			ju.Change, ju.P = &u.Diff.DeltaMean, &u.Diff.Test.P
		}
		d.RunnersUp = append(d.RunnersUp, ju)
	}
	for _, m := range r.Met {
		d.Met = append(d.Met, jsonMet{Target: m.Target.Scenario + ": " + m.Target.Expectation.String(), Points: m.Met})
	}
	for _, c := range r.Candidates {
		p := r.point(c)
		p.Targets = nil
		d.Points = append(d.Points, p)
	}
	return d
}

func (r *Result) point(c *Candidate) jsonPoint {
	p := jsonPoint{Point: map[string]string{}, Stage: c.Stage, Feasible: c.Feasible, Failing: c.Failing, Objective: c.Objective, Invalid: c.Invalid}
	if c.Invalid == "" && !math.IsInf(c.Shortfall, 1) {
		p.Shortfall = &c.Shortfall
	}
	for i, q := range r.Space {
		p.Point[q.Name] = q.Label(c.Index[i])
	}
	for _, t := range c.Targets {
		jt := jsonTarget{Scenario: t.Target.Scenario, Target: t.Target.Expectation.String(), Source: t.Target.Source, Pass: t.Pass, Summary: t.Summary}
		if t.HasValue {
			jt.Measured, jt.HeldTo = &t.Measured, &t.Bound
		}
		p.Targets = append(p.Targets, jt)
	}
	return p
}

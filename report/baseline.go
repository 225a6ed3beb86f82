package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// plainNumber matches a plain decimal number: no hex, no underscores, no Inf
// or NaN.
var plainNumber = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// BaselineError says why a baseline file cannot be used.
type BaselineError struct {
	File string
	Msg  string
}

func (e *BaselineError) Error() string {
	return e.File + ": " + e.Msg + " (a baseline is the output of 'retrysim compare --format json' for one scenario and seed)"
}

// resultFields are the fields every result of a Document must carry.
var resultFields = []string{"policy", "clients", "completed", "attempts", "retries", "gave_up", "gave_up_by", "amplification", "latency_ms", "last_completion_ms"}

// ReadBaseline reads a single-seed Document, as 'retrysim compare --format
// json' writes it, strictly: unknown fields, missing fields, trailing data and
// other JSON shapes (such as a multi-seed report) are errors naming file.
func ReadBaseline(file string, r io.Reader) (*Document, error) {
	bad := func(format string, args ...any) error {
		return &BaselineError{File: file, Msg: fmt.Sprintf(format, args...)}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, bad("cannot read: %v", err)
	}
	// First pass: the shape, so that a missing field is named rather than
	// read as zero.
	var shape struct {
		Schema   *string                      `json:"schema"`
		Scenario *string                      `json:"scenario"`
		Seed     *uint64                      `json:"seed"`
		Results  []map[string]json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(data, &shape); err != nil {
		return nil, bad("not a single-seed JSON report: %v", jsonErr(data, err))
	}
	switch {
	case shape.Schema != nil:
		return nil, bad("this is a %q report, not a single-seed one: record the baseline with 'retrysim compare --format json' without --seeds", *shape.Schema)
	case shape.Scenario == nil || *shape.Scenario == "":
		return nil, bad("missing field \"scenario\"")
	case shape.Seed == nil:
		return nil, bad("missing field \"seed\"")
	case len(shape.Results) == 0:
		return nil, bad("no results: field \"results\" is missing or empty")
	}
	for i, res := range shape.Results {
		for _, f := range resultFields {
			if _, ok := res[f]; !ok {
				return nil, bad("results[%d]: missing field %q", i, f)
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc Document
	if err := dec.Decode(&doc); err != nil {
		return nil, bad("not a single-seed JSON report: %v", jsonErr(data, err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("unexpected data after the JSON document")
	}
	seen := map[string]bool{}
	for i, pr := range doc.Results {
		if pr.Policy == "" {
			return nil, bad("results[%d]: empty policy name", i)
		}
		if seen[pr.Policy] {
			return nil, bad("results[%d]: policy %q appears twice", i, pr.Policy)
		}
		seen[pr.Policy] = true
	}
	return &doc, nil
}

// jsonErr adds the line of a syntax or type error to its message.
func jsonErr(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	return fmt.Errorf("line %d: %w", line, err)
}

// ParseTolerance reads a relative tolerance such as "5%" or "0.5%" and
// returns it as a fraction (0.05); "0" is accepted for no tolerance.
func ParseTolerance(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "0" {
		return 0, nil
	}
	num, ok := strings.CutSuffix(t, "%")
	if !ok || !plainNumber.MatchString(num) {
		return 0, fmt.Errorf("tolerance %q: want a percentage such as 5%% or 0.5%%", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || v > 1000 {
		return 0, fmt.Errorf("tolerance %q: want a percentage from 0%% to 1000%%", s)
	}
	return v / 100, nil
}

// Change is one metric of one policy compared with its baseline.
type Change struct {
	Scenario string
	Policy   string
	// Metric is a name from Metrics; "" for a policy that is in the baseline
	// but no longer in the scenario.
	Metric           string
	Better           Better
	Base, Now        float64
	HasBase, HasNow  bool
	Worse, Improved  bool
	Fail             bool // worse by more than the tolerance
	Tolerance        float64
	BaselineFile     string
	BaselineSeed     uint64
	policyNotRunning bool
}

// CompareBaseline compares every metric of every policy of base with now,
// the same scenario run again on base's seed. A metric fails when it moved
// in its worse direction by more than tol (a fraction) of the baseline value;
// when the baseline value is 0, any worsening fails. A policy of the baseline
// that now is missing fails too. Policies new in now are not compared.
func CompareBaseline(file string, base, now *Document, tol float64) []Change {
	var out []Change
	byName := map[string]*PolicyResult{}
	for i := range now.Results {
		byName[now.Results[i].Policy] = &now.Results[i]
	}
	for _, b := range base.Results {
		n := byName[b.Policy]
		if n == nil {
			out = append(out, Change{Scenario: base.Scenario, Policy: b.Policy, Fail: true, Worse: true,
				Tolerance: tol, BaselineFile: file, BaselineSeed: base.Seed, policyNotRunning: true})
			continue
		}
		for _, m := range Metrics {
			c := Change{Scenario: base.Scenario, Policy: b.Policy, Metric: m.Name, Better: m.Better,
				Tolerance: tol, BaselineFile: file, BaselineSeed: base.Seed}
			c.Base, c.HasBase = m.Value(b)
			c.Now, c.HasNow = m.Value(*n)
			switch {
			case c.HasBase && c.HasNow:
				diff := c.Now - c.Base
				if m.Better == HigherIsBetter {
					diff = -diff
				}
				// diff > 0: worse.
				c.Worse, c.Improved = diff > 0, diff < 0
				c.Fail = diff > tol*math.Abs(c.Base)
			case c.HasBase:
				// A latency that existed is gone: nothing completes now.
				c.Worse, c.Fail = true, true
			case c.HasNow:
				c.Improved = true
			}
			out = append(out, c)
		}
	}
	return out
}

// Changed reports whether the metric moved at all.
func (c *Change) Changed() bool { return c.Worse || c.Improved }

func valueText(v float64, ok bool) string {
	if !ok {
		return "none"
	}
	return formatNumber(v)
}

// BaseText and NowText are the values as the reports print them.
func (c *Change) BaseText() string { return valueText(c.Base, c.HasBase) }
func (c *Change) NowText() string  { return valueText(c.Now, c.HasNow) }

// DeltaText gives the change as a signed difference and percentage of the
// baseline, e.g. "-6 (-33.3%)"; "" when nothing can be computed.
func (c *Change) DeltaText() string {
	diff, pct := c.delta()
	if pct != "" {
		return diff + " (" + pct + ")"
	}
	return diff
}

// delta gives the signed difference and, when the baseline is not 0, the
// signed percentage of the baseline.
func (c *Change) delta() (diff, pct string) {
	if !c.HasBase || !c.HasNow {
		return "", ""
	}
	d := c.Now - c.Base
	diff = formatNumber(d)
	if d > 0 {
		diff = "+" + diff
	}
	if c.Base != 0 {
		pct = fmt.Sprintf("%+.1f%%", 100*d/math.Abs(c.Base))
	}
	return diff, pct
}

// Explain says plainly what changed, e.g. "completed fell from 18 to 12
// (-6, -33.3%), worse beyond the 5% tolerance (higher is better)".
func (c *Change) Explain() string {
	if c.policyNotRunning {
		return fmt.Sprintf("policy %s is in the baseline but no longer in scenario %s", c.Policy, c.Scenario)
	}
	switch {
	case c.HasBase && !c.HasNow:
		return fmt.Sprintf("%s had %s and now has no value (nothing completed)", c.Metric, c.BaseText())
	case !c.HasBase && c.HasNow:
		return fmt.Sprintf("%s had no value and now is %s", c.Metric, c.NowText())
	case !c.Changed():
		return fmt.Sprintf("%s unchanged at %s", c.Metric, c.NowText())
	}
	verb := "rose"
	if c.Now < c.Base {
		verb = "fell"
	}
	by, pct := c.delta()
	if pct != "" {
		by += ", " + pct
	}
	s := fmt.Sprintf("%s %s from %s to %s (%s)", c.Metric, verb, c.BaseText(), c.NowText(), by)
	switch {
	case c.Fail:
		s += fmt.Sprintf(", worse beyond the %s tolerance (%s)", percent(c.Tolerance), c.Better)
	case c.Worse:
		s += fmt.Sprintf(", worse but within the %s tolerance", percent(c.Tolerance))
	default:
		s += ", better"
	}
	return s
}

func percent(f float64) string {
	return strconv.FormatFloat(round(100*f, 4), 'f', -1, 64) + "%"
}

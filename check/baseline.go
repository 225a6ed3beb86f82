package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/stats"
)

// plainNumber matches a plain decimal number: no hex, no underscores, no Inf
// or NaN.
var plainNumber = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// BaselineError says why a baseline file cannot be used.
type BaselineError struct {
	File  string
	Msg   string
	multi bool // a multi-seed baseline
}

func (e *BaselineError) Error() string {
	if e.multi {
		return e.File + ": " + e.Msg + " (a multi-seed baseline is the output of 'retrysim compare --seeds N --format json' for one scenario)"
	}
	return e.File + ": " + e.Msg + " (a baseline is the output of 'retrysim compare --format json' for one scenario and seed, or with --seeds N for many)"
}

// ReadBaseline reads a single-seed Document, as 'retrysim compare --format
// json' writes it, strictly: unknown fields, missing fields, trailing data and
// other JSON shapes (such as a multi-seed report) are errors naming file.
// The metrics a result must have are those of metrics.Default(); an optional
// metric (such as fallbacks) or one added later (metrics.Metric.Added) is
// read when it is there. Every result has the
// same metrics.
func ReadBaseline(file string, r io.Reader) (*report.Document, error) {
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
		Schema   *string           `json:"schema"`
		Scenario *string           `json:"scenario"`
		Seed     *uint64           `json:"seed"`
		Results  []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(data, &shape); err != nil {
		return nil, bad("not a single-seed JSON report: %v", jsonErr(data, err))
	}
	switch {
	case shape.Schema != nil && *shape.Schema != "" && *shape.Schema != report.SingleSeedSchema:
		return nil, bad("this is a %q report, not a single-seed one (ReadSeedBaseline reads multi-seed ones)", *shape.Schema)
	case shape.Scenario == nil || *shape.Scenario == "":
		return nil, bad("missing field \"scenario\"")
	case shape.Seed == nil:
		return nil, bad("missing field \"seed\"")
	case len(shape.Results) == 0:
		return nil, bad("no results: field \"results\" is missing or empty")
	}
	fields := resultFields(metrics.All())
	var set []*metrics.Metric
	for i, raw := range shape.Results {
		res, err := decodeObject(raw)
		if err != nil {
			return nil, bad("results[%d]: %v", i, jsonErr(data, err))
		}
		var present []*metrics.Metric
		for _, f := range fields {
			if _, ok := res.values[f.name]; !ok {
				if f.optional {
					continue
				}
				return nil, bad("results[%d]: missing field %q", i, f.name)
			}
			present = append(present, presentParts(f, res.values[f.name])...)
		}
		byLevel, err := metricsByPriority(res)
		if err != nil {
			return nil, bad("results[%d]: %v", i, jsonErr(data, err))
		}
		present = append(present, byLevel...)
		if i == 0 {
			set = present
		} else if !slices.Equal(set, present) {
			return nil, bad("results[%d]: has other metrics than results[0]", i)
		}
	}
	// Second pass: strictly, with the types.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc struct {
		Schema   string            `json:"schema"`
		Scenario string            `json:"scenario"`
		Seed     uint64            `json:"seed"`
		Origin   *report.Origin    `json:"origin"`
		Results  []json.RawMessage `json:"results"`
		// A pool's or layered policy's counters; not compared.
		PoolMembers []report.BreakdownRow `json:"pool_members"`
		Layers      []report.BreakdownRow `json:"layers"`
	}
	if err := dec.Decode(&doc); err != nil {
		return nil, bad("not a single-seed JSON report: %v", jsonErr(data, err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("unexpected data after the JSON document")
	}
	if doc.Origin != nil {
		if err := doc.Origin.Check(); err != nil {
			return nil, bad("%v", err)
		}
	}
	out := &report.Document{Schema: report.SingleSeedSchema, Scenario: doc.Scenario, Seed: doc.Seed, Origin: doc.Origin,
		PoolMembers: doc.PoolMembers, Layers: doc.Layers}
	seen := map[string]bool{}
	for i, raw := range doc.Results {
		pr, err := decodeResult(raw, set)
		if err != nil {
			var fe *fieldError
			if errors.As(err, &fe) {
				if at := bytes.Index(data, raw); at >= 0 {
					if k := bytes.Index(data[at:], []byte(`"`+fe.field+`"`)); k >= 0 {
						err = fmt.Errorf("line %d: %w", 1+bytes.Count(data[:at+k], []byte("\n")), err)
					}
				}
			}
			return nil, bad("results[%d]: %v", i, err)
		}
		if pr.Policy == "" {
			return nil, bad("results[%d]: empty policy name", i)
		}
		for k, m := range pr.Metrics {
			if err := possible(m, pr.Values[k]); err != nil {
				return nil, bad("results[%d] (%s): %s on seed %d: %v", i, pr.Policy, m.Name, doc.Seed, err)
			}
		}
		if seen[pr.Policy] {
			return nil, bad("results[%d]: policy %q appears twice", i, pr.Policy)
		}
		seen[pr.Policy] = true
		out.Results = append(out.Results, pr)
	}
	return out, nil
}

// resultField is a field of a result in the JSON report: policy, clients,
// a metric, or an object of metrics (gave_up_by, latency_ms).
type resultField struct {
	name     string
	metrics  []*metrics.Metric // those it holds, in registry order
	optional bool
}

// resultFields lists the fields of a result with the metrics of set.
func resultFields(set []*metrics.Metric) []resultField {
	fields := []resultField{{name: "policy"}, {name: "clients"}}
	for _, m := range set {
		name, _, _ := strings.Cut(m.Name, ".")
		last := &fields[len(fields)-1]
		if last.name == name {
			last.metrics = append(last.metrics, m)
			last.optional = last.optional && m.MayBeAbsent()
			continue
		}
		fields = append(fields, resultField{name: name, metrics: []*metrics.Metric{m}, optional: m.MayBeAbsent()})
	}
	return fields
}

// presentParts returns the metrics of field f that raw holds: all of them,
// but for an object (gave_up_by), its optional parts only if written.
func presentParts(f resultField, raw json.RawMessage) []*metrics.Metric {
	if len(f.metrics) == 0 || !strings.Contains(f.metrics[0].Name, ".") {
		return f.metrics
	}
	inner, err := decodeObject(raw)
	if err != nil {
		return f.metrics // the second pass reports the error
	}
	var out []*metrics.Metric
	for _, m := range f.metrics {
		if _, ok := inner.values[m.Part()]; ok || !m.MayBeAbsent() {
			out = append(out, m)
		}
	}
	return out
}

// metricsByPriority returns the metrics by priority a result holds (its
// object by_priority), in the order written.
func metricsByPriority(res object) ([]*metrics.Metric, error) {
	raw, ok := res.values[metrics.PriorityPrefix]
	if !ok {
		return nil, nil
	}
	inner, err := decodeObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", metrics.PriorityPrefix, err)
	}
	var out []*metrics.Metric
	for _, key := range inner.keys {
		m, ok := metrics.Lookup(metrics.PriorityPrefix + "." + key)
		if !ok {
			return nil, fmt.Errorf("json: unknown field %q (want LEVEL.METRIC, such as critical.completed)", metrics.PriorityPrefix+"."+key)
		}
		out = append(out, m)
	}
	return out, nil
}

// object is a JSON object's fields.
type object struct {
	keys   []string // in the order written
	values map[string]json.RawMessage
}

// decodeObject reads a JSON object, keeping the order of its fields;
// a field given twice is an error.
func decodeObject(raw json.RawMessage) (object, error) {
	o := object{values: map[string]json.RawMessage{}}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil {
		return o, err
	} else if t != json.Delim('{') {
		return o, fmt.Errorf("want an object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return o, err
		}
		key := t.(string) // keys of an object are strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return o, err
		}
		if _, dup := o.values[key]; dup {
			return o, fmt.Errorf("field %q given twice", key)
		}
		o.keys = append(o.keys, key)
		o.values[key] = v
	}
	return o, nil
}

// fieldError is a value of the wrong type in a result's field.
type fieldError struct {
	field string // the field of the result (gave_up_by for gave_up_by.deadline)
	err   error
}

func (e *fieldError) Error() string { return e.err.Error() }

// decodeResult reads one result with the metrics of set, strictly.
func decodeResult(raw json.RawMessage, set []*metrics.Metric) (report.PolicyResult, error) {
	pr := report.PolicyResult{Metrics: set, Values: make([]float64, len(set))}
	o, err := decodeObject(raw)
	if err != nil {
		return pr, err
	}
	fields := resultFields(set)
	known := map[string]*resultField{}
	for i := range fields {
		known[fields[i].name] = &fields[i]
	}
	for _, key := range o.keys {
		if known[key] == nil {
			return pr, fmt.Errorf("json: unknown field %q", key)
		}
	}
	if err := json.Unmarshal(o.values["policy"], &pr.Policy); err != nil {
		return pr, &fieldError{"policy", fmt.Errorf("policy: %v", err)}
	}
	if err := json.Unmarshal(o.values["clients"], &pr.Clients); err != nil {
		return pr, &fieldError{"clients", fmt.Errorf("clients: %v", err)}
	}
	number := func(name string, raw json.RawMessage) (float64, error) {
		var v *float64
		if err := json.Unmarshal(raw, &v); err != nil {
			field, _, _ := strings.Cut(name, ".")
			return 0, &fieldError{field, fmt.Errorf("%s: want a number or null: %v", name, err)}
		}
		if v == nil {
			return math.NaN(), nil
		}
		return *v, nil
	}
	for _, f := range fields[2:] {
		raw := o.values[f.name]
		if !strings.Contains(f.metrics[0].Name, ".") {
			v, err := number(f.name, raw)
			if err != nil {
				return pr, err
			}
			pr.Values[slices.Index(set, f.metrics[0])] = v
			continue
		}
		inner, err := decodeObject(raw)
		if err != nil {
			return pr, fmt.Errorf("%s: %v", f.name, err)
		}
		for _, key := range inner.keys {
			if !slices.ContainsFunc(f.metrics, func(m *metrics.Metric) bool { return m.Part() == key }) {
				return pr, fmt.Errorf("json: unknown field %q", f.name+"."+key)
			}
		}
		for _, m := range f.metrics {
			raw, ok := inner.values[m.Part()]
			if !ok && m.MayBeAbsent() {
				continue // not reported for this scenario, or not yet
			}
			if !ok {
				return pr, fmt.Errorf("missing field %q", m.Name)
			}
			v, err := number(m.Name, raw)
			if err != nil {
				return pr, err
			}
			pr.Values[slices.Index(set, m)] = v
		}
	}
	return pr, nil
}

// possible says why v, read from a report, cannot be a value of m (a
// negative or fractional count, a share above 1, a negative time, a
// missing value of a metric that always has one), or nil: the rule shard
// files are read with (metrics.Metric.Impossible).
func possible(m *metrics.Metric, v float64) error {
	if msg := m.Impossible(v); msg != "" {
		text := "null"
		if !math.IsNaN(v) {
			text = strconv.FormatFloat(v, 'g', -1, 64)
		}
		return fmt.Errorf("%s %s", text, msg)
	}
	return nil
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
	// Metric is a metric's name; "" for a policy that is in the baseline
	// but no longer in the scenario.
	Metric          string
	Better          stats.Direction
	Base, Now       float64
	HasBase, HasNow bool
	Worse, Improved bool
	Fail            bool // worse by more than the tolerance
	// NotComparable, if set, says why a metric over a subset of the
	// operations (a latency) ranks nothing: the policy now completes (or
	// gives up) a different number of them (metrics.Comparable). Such a
	// change is neither worse nor better, and does not fail.
	NotComparable    string
	Tolerance        float64
	BaselineFile     string
	BaselineSeed     uint64
	policyNotRunning bool
}

// CompareBaseline compares every metric of every policy of base with now,
// the same scenario run again on base's seed. Both are compared as the JSON
// report writes them (now is rounded as base was). A metric fails when it
// moved in its worse direction by more than its tolerance (a fraction) of the
// baseline value; when the baseline value is 0, any worsening fails. A
// policy of the baseline that now is missing fails too. Policies new in now
// are not compared, nor metrics that now does not have.
func CompareBaseline(file string, base, now *report.Document, tols Tolerances) []Change {
	var out []Change
	byName := map[string]*report.PolicyResult{}
	for i := range now.Results {
		byName[now.Results[i].Policy] = &now.Results[i]
	}
	for _, b := range base.Results {
		n := byName[b.Policy]
		if n == nil {
			out = append(out, Change{Scenario: base.Scenario, Policy: b.Policy, Fail: true, Worse: true,
				Tolerance: tols.Default, BaselineFile: file, BaselineSeed: base.Seed, policyNotRunning: true})
			continue
		}
		// On one seed any change is a change (as in paired's single-seed
		// rule): did the completions, or the give-ups, change?
		subsets := map[*metrics.Metric]stats.Verdict{}
		for _, sm := range []*metrics.Metric{metrics.Completed, metrics.GaveUp} {
			bv, ok1 := b.Value(sm)
			nv, ok2 := n.Value(sm)
			if ok1 && ok2 && bv != nv {
				subsets[sm] = stats.Worse
				if (nv > bv) == (sm.Better == stats.HigherIsBetter) {
					subsets[sm] = stats.Better
				}
			}
		}
		for _, m := range b.Metrics {
			if !slices.Contains(n.Metrics, m) {
				continue
			}
			tol := tols.For(m).Relative
			c := Change{Scenario: base.Scenario, Policy: b.Policy, Metric: m.Name, Better: m.Better,
				Tolerance: tol, BaselineFile: file, BaselineSeed: base.Seed}
			c.Base, c.HasBase = b.Value(m)
			c.Now, c.HasNow = n.Value(m)
			c.Base, c.Now = m.RoundForJSON(c.Base), m.RoundForJSON(c.Now)
			switch {
			case c.HasBase && c.HasNow:
				diff := c.Now - c.Base
				if m.Better == stats.HigherIsBetter {
					diff = -diff
				}
				// diff > 0: worse.
				c.Worse, c.Improved = diff > 0, diff < 0
				c.Fail = diff > tol*math.Abs(c.Base)
				verdict := stats.Same
				if c.Worse {
					verdict = stats.Worse
				} else if c.Improved {
					verdict = stats.Better
				}
				// (A value that did not move at all is reported as unchanged.)
				if sub := m.Subset(); sub != nil && verdict != stats.Same && !metrics.Comparable(m, subsets[sub], verdict) {
					bs, _ := b.Value(sub)
					ns, _ := n.Value(sub)
					verb := "completes"
					if sub == metrics.GaveUp {
						verb = "gives up"
					}
					c.NotComparable = fmt.Sprintf("over %s, and the policy now %s %s (was %s)", m.Over, verb, formatNumber(ns), formatNumber(bs))
					c.Worse, c.Improved, c.Fail = false, false, false
				}
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
		return fmt.Sprintf("%s had %s and now has no value (%s)", c.Metric, c.BaseText(), missingReason(c.Metric))
	case !c.HasBase && c.HasNow:
		return fmt.Sprintf("%s had no value and now is %s", c.Metric, c.NowText())
	case c.NotComparable != "":
		return fmt.Sprintf("%s went from %s to %s, not comparable: %s", c.Metric, c.BaseText(), c.NowText(), c.NotComparable)
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
	return strconv.FormatFloat(metrics.Round(100*f, 4), 'f', -1, 64) + "%"
}

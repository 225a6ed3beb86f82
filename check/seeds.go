package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/stats"
)

// SeedSet is every policy's metrics on seeds FirstSeed, FirstSeed+1, …, as
// a multi-seed JSON report records them (schema report.MultiSeedSchema) or
// a run measured them, rounded as the JSON report rounds them. A multi-seed
// baseline is compared with a new run seed by seed.
type SeedSet struct {
	Scenario  string
	FirstSeed uint64
	Seeds     int
	Policies  []SeedPolicy
	// Origin is what the report says produced it; nil for a run, or a
	// report written before reports said.
	Origin *report.Origin
}

// SeedPolicy is one policy's metrics in a SeedSet.
type SeedPolicy struct {
	Name    string
	Metrics []*metrics.Metric
	// Values[m][s] is Metrics[m] on seed FirstSeed+s; NaN where it has no
	// value (a latency when nothing completed).
	Values [][]float64
}

// Series returns the policy's values of m, or nil if it has none.
func (p *SeedPolicy) Series(m *metrics.Metric) []float64 {
	if i := slices.Index(p.Metrics, m); i >= 0 {
		return p.Values[i]
	}
	return nil
}

// Policy returns the policy named name, or nil.
func (s *SeedSet) Policy(name string) *SeedPolicy {
	for i := range s.Policies {
		if s.Policies[i].Name == name {
			return &s.Policies[i]
		}
	}
	return nil
}

// FromMultiSeed is m rounded as the JSON report writes it, so that a run
// compares with a baseline read from JSON value for value.
func FromMultiSeed(m *runs.MultiSeed) *SeedSet {
	set := &SeedSet{Scenario: m.Scenario, FirstSeed: m.FirstSeed, Seeds: m.Seeds()}
	for p, name := range m.Policies {
		sp := SeedPolicy{Name: name, Metrics: m.Metrics}
		for _, metric := range m.Metrics {
			vals := slices.Clone(m.Series(p, metric))
			for i, v := range vals {
				if !math.IsNaN(v) {
					vals[i] = metric.RoundForJSON(v)
				}
			}
			sp.Values = append(sp.Values, vals)
		}
		set.Policies = append(set.Policies, sp)
	}
	return set
}

// FromDocument is a single-seed report as a SeedSet of one seed.
func FromDocument(d *report.Document) *SeedSet {
	set := &SeedSet{Scenario: d.Scenario, FirstSeed: d.Seed, Seeds: 1, Origin: d.Origin}
	for _, r := range d.Results {
		sp := SeedPolicy{Name: r.Policy, Metrics: r.Metrics}
		for _, m := range r.Metrics {
			v, ok := r.Value(m)
			if !ok {
				v = math.NaN()
			}
			sp.Values = append(sp.Values, []float64{v})
		}
		set.Policies = append(set.Policies, sp)
	}
	return set
}

// maxBaselineValue bounds the magnitude of a value in a multi-seed report:
// no metric of a run comes near it, and sums of it stay exact enough.
const maxBaselineValue = 1e15

// Schema returns the "schema" field of a JSON report, or "" if it has
// none (a single-seed report written before SingleSeedSchema) or is not
// a JSON object.
func Schema(data []byte) string {
	var shape struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(data, &shape) != nil {
		return ""
	}
	return shape.Schema
}

// ReadSeedBaseline reads a multi-seed JSON report, as 'retrysim compare
// --seeds N --format json' writes it, strictly: unknown fields, trailing
// data, a metric this version does not know (or whose direction differs),
// values per seed that are missing, too many, out of range or impossible
// for their metric (metrics.Metric.Impossible, the rule of shard files: a
// negative or fractional count, a share above 1, a negative time) are
// errors naming file, policy, metric and seed. Only the values per seed are used; the statistics the report
// also carries are recomputed from them.
func ReadSeedBaseline(file string, data []byte) (*SeedSet, error) {
	bad := func(format string, args ...any) error {
		return &BaselineError{File: file, Msg: fmt.Sprintf(format, args...), multi: true}
	}
	if schema := Schema(data); schema != report.MultiSeedSchema {
		return nil, bad("schema %q, want %q", schema, report.MultiSeedSchema)
	}
	var doc struct {
		Schema    string         `json:"schema"`
		Scenario  string         `json:"scenario"`
		FirstSeed *uint64        `json:"first_seed"`
		Seeds     *int           `json:"seeds"`
		Origin    *report.Origin `json:"origin"`
		Baseline  string         `json:"baseline"`
		Test      string         `json:"test"`
		Alpha     float64        `json:"alpha"`
		Warnings  []string       `json:"warnings"`
		Policies  []struct {
			Policy  string `json:"policy"`
			Metrics []struct {
				Metric     string          `json:"metric"`
				Better     string          `json:"better"`
				N          int             `json:"n"`
				Summary    json.RawMessage `json:"summary"`
				VsBaseline json.RawMessage `json:"vs_baseline"`
				Values     *[]*float64     `json:"values"`
			} `json:"metrics"`
		} `json:"policies"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, bad("not a multi-seed JSON report: %v", jsonErr(data, err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("unexpected data after the JSON document")
	}
	switch {
	case doc.Scenario == "":
		return nil, bad("missing field \"scenario\"")
	case doc.FirstSeed == nil:
		return nil, bad("missing field \"first_seed\"")
	case doc.Seeds == nil:
		return nil, bad("missing field \"seeds\"")
	case *doc.Seeds < 1 || *doc.Seeds > MaxBaselineSeeds:
		return nil, bad("seeds %d: want 1 to %d", *doc.Seeds, MaxBaselineSeeds)
	case *doc.FirstSeed > math.MaxUint64-uint64(*doc.Seeds-1):
		return nil, bad("seeds %d from first_seed %d run past the largest seed", *doc.Seeds, *doc.FirstSeed)
	case len(doc.Policies) == 0:
		return nil, bad("no policies: field \"policies\" is missing or empty")
	}
	if doc.Origin != nil {
		if err := doc.Origin.Check(); err != nil {
			return nil, bad("%v", err)
		}
	}
	set := &SeedSet{Scenario: doc.Scenario, FirstSeed: *doc.FirstSeed, Seeds: *doc.Seeds, Origin: doc.Origin}
	for i, p := range doc.Policies {
		if p.Policy == "" {
			return nil, bad("policies[%d]: empty policy name", i)
		}
		if set.Policy(p.Policy) != nil {
			return nil, bad("policies[%d]: policy %q appears twice", i, p.Policy)
		}
		sp := SeedPolicy{Name: p.Policy}
		for j, ms := range p.Metrics {
			at := fmt.Sprintf("policies[%d] (%s): metrics[%d]", i, p.Policy, j)
			m, ok := metrics.Lookup(ms.Metric)
			switch {
			case !ok:
				return nil, bad("%s: unknown metric %q (recorded by another version of retrysim?)", at, ms.Metric)
			case slices.Contains(sp.Metrics, m):
				return nil, bad("%s: metric %q appears twice", at, ms.Metric)
			case ms.Better != m.Better.Word():
				return nil, bad("%s: %s says %q is better, this version says %q", at, ms.Metric, ms.Better, m.Better.Word())
			case ms.Values == nil:
				return nil, bad("%s: %s has no values per seed, which a baseline pairs with a new run (a report of a retrysim before 2026-12): record it again", at, ms.Metric)
			case len(*ms.Values) != set.Seeds:
				return nil, bad("%s: %s has %d values, want one per seed (%d)", at, ms.Metric, len(*ms.Values), set.Seeds)
			}
			vals := make([]float64, set.Seeds)
			for s, v := range *ms.Values {
				vals[s] = math.NaN()
				if v != nil {
					vals[s] = *v
				}
				if err := possible(m, vals[s]); err != nil {
					return nil, bad("%s: %s on seed %d: %v", at, ms.Metric, set.FirstSeed+uint64(s), err)
				}
				if math.Abs(vals[s]) > maxBaselineValue {
					return nil, bad("%s: %s on seed %d is %v, beyond %g", at, ms.Metric, set.FirstSeed+uint64(s), *v, maxBaselineValue)
				}
			}
			sp.Metrics = append(sp.Metrics, m)
			sp.Values = append(sp.Values, vals)
		}
		set.Policies = append(set.Policies, sp)
	}
	return set, nil
}

// MaxBaselineSeeds bounds the seeds of a multi-seed baseline.
const MaxBaselineSeeds = 100_000

// Tolerance is how much worse than a baseline a metric may get before a
// change fails: by more than Relative times the baseline's mean and by more
// than Absolute, in the metric's unit.
type Tolerance struct {
	Relative float64
	Absolute float64
}

// Allows reports whether a worsening by delta (> 0) of a metric whose
// baseline mean is base stays within t.
func (t Tolerance) Allows(delta, base float64) bool {
	return delta <= max(t.Relative*math.Abs(base), t.Absolute)
}

// DefaultTolerance is the relative tolerance of a comparison with base
// when none is given: 0 on one seed (the runs are deterministic), else
// DefaultSeedTolerance.
func DefaultTolerance(base *SeedSet) float64 {
	if base.Seeds > 1 {
		return DefaultSeedTolerance
	}
	return 0
}

// DefaultSeedTolerance is the relative tolerance of a multi-seed baseline
// when --tolerance is not given: a significant change smaller than 5 % of
// the baseline's mean does not fail.
const DefaultSeedTolerance = 0.05

// AbsoluteTolerance is the least change of m that can fail a multi-seed
// gate, by unit: half an operation (or request) per run, 0.005 of a ratio,
// 1 ms. Below it a significant change is too small to matter.
func AbsoluteTolerance(m *metrics.Metric) float64 {
	switch m.Unit {
	case metrics.Ratio:
		return 0.005
	case metrics.Milliseconds:
		return 1
	}
	return 0.5
}

// ScaleShare is the least change of a metric that can fail a multi-seed
// gate, as a share of the metric's scale in the scenario: its largest
// mean over the baseline's policies. 3 more attempts matter to a policy
// that sends 7, not to a scenario whose policies send 600 (docs/ci.md,
// "What counts as a change").
const ScaleShare = 0.01

// metricScale is every metric's largest absolute mean over base's
// policies (over the seeds that have it).
func metricScale(base *SeedSet) map[*metrics.Metric]float64 {
	scale := map[*metrics.Metric]float64{}
	for _, p := range base.Policies {
		for i, m := range p.Metrics {
			if s := report.SummarizeSeries(m, p.Values[i]); s.N > 0 {
				scale[m] = max(scale[m], math.Abs(s.Mean))
			}
		}
	}
	return scale
}

// Tolerances are the relative tolerances of a gate: Default for every
// metric but those named in PerMetric.
type Tolerances struct {
	Default float64
	// DefaultSet says that Default was given, not left at 0.
	DefaultSet bool
	PerMetric  map[string]float64
}

// ParseTolerances reads the values of --tolerance: "5%" sets the default,
// "METRIC=5%" one metric's tolerance (its name as in the JSON report).
func ParseTolerances(values []string) (Tolerances, error) {
	var t Tolerances
	for _, v := range values {
		name, pct, named := strings.Cut(v, "=")
		if !named {
			pct = v
		}
		f, err := ParseTolerance(pct)
		if err != nil {
			return t, err
		}
		if !named {
			if t.DefaultSet {
				return t, fmt.Errorf("%q: the tolerance of every metric is already given", v)
			}
			t.Default, t.DefaultSet = f, true
			continue
		}
		name = strings.TrimSpace(name)
		if _, ok := metrics.Lookup(name); !ok {
			return t, fmt.Errorf("%q: unknown metric %q (see docs/output.md for the names)", v, name)
		}
		if _, dup := t.PerMetric[name]; dup {
			return t, fmt.Errorf("%q: the tolerance of %s is already given", v, name)
		}
		if t.PerMetric == nil {
			t.PerMetric = map[string]float64{}
		}
		t.PerMetric[name] = f
	}
	return t, nil
}

// MaxBaselineSize bounds the size of a baseline file, in bytes: room for
// about 100,000 seeds of a scenario with four policies, and within what a
// shard file, which keeps a copy, may hold.
const MaxBaselineSize = 64 << 20

// For returns the tolerance of m.
func (t Tolerances) For(m *metrics.Metric) Tolerance {
	rel, ok := t.PerMetric[m.Name]
	if !ok {
		rel = t.Default
	}
	return Tolerance{Relative: rel, Absolute: AbsoluteTolerance(m)}
}

// SeedVerdict is what a comparison over seeds concludes for one metric:
// stats.Verdict's values under the names this package's reports use.
type SeedVerdict = stats.Verdict

const (
	// Unchanged: no significant difference (benchstat's "~").
	Unchanged = stats.Same
	Improved  = stats.Better
	Worsened  = stats.Worse
	// NotComparable: a metric over completed operations only (or give-ups
	// only) that metrics.Comparable refuses to rank, because the policy
	// now completes (or gives up on) significantly different operations.
	NotComparable = stats.NotComparable
)

// SeedChange is one metric of one policy compared over seeds, paired by
// seed, with its baseline.
type SeedChange struct {
	File      string
	Scenario  string
	Policy    string
	FirstSeed uint64
	Seeds     int
	// Metric is nil for a policy that is in the baseline but no longer in
	// the scenario (which fails).
	Metric *metrics.Metric
	// Base and Now summarise the values over the seeds where each has one.
	Base, Now stats.Summary
	// Diff is the paired comparison (Now − Base) over the seeds where both
	// have a value; its verdict is at the level of one test.
	Diff stats.Difference
	// AdjustedP is Diff's p-value adjusted for the family of every test
	// the gate made (judge); 1 for a change that was not tested.
	AdjustedP float64
	Tolerance Tolerance
	// Verdict is the family's: a test that is significant after the
	// adjustment, then the survivor rule.
	Verdict SeedVerdict
	// Fail: significantly worse beyond the tolerance, or a missing policy.
	Fail bool
	// Note says why a metric is not comparable, or how a value that
	// appeared or vanished was judged.
	Note string

	baseValues, nowValues []float64
	// subset and presence index the changes, in the same slice, of the
	// count that Metric is over (metrics.Metric.Subset) and of the one
	// that says whether it exists (Presence); -1 if not compared.
	subset, presence int
}

// CompareSeeds compares every metric of every policy of base with now, the
// same scenario run on the same seeds, paired by seed with the two-sided
// signed-rank test, as one family at level alpha (judge): the probability
// that anything fails when only the draws changed is at most alpha. A
// metric fails only when it is significantly worse after the family's
// adjustment and worse beyond its tolerance (on the mean of the paired
// differences); an improvement never fails. A metric over completed
// operations (or give-ups) only that metrics.Comparable refuses to rank,
// because what it is over changed significantly, is not comparable and
// does not fail: the completions say what changed. A metric that had a
// value and has none now (or the reverse) on every seed is judged through
// the count that says whether it exists (metrics.Metric.Presence): that
// nothing gives up any more is not a failure. A policy of base missing
// from now fails; policies new in now are not compared, nor metrics now
// does not have. It panics if the seeds differ.
func CompareSeeds(file string, base, now *SeedSet, tol Tolerances, alpha float64) ([]SeedChange, Family) {
	cs := compareSeeds(file, base, now, tol)
	return cs, judge(cs, alpha)
}

// compareSeeds makes the paired tests of CompareSeeds; judge decides.
func compareSeeds(file string, base, now *SeedSet, tol Tolerances) []SeedChange {
	if base.FirstSeed != now.FirstSeed || base.Seeds != now.Seeds {
		panic("check.CompareSeeds: the runs are on different seeds")
	}
	scale := metricScale(base)
	var out []SeedChange
	for _, bp := range base.Policies {
		c0 := SeedChange{File: file, Scenario: base.Scenario, Policy: bp.Name, FirstSeed: base.FirstSeed, Seeds: base.Seeds, AdjustedP: 1, subset: -1, presence: -1}
		np := now.Policy(bp.Name)
		if np == nil {
			c := c0
			c.Fail, c.Verdict = true, Worsened
			c.Note = fmt.Sprintf("policy %s is in the baseline but no longer in scenario %s", bp.Name, base.Scenario)
			out = append(out, c)
			continue
		}
		first := len(out)
		for i, m := range bp.Metrics {
			nowSeries := np.Series(m)
			if nowSeries == nil {
				continue
			}
			c := c0
			c.Metric, c.Tolerance = m, tol.For(m)
			c.Base, c.Now = report.SummarizeSeries(m, bp.Values[i]), report.SummarizeSeries(m, nowSeries)
			c.Diff = paired(bp.Values[i], nowSeries, m.Better)
			if base.Seeds > 1 {
				c.Tolerance.Absolute = max(c.Tolerance.Absolute, ScaleShare*scale[m])
			}
			c.baseValues, c.nowValues = bp.Values[i], nowSeries
			out = append(out, c)
		}
		// Link each metric to the counts it is over and exists with.
		for i := first; i < len(out); i++ {
			for j := first; j < len(out); j++ {
				switch out[j].Metric {
				case out[i].Metric.Subset():
					out[i].subset = j
				case out[i].Metric.Presence():
					out[i].presence = j
				}
			}
			if out[i].Metric.Presence() == out[i].Metric.Subset() {
				out[i].presence = out[i].subset
			}
		}
	}
	return out
}

// verdictAt is c's verdict at the family's level, before the survivor
// rule: on one seed any difference (paired's), else the sign of a test
// that is significant after the adjustment.
func (c *SeedChange) verdictAt(alpha float64) SeedVerdict {
	if c.Seeds == 1 {
		return c.Diff.Verdict
	}
	if c.Diff.Pairs == 0 || c.AdjustedP >= alpha {
		return Unchanged
	}
	if (c.Diff.Test.WPlus > c.Diff.Test.WMinus) == (c.Metric.Better == stats.HigherIsBetter) {
		return Improved
	}
	return Worsened
}

// decide sets cs[i]'s verdict and failure from its adjusted test.
func decide(cs []SeedChange, i int, alpha float64) {
	c := &cs[i]
	if c.Metric == nil {
		return // a missing policy: already decided
	}
	m := c.Metric
	v := c.verdictAt(alpha)
	switch {
	case c.Base.N == 0 && c.Now.N == 0:
		c.Verdict, c.Note = Unchanged, m.MissingReason()
	case c.Diff.Pairs == 0:
		// It exists on one side only: what says whether it exists
		// decides (nothing gives up any more: gave_up fell).
		c.Verdict = Unchanged
		c.Note = fmt.Sprintf("had a value on %d seeds, now on %d (%s)", c.Base.N, c.Now.N, m.MissingReason())
		if c.presence >= 0 {
			p := &cs[c.presence]
			c.Note += fmt.Sprintf(": judged by %s (%s)", p.Metric.Name, p.verdictAt(alpha))
		}
	case c.subset >= 0 && !metrics.Comparable(m, cs[c.subset].verdictAt(alpha), v):
		sub := &cs[c.subset]
		verb := "completes"
		if m.Subset() == metrics.GaveUp {
			verb = "gives up"
		}
		c.Verdict = NotComparable
		c.Note = fmt.Sprintf("over %s, and the policy now %s %s per run", m.Over, verb, signed(sub.Diff.DeltaMean))
		if c.Seeds > 1 {
			c.Note += fmt.Sprintf(" (adjusted p %s)", pIs(sub.AdjustedP))
		}
	case v == Worsened:
		c.Verdict = Worsened
		c.Fail = !c.Tolerance.Allows(math.Abs(c.Diff.DeltaMean), baseMeanOverPairs(c.baseValues, c.nowValues))
	default:
		c.Verdict = v
	}
}

// paired is stats.Paired, but on a single seed, where no test is possible,
// any difference counts: the same scenario and seed give the same numbers,
// so a change is a change of behaviour or of draws (the single-seed
// baseline's rule).
func paired(base, now []float64, better stats.Direction) stats.Difference {
	d := stats.Paired(base, now, better)
	if len(base) == 1 && d.Pairs == 1 && d.DeltaMean != 0 {
		if (d.DeltaMean > 0) == (better == stats.HigherIsBetter) {
			d.Verdict = stats.Better
		} else {
			d.Verdict = stats.Worse
		}
	}
	return d
}

// baseMeanOverPairs is the baseline's mean over the seeds where both have
// a value: what a paired change is relative to.
func baseMeanOverPairs(base, now []float64) float64 {
	var sum float64
	n := 0
	for i, b := range base {
		if !math.IsNaN(b) && !math.IsNaN(now[i]) {
			sum += b
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func signed(v float64) string {
	v = metrics.Round(v, 2)
	if v == 0 {
		return "0" // not -0
	}
	s := formatNumber(v)
	if v > 0 {
		s = "+" + s
	}
	return s
}

// pIs completes "p" in a sentence: "= 0.012", or "< 0.001" (never
// "= <0.001").
func pIs(p float64) string {
	f := formatP(p)
	if strings.HasPrefix(f, "<") {
		return "< " + strings.TrimPrefix(f, "<")
	}
	return "= " + f
}

func formatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// Power of the gate: how many seeds it needs to see a change.
const (
	// DetectChange is the relative change of completions the seeds
	// warning is about.
	DetectChange = 0.05
	// zAlpha and zPower are the normal quantiles of a two-sided test at
	// α = 0.05 (1.96) and of 80 % power (0.84).
	zAlpha, zPower = 1.959964, 0.841621
	// signedRankEfficiency is the asymptotic relative efficiency of the
	// signed-rank test against the paired t-test for normal data (3/π).
	signedRankEfficiency = 3 / math.Pi
)

// SeedsToDetect estimates how many seeds a paired gate needs to detect,
// with 80 % power at α = 0.05, a change of change (a fraction) in the mean
// of values, taking the spread of the paired differences as √2 times the
// spread of values (as if old and new runs drew independently; a change
// that keeps most draws does better). It is at least
// stats.MinDifferingPairs; ok is false when values have no spread or a
// mean of 0 (then nothing can be said).
func SeedsToDetect(values []float64, change float64) (n int, ok bool) {
	s := report.SummarizeSeries(metrics.Completed, values)
	if s.N < 2 || s.StdDev == 0 || s.Mean == 0 || change <= 0 {
		return 0, false
	}
	delta := change * math.Abs(s.Mean)
	k := (zAlpha + zPower) * math.Sqrt2 * s.StdDev / delta
	return max(int(math.Ceil(k*k/signedRankEfficiency)), stats.MinDifferingPairs), true
}

// PowerWarnings says, for every policy of base whose completions vary from
// seed to seed, when base has fewer seeds than SeedsToDetect needs to see a
// DetectChange change in them.
func PowerWarnings(file string, base *SeedSet) []string {
	var out []string
	for _, p := range base.Policies {
		series := p.Series(metrics.Completed)
		if n, ok := SeedsToDetect(series, DetectChange); ok && n > base.Seeds {
			mean := report.SummarizeSeries(metrics.Completed, series).Mean
			out = append(out, fmt.Sprintf("%s: %s/%s: %d seeds detect a %s change in completed (mean %s) only by luck; about %d are needed for 80%% power (docs/ci.md)",
				file, base.Scenario, p.Name, base.Seeds, percent(DetectChange), formatNumber(metrics.Round(mean, 2)), n))
		}
	}
	return out
}

// SeedRange names the seeds compared: "seeds 1-30".
func (c *SeedChange) SeedRange() string { return seedRange(c.FirstSeed, c.Seeds) }

// SeedChangeHeader is the header of the rows of SeedChange tables.
func SeedChangeHeader() []string {
	return []string{"result", "scenario", "policy", "metric", "baseline", "now", "change", "p", "note"}
}

// row is the change as a row under SeedChangeHeader.
func (c *SeedChange) row() []string {
	result := c.Verdict.String()
	switch {
	case c.Fail:
		result = "FAIL"
	case c.Verdict == Worsened:
		result = "worse (within tolerance)"
	}
	if c.Metric == nil {
		return []string{result, c.Scenario, c.Policy, "(policy missing)", "", "", "", "", c.Note}
	}
	return []string{result, c.Scenario, c.Policy, c.Metric.Name, c.MeanText(c.Base), c.MeanText(c.Now), c.ChangeText(), c.PText(), c.Note}
}

// MeanText is a summary as "mean ± half its 95 % interval", a
// proportion's as "mean [low, high]" (its interval is not symmetric:
// report.Summarize),
// or "none".
func (c *SeedChange) MeanText(s stats.Summary) string {
	if s.N == 0 {
		return "none"
	}
	d := c.Metric.Decimals()
	text := formatNumber(metrics.Round(s.Mean, d))
	if c.Metric.Proportion && s.N > 1 {
		return fmt.Sprintf("%s [%s, %s]", text, formatNumber(metrics.Round(s.CILow, d)), formatNumber(metrics.Round(s.CIHigh, d)))
	}
	if s.N > 1 {
		text += " ± " + formatNumber(metrics.Round((s.CIHigh-s.CILow)/2, d))
	}
	return text
}

// ChangeText is the mean paired change, with its percentage of the
// baseline when that mean is not near 0.
func (c *SeedChange) ChangeText() string {
	if c.Diff.Pairs == 0 {
		return ""
	}
	text := signed(metrics.Round(c.Diff.DeltaMean, c.Metric.Decimals()))
	if text == "0" {
		return text
	}
	if !math.IsNaN(c.Diff.DeltaPercent) && math.Abs(c.Diff.DeltaPercent) < 1000 {
		text += fmt.Sprintf(" (%+.1f%%)", c.Diff.DeltaPercent)
	}
	return text
}

// PText is the test's p-value adjusted for the family (judge), or ""
// without pairs or with one seed.
func (c *SeedChange) PText() string {
	if c.Diff.Pairs == 0 || c.Seeds == 1 {
		return ""
	}
	return formatP(c.AdjustedP)
}

// Explain says plainly what the comparison found.
func (c *SeedChange) Explain() string {
	if c.Metric == nil {
		return c.Note
	}
	name := c.Metric.Name
	switch {
	case c.Note != "" && c.Verdict != NotComparable:
		return name + " " + c.Note
	case c.Verdict == NotComparable:
		return fmt.Sprintf("%s not comparable: %s", name, c.Note)
	case c.Base.N == 0 && c.Now.N > 0:
		return fmt.Sprintf("%s had no value and now is %s on %d seeds", name, c.MeanText(c.Now), c.Now.N)
	case c.Verdict == Unchanged && c.Seeds == 1:
		return fmt.Sprintf("%s unchanged at %s", name, c.MeanText(c.Now))
	case c.Verdict == Unchanged:
		return fmt.Sprintf("%s: no significant change over %d paired seeds (%s → %s, adjusted p %s)", name, c.Diff.Pairs, c.MeanText(c.Base), c.MeanText(c.Now), pIs(c.AdjustedP))
	}
	over := fmt.Sprintf("over %d paired seeds, adjusted p %s", c.Diff.Pairs, pIs(c.AdjustedP))
	if c.Seeds == 1 {
		over = "on one seed (no test)"
	}
	s := fmt.Sprintf("%s: %s → %s, change %s %s", name, c.MeanText(c.Base), c.MeanText(c.Now), c.ChangeText(), over)
	switch {
	case c.Fail:
		s += fmt.Sprintf(": worse beyond the tolerance (%s of the baseline, at least %s; %s)", percent(c.Tolerance.Relative), formatNumber(c.Tolerance.Absolute), c.Metric.Better)
	case c.Verdict == Worsened:
		s += fmt.Sprintf(": worse, but within the tolerance (%s of the baseline, at least %s)", percent(c.Tolerance.Relative), formatNumber(c.Tolerance.Absolute))
	default:
		s += ": better"
	}
	return s
}

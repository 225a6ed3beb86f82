// Package metrics is the registry of retrysim's metrics: every number
// reported about one policy's run, computed from the raw sim.Result. Each
// metric has a name (the one expectations, baselines, sweeps and JSON
// reports use), a unit, the direction in which it improves and a function
// of the result that returns the value unrounded, or says that it does not
// exist for this run (no latency when nothing completed). Tables, checks,
// statistics and plots all take their metrics from here; rounding is for
// presentation only.
//
// Adding a metric is one registration: in this file for a metric of every
// run, with the kind that counts it (package kinds, RegisterCounted) for
// one only some servers or workloads count. The JSON reports, the CSV, the
// statistics over seeds, expectations and baselines pick it up.
package metrics

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// Unit is what a metric counts.
type Unit int

const (
	// Count is a whole number of operations or requests.
	Count Unit = iota
	// Ratio is a quotient, such as attempts per operation.
	Ratio
	// Milliseconds is a time since an operation's (or the run's) start.
	Milliseconds
)

// Population is what a metric is computed over.
type Population uint8

const (
	// OverRun: the whole run, every operation (counts, amplification).
	OverRun Population = iota
	// OverCompleted: the operations that completed, and only those.
	OverCompleted
	// OverGaveUp: the operations that gave up, and only those.
	OverGaveUp
	// OverKept: the whole run, but what the policy abandoned is missing
	// from it, so abandoning work improves it (the time until goodput
	// recovers is short once clients have given up). It ranks only when
	// the give-ups could not explain its verdict (Subset is GaveUp).
	OverKept
)

// String says what a population is, for tables and captions.
func (p Population) String() string {
	switch p {
	case OverCompleted:
		return "completed operations only"
	case OverGaveUp:
		return "give-ups only"
	case OverKept:
		return "what was not abandoned"
	}
	return "every operation"
}

// Subset returns the metric that counts the operations m is computed over
// (Completed for a latency), or nil for a metric over the whole run.
func (m *Metric) Subset() *Metric {
	if m.level != nil {
		if s := m.base.Subset(); s != nil {
			b, _ := ByPriority(*m.level, s)
			return b
		}
		return nil
	}
	switch m.Over {
	case OverCompleted:
		return Completed
	case OverGaveUp, OverKept:
		return GaveUp
	}
	return nil
}

// Comparable reports whether verdict, a paired comparison of m between
// two policies (or two versions of one), ranks them, given subset, the
// verdict of the paired comparison of m.Subset() between the same two. A
// metric over a subset of the operations (a survivor statistic, such as a
// latency) describes different operations when the subsets' sizes differ
// significantly. The operations one policy completes and the other does
// not are, as a rule, the hardest ones, so only a verdict that those
// extra operations could not overturn ranks: better on a latency while
// completing more, or worse while completing fewer. A better latency
// bought by completing fewer (winning by losing work), a worse one paid
// for by completing more, and a "~" between subsets of different sizes
// rank nothing. This is the one rule of reports, plots, sweeps and check;
// docs/statistics.md explains it.
func Comparable(m *Metric, subset, verdict stats.Verdict) bool {
	if m.Subset() == nil || subset == stats.Same {
		return true
	}
	return verdict != stats.Same && verdict == subset
}

// WorkRole is what a count of the workload's own unit of work (Metric.Work)
// says about it.
type WorkRole uint8

const (
	// NotWork: a metric of calls or of the run, not of a unit of work.
	NotWork WorkRole = iota
	// WorkDone counts the units completed (sessions completed).
	WorkDone
	// WorkLost counts the units that ended without success.
	WorkLost
	// WorkSpent counts what the units cost besides calls (sessions
	// resumed, tokens of completed calls thrown away).
	WorkSpent
)

// WorkUnit names the unit of work a metric with a Work role counts, the
// first part of its name ("sessions"); "" for any other metric.
func (m *Metric) WorkUnit() string {
	if m.Work == NotWork {
		return ""
	}
	unit, _, _ := strings.Cut(m.Name, ".")
	return unit
}

// Metric is one number about a policy's run.
type Metric struct {
	// Name is the metric's name in expectations, baselines, sweeps and
	// the JSON reports, a path of JSON field names: "latency_ms.p99".
	Name string
	// Column is the metric's column in the single-run table and CSV;
	// metrics that share a column (the give-up reasons) are shown there
	// together as part=value.
	Column string
	Unit   Unit
	Better stats.Direction
	// Headline metrics are those the tables of statistics, box plots and
	// sweep tables show; the JSON and CSV carry every metric.
	Headline bool
	// Quantity, if set, says what the value counts, for a plot's axis:
	// "requests wasted".
	Quantity string
	// Missing, if set, says why a run has no value, for messages; the
	// default (MissingReason) is the latencies' reason, "nothing completed".
	Missing string
	// JSONDecimals, when >= 0, is the number of decimals the JSON report
	// rounds the value to; -1 keeps it as it is.
	JSONDecimals int
	// Over says which operations the metric is computed over. A metric over
	// completed operations only (a survivor statistic, such as a latency)
	// cannot rank two policies that complete different numbers of them.
	Over Population
	// Proportion metrics are shares in [0, 1]: of runs (recovery.recovered,
	// a Count: Wilson score intervals over seeds) or of each run's
	// operations (goodput_share, a Ratio: the t interval of the per-seed
	// shares, clipped). Both stay inside [0, 1] (report.Summarize).
	Proportion bool
	// Detail metrics are not columns of the single-run table, which stays
	// one screen wide; the JSON, the CSV and the statistics carry them.
	Detail bool
	// ShedReason, if set, says in one line why the metric may read better
	// for a policy that gives up early without flattering it: it is the
	// work spent (fewer requests are cheaper; completed says what the
	// saving bought), or the work itself (giving up can only lower it).
	// A metric without one must never read better for a policy that
	// abandons work and completes no more (TestGiveUpEarlyIsNeverBetter
	// in package check derives such a policy for every scenario).
	ShedReason string
	// PresentWith, if set, is the count whose value says whether the
	// metric exists on a run (completed for a latency); see Presence.
	PresentWith *Metric
	// Work, if set, marks a count of the workload's own unit of work, one
	// that spans calls (agent sessions): where a scenario reports such
	// counts, they lead the tables of statistics, the trade summary and
	// its verdicts, and the per-call metrics follow as the cost.
	Work WorkRole
	// Added, if set, is when the metric was added (e.g. "2026-12"): JSON
	// reports recorded before may lack it, and baselines are read without
	// it (MayBeAbsent).
	Added string
	// value computes the metric; ok is false when it does not exist.
	value func(r *sim.Result) (v float64, ok bool)
	// shown, if set, makes the metric optional: it is reported only for
	// scenarios in which it holds for some policy.
	shown func(p *sim.Policy) bool
	// counted makes the metric optional too: it is reported only for
	// scenarios whose server or workload counts it (For's counted names).
	counted bool
	// external marks a metric another package registered (RegisterCounted,
	// RegisterShown): it may read what the run's Result holds only in
	// total (its counters), so it has no values by priority.
	external bool
	// level and base, for a metric by priority (ByPriority): the priority
	// and the metric it is of; part is its key in the JSON object
	// by_priority ("critical.latency_ms.p99").
	level *sim.Priority
	base  *Metric
	part  string
}

// Value returns the metric of r, unrounded, and false when it does not
// exist for r.
func (m *Metric) Value(r *sim.Result) (float64, bool) { return m.value(r) }

// ValueOrNaN is Value with NaN for a value that does not exist.
func (m *Metric) ValueOrNaN(r *sim.Result) float64 {
	if v, ok := m.value(r); ok {
		return v
	}
	return math.NaN()
}

// MissingReason says why a run may have no value of the metric.
func (m *Metric) MissingReason() string {
	if m.Missing != "" {
		return m.Missing
	}
	return "nothing completed"
}

// Presence returns the count whose value says whether m exists on a run
// (a latency exists when something completed): PresentWith, else the
// operations m is computed over (Subset). A metric that stops existing
// on every seed is judged through it: nothing gave up is not a failure.
// It is nil for a metric that exists on every run.
func (m *Metric) Presence() *Metric {
	if m.PresentWith != nil {
		return m.PresentWith
	}
	return m.Subset()
}

// MayBeAbsent reports whether a JSON report (a baseline) may lack the
// metric: an optional one, or one added after reports were first recorded.
func (m *Metric) MayBeAbsent() bool { return m.Optional() || m.Added != "" }

// MayBeMissing reports whether a run can lack a value of the metric: a
// time (a latency when nothing completed) or a metric that says why it
// can be missing (Missing).
func (m *Metric) MayBeMissing() bool { return m.Unit == Milliseconds || m.Missing != "" }

// MaxExactCount is the largest count a metric of unit Count can have in
// a file that is read back (a shard file, a baseline): whole numbers up to
// it are exact in a float64.
const MaxExactCount = 1 << 53

// Impossible says why v cannot be a value of the metric, or "" when it
// can: a count is a whole number from 0 to MaxExactCount, a ratio a finite
// number >= 0 (a proportion at most 1), a time a finite number >= 0; NaN
// (no value) only for a metric that may be missing (MayBeMissing). Every
// reader of recorded values (shard files, baselines) checks them with it.
func (m *Metric) Impossible(v float64) string {
	switch {
	case math.IsNaN(v):
		if !m.MayBeMissing() {
			return "(missing), but the metric always has a value"
		}
	case math.IsInf(v, 0) || v < 0:
		return "is not a finite number ≥ 0"
	case m.Unit == Count && (v != math.Trunc(v) || v > MaxExactCount):
		return "is not a count (a whole number from 0 to 2^53)"
	case m.Proportion && v > 1:
		return "is not a share (a number from 0 to 1)"
	}
	return ""
}

// Part is the last element of the name: "p99" of "latency_ms.p99".
// A metric by priority's part is all but the prefix ("critical.completed"),
// its key in the JSON object by_priority.
func (m *Metric) Part() string {
	if m.part != "" {
		return m.part
	}
	return m.Name[strings.LastIndexByte(m.Name, '.')+1:]
}

// Optional reports whether the metric is reported only where it applies.
func (m *Metric) Optional() bool { return m.shown != nil || m.counted }

// Decimals is how many decimals tables of statistics show.
func (m *Metric) Decimals() int {
	switch m.Unit {
	case Milliseconds:
		return 1
	case Ratio:
		return 3
	}
	return 2
}

// RoundForJSON rounds v as the JSON report writes it.
func (m *Metric) RoundForJSON(v float64) float64 {
	if m.JSONDecimals < 0 {
		return v
	}
	return Round(v, m.JSONDecimals)
}

// Round rounds v to the given number of decimals through its decimal text,
// so that the same value always prints the same way.
func Round(v float64, decimals int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', decimals, 64), 64)
	return f
}

// ms converts a duration to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func count(f func(r *sim.Result) int) func(*sim.Result) (float64, bool) {
	return func(r *sim.Result) (float64, bool) { return float64(f(r)), true }
}

func giveUpPercentile(p float64) func(*sim.Result) (float64, bool) {
	return func(r *sim.Result) (float64, bool) {
		d, ok := r.GiveUpPercentile(p)
		return ms(d), ok
	}
}

// share is a count's share of the run's operations.
func share(f func(r *sim.Result) int) func(*sim.Result) (float64, bool) {
	return func(r *sim.Result) (float64, bool) {
		if r.Clients == 0 {
			return 0, false
		}
		return float64(f(r)) / float64(r.Clients), true
	}
}

func percentile(p float64) func(*sim.Result) (float64, bool) {
	return func(r *sim.Result) (float64, bool) {
		d, ok := r.Percentile(p)
		return ms(d), ok
	}
}

// Reasons a metric may read better for a policy that gives up early
// (Metric.ShedReason), each with what keeps the verdict honest.
const (
	// SpentWork: requests, retries, waste, bills.
	SpentWork = "the work spent: less is cheaper, and completed says what the saving bought"
	// TheWork: completions and losses.
	TheWork = "the work itself: giving up early can only make it worse"
	// SurvivorRule: a metric over completed operations or give-ups.
	SurvivorRule = "over part of the operations: ranked only while that part is not significantly smaller (Comparable)"
	// GiveUpReason: one reason's count of give-ups.
	GiveUpReason = "one reason's part of the give-ups: giving up sooner moves them between reasons, and gave_up says whether there are more"
)

// trade is when the metrics that state the trade were added.
const trade = "2026-12"

// The metrics, in registry order (the order of JSON fields and columns).
var (
	Completed = register(&Metric{Name: "completed", Unit: Count, Better: stats.HigherIsBetter, Headline: true, ShedReason: TheWork,
		value: count(func(r *sim.Result) int { return r.Completed })})
	Attempts = register(&Metric{Name: "attempts", Unit: Count, Better: stats.LowerIsBetter, Headline: true, ShedReason: SpentWork,
		value: count(func(r *sim.Result) int { return r.Attempts })})
	Retries = register(&Metric{Name: "retries", Unit: Count, Better: stats.LowerIsBetter, ShedReason: SpentWork,
		value: count(func(r *sim.Result) int { return r.Retries })})
	GaveUp = register(&Metric{Name: "gave_up", Unit: Count, Better: stats.LowerIsBetter, Headline: true, ShedReason: TheWork,
		value: count(func(r *sim.Result) int { return r.GaveUp })})
	// gaveUpBy has one metric per reason an operation of the simulator can
	// stop for, named after policies.StopReason.String().
	// The reasons only the retry controls give are reported only for
	// scenarios with such a control, so the reports of the others stay as
	// they were.
	gaveUpBy = []*Metric{
		gaveUpByReason(policies.StopAttempts, nil),
		gaveUpByReason(policies.StopDeadline, nil),
		gaveUpByReason(policies.StopTerminal, nil),
		gaveUpByReason(policies.StopQueueFull, nil),
		gaveUpByReason(policies.StopBudget, mayStop(policies.StopBudget)),
		gaveUpByReason(policies.StopThrottled, mayStop(policies.StopThrottled)),
		gaveUpByReason(policies.StopCircuitOpen, mayStop(policies.StopCircuitOpen)),
	}
	// Fallbacks is reported only for scenarios in which some policy has a
	// model fallback, so that the reports of the others stay as they were.
	Fallbacks = register(&Metric{Name: "fallbacks", Unit: Count, Better: stats.LowerIsBetter, ShedReason: SpentWork,
		value: count(func(r *sim.Result) int { return r.Fallbacks }),
		shown: func(p *sim.Policy) bool { return p.Fallback != nil }})
	Amplification = register(&Metric{Name: "amplification", Unit: Ratio, Better: stats.LowerIsBetter, Headline: true, JSONDecimals: 4, ShedReason: SpentWork,
		value: func(r *sim.Result) (float64, bool) { return r.Amplification(), true }})

	// The trade stated directly. AttemptsPerCompletion is requests sent per
	// operation completed: what one success costs (amplification divides
	// by every operation, so abandoning work lowers it).
	AttemptsPerCompletion = register(&Metric{Name: "attempts_per_completion", Unit: Ratio, Better: stats.LowerIsBetter, Headline: true, JSONDecimals: 4, Detail: true, Added: trade,
		Missing: "nothing completed", PresentWith: Completed, ShedReason: SpentWork,
		value: func(r *sim.Result) (float64, bool) {
			if r.Completed == 0 {
				return 0, false
			}
			return float64(r.Attempts) / float64(r.Completed), true
		}})
	// GoodputShare and GaveUpShare are the shares of the run's operations
	// that completed and that gave up.
	GoodputShare = register(&Metric{Name: "goodput_share", Unit: Ratio, Better: stats.HigherIsBetter, Proportion: true, JSONDecimals: 4, Detail: true, Added: trade,
		Missing: "no operations", ShedReason: TheWork, value: share(func(r *sim.Result) int { return r.Completed })})
	GaveUpShare = register(&Metric{Name: "gave_up_share", Unit: Ratio, Better: stats.LowerIsBetter, Proportion: true, JSONDecimals: 4, Detail: true, Added: trade,
		Missing: "no operations", ShedReason: TheWork, value: share(func(r *sim.Result) int { return r.GaveUp })})
	// GiveUpP50, GiveUpP99 and GiveUpMax are percentiles of the time from
	// an operation's start to its giving up, over the operations that gave
	// up: how long until the error reaches the caller's code.
	GiveUpP50 = register(&Metric{Name: "give_up_ms.p50", Column: "give_up_p50_ms", Unit: Milliseconds, Better: stats.LowerIsBetter, Over: OverGaveUp, Detail: true, Added: trade,
		Missing: "nothing gave up", ShedReason: SurvivorRule, value: giveUpPercentile(50)})
	GiveUpP99 = register(&Metric{Name: "give_up_ms.p99", Column: "give_up_p99_ms", Unit: Milliseconds, Better: stats.LowerIsBetter, Over: OverGaveUp, Detail: true, Added: trade,
		Missing: "nothing gave up", ShedReason: SurvivorRule, value: giveUpPercentile(99)})
	// MeanLatency is the mean completion latency, beside the percentiles.
	MeanLatency = register(&Metric{Name: "latency_ms.mean", Column: "mean_ms", Unit: Milliseconds, Better: stats.LowerIsBetter, Over: OverCompleted, Detail: true, Added: trade, JSONDecimals: 4, ShedReason: SurvivorRule,
		value: func(r *sim.Result) (float64, bool) {
			d, ok := r.MeanLatency()
			return ms(d), ok
		}})
	P50 = register(&Metric{Name: "latency_ms.p50", Column: "p50_ms", Unit: Milliseconds, Better: stats.LowerIsBetter, Headline: true, Over: OverCompleted, ShedReason: SurvivorRule,
		value: percentile(50)})
	P95 = register(&Metric{Name: "latency_ms.p95", Column: "p95_ms", Unit: Milliseconds, Better: stats.LowerIsBetter, Over: OverCompleted, ShedReason: SurvivorRule,
		value: percentile(95)})
	P99 = register(&Metric{Name: "latency_ms.p99", Column: "p99_ms", Unit: Milliseconds, Better: stats.LowerIsBetter, Headline: true, Over: OverCompleted, ShedReason: SurvivorRule,
		value: percentile(99)})
	LastCompletion = register(&Metric{Name: "last_completion_ms", Unit: Milliseconds, Better: stats.LowerIsBetter, Headline: true, Over: OverCompleted, ShedReason: SurvivorRule,
		value: func(r *sim.Result) (float64, bool) { return ms(r.LastCompletion), r.Completed > 0 }})
)

// counted registers a metric that only some scenarios report; unless it
// names its own, its column is the first part of its name.
func counted(m *Metric) *Metric {
	m.counted = true
	if m.Column == "" {
		m.Column, _, _ = strings.Cut(m.Name, ".")
	}
	return register(m)
}

// RegisterCounted registers m, a metric that only some scenarios report:
// those whose kinds (or incident) name it among what they count (For's
// counted names); value computes it. Unless m names its own, its column
// is the first part of its name. The packages that declare such metrics
// (kinds, for what servers and workloads count; scenarios, for an
// incident's recovery) register them as they initialise, after this
// package's own metrics, in the order they are written.
func RegisterCounted(m *Metric, value func(r *sim.Result) (float64, bool)) *Metric {
	m.value, m.external = value, true
	return counted(m)
}

// RegisterCount is RegisterCounted for the most common case: a count that
// is the run's counter of the metric's own name.
func RegisterCount(m *Metric) *Metric { return RegisterCounted(m, CounterValue(m.Name, 1)) }

// RegisterShown registers m, a metric reported only for scenarios with a
// policy for which shown holds, such as what one retry control counts
// (hedges, for a policy that hedges); value computes it. As for a counted
// metric, its column is the first part of its name unless it names its own.
func RegisterShown(m *Metric, value func(r *sim.Result) (float64, bool), shown func(*sim.Policy) bool) *Metric {
	m.value, m.shown, m.external = value, shown, true
	if m.Column == "" {
		m.Column, _, _ = strings.Cut(m.Name, ".")
	}
	return register(m)
}

// CounterValue is the value of a metric that is the run's counter called
// name (sim.Counters), in units of unit: 1 for a count, time.Millisecond
// for a duration counter reported in milliseconds. It is 0 when the run
// reported no such counter.
func CounterValue(name string, unit time.Duration) func(*sim.Result) (float64, bool) {
	return func(r *sim.Result) (float64, bool) {
		v, _ := r.Counters.Get(name)
		if unit == 1 {
			return float64(v), true
		}
		return float64(v) / float64(unit), true
	}
}

// mayStop holds for a policy with a control that stops operations for
// reason (machine.Stopper).
func mayStop(reason policies.StopReason) func(*sim.Policy) bool {
	return func(p *sim.Policy) bool { return p.MayStop(reason) }
}

// GaveUpBy returns the metrics of give-ups by reason, one per reason an
// operation of the simulator can stop for.
func GaveUpBy() []*Metric { return append([]*Metric(nil), gaveUpBy...) }

func gaveUpByReason(reason policies.StopReason, shown func(*sim.Policy) bool) *Metric {
	return register(&Metric{Name: "gave_up_by." + reason.String(), Column: "gave_up_by", Unit: Count, Better: stats.LowerIsBetter, ShedReason: GiveUpReason,
		value: count(func(r *sim.Result) int { return r.GaveUpBy[reason] }), shown: shown})
}

// registry holds every metric in registration order, which is the order of
// the declarations above: they do not depend on each other, so Go
// initialises them in the order they are written.
var registry []*Metric

func register(m *Metric) *Metric {
	if m.Column == "" {
		m.Column = m.Name
	}
	if m.JSONDecimals == 0 {
		m.JSONDecimals = -1
	}
	registry = append(registry, m)
	return m
}

// All returns every metric, optional ones included, in registry order.
func All() []*Metric { return append([]*Metric(nil), registry...) }

// For returns the metrics reported for a scenario with the given policies:
// every metric that is not optional, each optional one that applies to one
// of the policies, and those named in counted (the metrics the scenario's
// server and workload count, such as "server.wasted"), in registry order.
func For(ps []sim.Policy, counted ...string) []*Metric {
	var out []*Metric
	for _, m := range registry {
		switch {
		case m.counted:
			if slices.Contains(counted, m.Name) {
				out = append(out, m)
			}
		case m.shown == nil || anyPolicy(ps, m.shown):
			out = append(out, m)
		}
	}
	return out
}

// Default returns the metrics reported for a scenario without optional
// ones.
func Default() []*Metric { return For(nil) }

func anyPolicy(ps []sim.Policy, f func(*sim.Policy) bool) bool {
	for i := range ps {
		if f(&ps[i]) {
			return true
		}
	}
	return false
}

// Lookup finds a metric by name: a registered one, or a part's counter
// (Counter).
func Lookup(name string) (*Metric, bool) {
	for _, m := range registry {
		if m.Name == name {
			return m, true
		}
	}
	if m, ok := lookupByPriority(name); ok {
		return m, true
	}
	return Counter(name)
}

// Names returns the names of every metric, in registry order.
func Names() []string {
	names := make([]string, len(registry))
	for i, m := range registry {
		names[i] = m.Name
	}
	return names
}

// Headline returns the headline metrics of a metric set: the counts of the
// workload's own unit of work (Metric.Work) first, then the others, each
// in the set's order.
func Headline(set []*Metric) []*Metric {
	var lead, out []*Metric
	for _, m := range set {
		switch {
		case !m.Headline:
		case m.Work != NotWork:
			lead = append(lead, m)
		default:
			out = append(out, m)
		}
	}
	return append(lead, out...)
}

package tune

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/retrysim/retrysim/check"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/stats"
	"github.com/retrysim/retrysim/sweep"
)

// Runner runs a plan and returns its results: runs.Execute here, or
// whatever the caller wants (a work check first, progress).
type Runner func(ctx context.Context, plan runs.Plan) (*runs.Results, error)

// Candidate is one point of the space and what it measured.
type Candidate struct {
	// Index is the point's index into each parameter's values; Values
	// the values themselves.
	Index  []int
	Values []int64
	// Label names the point: "budget_percent=10 breaker_failures=5".
	Label string
	// Stage is 0 for the coarse grid, n for the n-th refinement.
	Stage int
	// Invalid says why the point is not a scenario the loader accepts
	// (e.g. a cap below the base); such a point is not run.
	Invalid string
	// Targets are the targets measured at the point, in Result.Targets'
	// order.
	Targets  []TargetResult
	Feasible bool
	// Failing counts the targets that do not hold.
	Failing int
	// Shortfall is how far the point is from feasible: the worst of its
	// targets' shortfalls (TargetResult.Shortfall); 0 at a feasible point,
	// +Inf when a failing target's metric has no value.
	Shortfall float64
	// Objective summarises the objective over the seeds that have it.
	Objective stats.Summary
	// Runs are the point's runs on each scenario, in Result.Scenarios'
	// order.
	Runs []*runs.MultiSeed

	objective, subset []float64 // per seed
}

// TargetResult is one target measured at one point.
type TargetResult struct {
	Target Target
	// Measured is the target's statistic over the seeds (for a target
	// on single runs, the worst seed's value), Bound the value the
	// bound is held to: for a mean, the end of its 95% confidence
	// interval on the failing side; otherwise Measured.
	Measured, Bound float64
	HasValue        bool
	Pass            bool
	// Shortfall is how far Bound falls short of the target's value,
	// relative to it: (value − bound) / |value| for a lower bound,
	// (bound − value) / |value| for an upper one, |bound − value| /
	// |value| for ==; over 1 instead of |value| when the value is 0. It
	// is 0 when the target holds, +Inf when the metric has no value.
	Shortfall float64
	// Summary summarises the metric over the seeds that have it.
	Summary stats.Summary
}

// RunnerUp is a feasible point (or, when none is, a point that fails
// fewest targets) next in rank to the chosen one, and how its objective
// compares with the chosen one's, paired by seed.
type RunnerUp struct {
	*Candidate
	Diff stats.Difference
	// Verdict is Diff's, or stats.NotComparable when the objective is over
	// completed operations and the two complete significantly different
	// numbers (metrics.Comparable).
	Verdict stats.Verdict
}

// TargetCount is how many of the points run met one target.
type TargetCount struct {
	Target Target
	Met    int
}

// Result is what a search found.
type Result struct {
	Policy    string
	Scenarios []string
	Space     []sweep.Param
	// Targets are the targets, one per scenario each applies to.
	Targets   []Target
	Objective Objective
	FirstSeed uint64
	Seeds     int
	// Candidates are every point evaluated, in the order they were.
	Candidates []*Candidate
	// Chosen is the best feasible point, or nil when none is; Closest is
	// then the point of the smallest Shortfall (then fewest failing
	// targets, then best objective).
	Chosen, Closest *Candidate
	RunnersUp       []RunnerUp
	// Met says, for each target, at how many valid points it held: a
	// target met nowhere binds.
	Met []TargetCount
	// Runs counts the simulation runs spent; Stages the stages.
	Runs, Stages int
	// Note says why the search stopped early, if it did.
	Note string

	cut []*scenarios.Scenario // the scenarios with the tuned policy alone
}

// Search solves p: a coarse grid of p.Levels values per parameter, then
// rounds of refinement around the best point so far at half the spacing
// each round, until the spacing is one value and the best point's
// neighbours are all evaluated. Every point runs on the same seeds. The
// same problem gives the same result, whatever runs the plans.
func Search(ctx context.Context, p *Problem, run Runner) (*Result, error) {
	b, err := Begin(p)
	if err != nil {
		return nil, err
	}
	first, err := run(ctx, b.Plan())
	if err != nil {
		return nil, err
	}
	return b.Continue(ctx, first, run)
}

// Searcher is a search under way. Its first stage, the coarse grid and
// most of the work, is a plan the caller runs (here, or in shards merged
// later: runs.Execute); Continue takes its results and runs the
// refinement with run.
type Searcher struct {
	s       *searcher
	plan    runs.Plan
	pending []*Candidate
	steps   []int
}

// Begin checks p (errors are about the input) and plans its first stage.
func Begin(p *Problem) (*Searcher, error) {
	cut, targets, err := p.Prepare()
	if err != nil {
		return nil, err
	}
	res := &Result{Policy: p.Policy, Space: p.Space, Objective: p.Objective, FirstSeed: p.FirstSeed, Seeds: p.Seeds, cut: cut}
	for _, s := range cut {
		res.Scenarios = append(res.Scenarios, s.Name)
		// A parameter the policy does not have fails on every point.
		if _, err := sweep.Apply(s, p.Space, firstValues(p.Space)); err != nil {
			return nil, fmt.Errorf("scenario %s, policy %s: %w", s.Name, p.Policy, err)
		}
	}
	for _, t := range targets {
		for j, name := range res.Scenarios {
			if t.Scenario != "" && t.Scenario != name {
				continue
			}
			if !slices.ContainsFunc(cut[j].Metrics(), func(m *metrics.Metric) bool { return m.Name == t.Expectation.Metric }) {
				return nil, fmt.Errorf("target %q (%s): scenario %s does not report %s", t, t.Source, name, t.Expectation.Metric)
			}
			r := t
			r.Scenario = name
			res.Targets = append(res.Targets, r)
		}
	}
	for _, sc := range cut {
		if o := p.Objective; (o.Scenario == "" || o.Scenario == sc.Name) && !slices.Contains(sc.Metrics(), o.Metric) {
			return nil, fmt.Errorf("objective %s: scenario %s does not report %s", o, sc.Name, o.Metric.Name)
		}
	}
	grid, steps := coarse(p.Space, cmp.Or(p.Levels, 5))
	if len(grid) > MaxCandidates {
		return nil, fmt.Errorf("the first stage has %d points; at most %d (fewer levels or parameters)", len(grid), MaxCandidates)
	}
	b := &Searcher{s: &searcher{p: p, cut: cut, res: res, seen: map[string]bool{}}, steps: steps}
	b.plan, b.pending = b.s.stage(grid, 0)
	return b, nil
}

// Plan is the first stage's plan: one group per valid point and scenario.
func (b *Searcher) Plan() runs.Plan { return b.plan }

// Continue measures the first stage's results (of Plan) and refines,
// running each later stage's plan with run.
func (b *Searcher) Continue(ctx context.Context, first *runs.Results, run Runner) (*Result, error) {
	s, res := b.s, b.s.res
	if err := s.absorb(b.plan, b.pending, first); err != nil {
		return nil, err
	}
	res.Stages = 1
	for stage := 1; ; stage++ {
		grid := s.next(b.steps)
		if len(grid) == 0 {
			break
		}
		if len(res.Candidates)+len(grid) > MaxCandidates {
			res.Note = fmt.Sprintf("stopped before stage %d: it would pass %d points", stage, MaxCandidates)
			break
		}
		plan, pending := s.stage(grid, stage)
		if len(plan.Groups) > 0 {
			results, err := run(ctx, plan)
			if err != nil {
				return nil, err
			}
			if err := s.absorb(plan, pending, results); err != nil {
				return nil, err
			}
		}
		res.Stages = stage + 1
	}
	s.finish()
	return res, nil
}

// next is the next stage's grid: the unevaluated points around the best
// one at half the spacing (steps, which it halves), or none when the
// spacing is one value and every neighbour has run.
func (s *searcher) next(steps []int) [][]int {
	for {
		done := !slices.ContainsFunc(steps, func(st int) bool { return st > 1 })
		for i := range steps {
			steps[i] = max(1, (steps[i]+1)/2)
		}
		if grid := s.neighbours(s.incumbent(), steps); len(grid) > 0 || done {
			return grid
		}
	}
}

func firstValues(ps []sweep.Param) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.Values[0]
	}
	return out
}

// coarse is the first stage's grid: levels values of each parameter (all
// of them if it has fewer), evenly spaced by index with both ends, the
// last parameter varying fastest; and each parameter's spacing.
func coarse(ps []sweep.Param, levels int) ([][]int, []int) {
	var axes [][]int
	steps := make([]int, len(ps))
	for i, p := range ps {
		n := len(p.Values)
		l := min(levels, n)
		var idx []int
		for j := range l {
			if l == 1 {
				idx = append(idx, 0)
				break
			}
			idx = append(idx, int(math.Round(float64(j*(n-1))/float64(l-1))))
		}
		axes = append(axes, idx)
		steps[i] = 1
		if l > 1 {
			steps[i] = (n - 1 + l - 2) / (l - 1) // ceil((n−1)/(l−1))
		}
	}
	grid := [][]int{{}}
	for _, ax := range axes {
		var next [][]int
		for _, g := range grid {
			for _, v := range ax {
				next = append(next, append(slices.Clone(g), v))
			}
		}
		grid = next
	}
	return grid, steps
}

type searcher struct {
	p    *Problem
	cut  []*scenarios.Scenario
	res  *Result
	seen map[string]bool
}

func key(idx []int) string { return fmt.Sprint(idx) }

// neighbours are the points within step of c on every axis (−step, 0,
// +step, clipped to the values) not evaluated yet, in grid order.
func (s *searcher) neighbours(c *Candidate, steps []int) [][]int {
	if c == nil {
		return nil
	}
	grid := [][]int{{}}
	for i, st := range steps {
		var next [][]int
		for _, g := range grid {
			for _, d := range []int{-st, 0, st} {
				v := c.Index[i] + d
				if v < 0 || v >= len(s.p.Space[i].Values) {
					continue
				}
				next = append(next, append(slices.Clone(g), v))
			}
		}
		grid = next
	}
	return slices.DeleteFunc(grid, func(idx []int) bool { return s.seen[key(idx)] })
}

// stage is the plan of the points of grid on every scenario, and the
// valid points it runs, in its groups' order.
func (s *searcher) stage(grid [][]int, stage int) (runs.Plan, []*Candidate) {
	var plan runs.Plan
	var run []*Candidate
	for _, idx := range grid {
		s.seen[key(idx)] = true
		c := &Candidate{Index: idx, Stage: stage}
		var labels []string
		for i, q := range s.p.Space {
			c.Values = append(c.Values, q.Values[idx[i]])
			labels = append(labels, q.Name+"="+q.Label(idx[i]))
		}
		c.Label = strings.Join(labels, " ")
		s.res.Candidates = append(s.res.Candidates, c)
		var groups []runs.Group
		for _, sc := range s.cut {
			applied, err := sweep.Apply(sc, s.p.Space, c.Values)
			if err == nil {
				err = applied.Validate()
			}
			if err != nil {
				c.Invalid = fmt.Sprintf("%s: %v", sc.Name, err)
				break
			}
			groups = append(groups, runs.Group{Scenario: applied, First: s.p.FirstSeed, Seeds: s.p.Seeds, Label: c.Label + " on " + sc.Name})
		}
		if c.Invalid == "" {
			plan.Groups = append(plan.Groups, groups...)
			run = append(run, c)
		}
	}
	return plan, run
}

// absorb measures the points run with the results of their plan.
func (s *searcher) absorb(plan runs.Plan, run []*Candidate, results *runs.Results) error {
	if results == nil || len(results.Groups) != len(plan.Groups) {
		return fmt.Errorf("the results do not fit the plan of %d groups", len(plan.Groups))
	}
	for i, c := range run {
		for j := range s.cut {
			ms := results.Groups[i*len(s.cut)+j].Runs
			if ms == nil {
				return fmt.Errorf("no runs for %s", plan.Groups[i*len(s.cut)+j].Label)
			}
			c.Runs = append(c.Runs, ms)
		}
		s.measure(c)
	}
	s.res.Runs += len(plan.Groups) * s.p.Seeds
	return nil
}

// measure evaluates the targets and the objective at c.
func (s *searcher) measure(c *Candidate) {
	for _, t := range s.res.Targets {
		ms := c.Runs[slices.Index(s.res.Scenarios, t.Scenario)]
		m, _ := metrics.Lookup(t.Expectation.Metric) // the parser checked it
		c.Targets = append(c.Targets, measureTarget(t, s.p.FirstSeed, ms.Series(0, m)))
	}
	c.tally()
	c.objective = s.pooled(c, s.p.Objective.Metric)
	if sub := s.p.Objective.Metric.Subset(); sub != nil {
		c.subset = s.pooled(c, sub)
	}
	c.Objective = report.SummarizeSeries(s.p.Objective.Metric, c.objective)
}

// tally counts c's failing targets and takes its worst shortfall.
func (c *Candidate) tally() {
	c.Failing, c.Shortfall = 0, 0
	for _, r := range c.Targets {
		if !r.Pass {
			c.Failing++
		}
		c.Shortfall = max(c.Shortfall, r.Shortfall)
	}
	c.Feasible = c.Failing == 0
}

// pooled is m on each seed: on the objective's scenario, or the mean over
// the scenarios (NaN where one has no value).
func (s *searcher) pooled(c *Candidate, m *metrics.Metric) []float64 {
	if name := s.p.Objective.Scenario; name != "" {
		return c.Runs[slices.Index(s.res.Scenarios, name)].Series(0, m)
	}
	out := make([]float64, s.p.Seeds)
	for _, ms := range c.Runs {
		for i, v := range ms.Series(0, m) {
			out[i] += v / float64(len(c.Runs))
		}
	}
	return out
}

// measureTarget holds t to the values of its metric on seeds from first:
// a mean by the end of its 95% confidence interval on the failing side,
// another statistic as 'retrysim check' measures it, a bound on single
// runs on every seed (Measured is then the worst seed's value).
func measureTarget(t Target, first uint64, series []float64) TargetResult {
	r := holdTarget(t, first, series)
	r.Shortfall = shortfall(r)
	return r
}

// shortfall is r's Shortfall: how far its bound falls short of the
// target's value, relative to the value.
func shortfall(r TargetResult) float64 {
	switch e := r.Target.Expectation; {
	case r.Pass:
		return 0
	case !r.HasValue || math.IsNaN(r.Bound):
		return math.Inf(1)
	default:
		gap := math.Abs(r.Bound - e.Value)
		switch e.Op {
		case ">=", ">":
			gap = max(e.Value-r.Bound, 0)
		case "<=", "<":
			gap = max(r.Bound-e.Value, 0)
		}
		if e.Value != 0 {
			gap /= math.Abs(e.Value)
		}
		return gap
	}
}

// holdTarget is measureTarget without the shortfall.
func holdTarget(t Target, first uint64, series []float64) TargetResult {
	e := t.Expectation
	m, _ := metrics.Lookup(e.Metric) // the parser checked it
	r := TargetResult{Target: t, Summary: report.SummarizeSeries(m, series)}
	if !e.OverSeeds() {
		r.HasValue, r.Pass = true, true
		for i := range series {
			one := check.Evaluate(e, "", first+uint64(i), series[i:i+1])
			if !one.HasValue {
				r.HasValue, r.Pass = false, false
				return r
			}
			if i == 0 || worse(e.Op, one.Measured, r.Measured) {
				r.Measured = one.Measured
			}
			r.Pass = r.Pass && one.Pass
		}
		r.Bound = r.Measured
		return r
	}
	cr := check.Evaluate(e, "", first, series)
	r.Measured, r.Bound, r.HasValue, r.Pass = cr.Measured, cr.Measured, cr.HasValue, cr.Pass
	if e.Stat == scenarios.StatMean && r.HasValue {
		lo, hi := metrics.Round(r.Summary.CILow, 4), metrics.Round(r.Summary.CIHigh, 4)
		switch e.Op {
		case ">=", ">":
			r.Bound = lo
		case "<=", "<":
			r.Bound = hi
		}
		r.Pass = e.Op.Holds(lo, e.Value) && e.Op.Holds(hi, e.Value)
	}
	return r
}

// worse reports whether a is further than b from meeting a bound of op.
func worse(op scenarios.Op, a, b float64) bool {
	if op == ">=" || op == ">" {
		return a < b
	}
	return a > b
}

// Rank orders valid points of r, best first, as the search does to pick
// Chosen, Closest and the runners-up: feasible first, then the smaller
// Shortfall (the worst target's shortfall relative to its value), then
// fewer failing targets, then the better objective (points without one
// last), then grid order. It is a total order on distinct points, with
// r's chosen or closest point first.
func (r *Result) Rank(a, b *Candidate) int {
	if a.Feasible != b.Feasible {
		if a.Feasible {
			return -1
		}
		return 1
	}
	if a.Shortfall != b.Shortfall {
		return cmp.Compare(a.Shortfall, b.Shortfall)
	}
	if a.Failing != b.Failing {
		return cmp.Compare(a.Failing, b.Failing)
	}
	na, nb := a.Objective.N == 0, b.Objective.N == 0
	if na != nb {
		if na {
			return 1
		}
		return -1
	}
	if !na && a.Objective.Mean != b.Objective.Mean {
		if r.Objective.Metric.Better == stats.HigherIsBetter {
			return cmp.Compare(b.Objective.Mean, a.Objective.Mean)
		}
		return cmp.Compare(a.Objective.Mean, b.Objective.Mean)
	}
	return slices.Compare(a.Index, b.Index)
}

// ranked is every valid point, best first.
func (s *searcher) ranked() []*Candidate {
	var out []*Candidate
	for _, c := range s.res.Candidates {
		if c.Invalid == "" {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, s.res.Rank)
	return out
}

// incumbent is the point refinement is around: the best so far.
func (s *searcher) incumbent() *Candidate {
	if r := s.ranked(); len(r) > 0 {
		return r[0]
	}
	return nil
}

// finish picks the chosen point, the runners-up and counts the targets met.
func (s *searcher) finish() {
	ranked := s.ranked()
	res := s.res
	for i, t := range res.Targets {
		n := 0
		for _, c := range ranked {
			if c.Targets[i].Pass {
				n++
			}
		}
		res.Met = append(res.Met, TargetCount{Target: t, Met: n})
	}
	if len(ranked) == 0 {
		return
	}
	best := ranked[0]
	if best.Feasible {
		res.Chosen = best
	} else {
		res.Closest = best
	}
	m := s.p.Objective.Metric
	for _, c := range ranked[1:] {
		if len(res.RunnersUp) == cmp.Or(s.p.Runners, 3) || c.Feasible != best.Feasible {
			break
		}
		r := RunnerUp{Candidate: c, Diff: stats.Paired(best.objective, c.objective, m.Better)}
		r.Verdict = r.Diff.Verdict
		if sub := m.Subset(); sub != nil && !metrics.Comparable(m, stats.Paired(best.subset, c.subset, sub.Better).Verdict, r.Verdict) {
			r.Verdict = stats.NotComparable
		}
		res.RunnersUp = append(res.RunnersUp, r)
	}
}

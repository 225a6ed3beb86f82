package runs

import (
	"context"
	"fmt"
	"strings"

	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/sweep"
)

// Axis is one swept parameter.
type Axis struct {
	Name string
	// Title describes the parameter on a plot's axis, e.g. "capacity:
	// requests admitted per window"; Name when empty.
	Title string
	Unit  string // "" for counts, "ms" for durations
	// Labels are the values as the user writes them ("500ms"); Values the
	// same as numbers (durations in milliseconds).
	Labels []string
	Values []float64
}

// Point is one point of the grid: an index into each axis and every
// policy's metrics on every seed there.
type Point struct {
	Index []int
	Runs  *MultiSeed
}

// Sweep is the result of a parameter sweep. Points are in grid order, the
// last axis varying fastest.
type Sweep struct {
	Scenario  string
	FirstSeed uint64
	Seeds     int
	Policies  []string
	Axes      []Axis
	Points    []Point
}

// RunSweep runs every policy of s on k seeds from first at every point of
// the grid the parameters span (the last parameter varies fastest): it
// executes SweepPlan here. Each point runs its seeds and policies in
// parallel; results merge in a fixed order. done, if set, is called after
// every simulation run.
func RunSweep(ctx context.Context, s *scenarios.Scenario, ps []sweep.Param, first uint64, k int, done func()) (*Sweep, error) {
	plan, err := SweepPlan(s, ps, first, k)
	if err != nil {
		return nil, err
	}
	var mode Mode
	if done != nil {
		mode.Each = func(int, int, int, *sim.Result) { done() }
	}
	res, err := Execute(ctx, plan, mode)
	if err != nil {
		return nil, err
	}
	return SweepOf(s, ps, first, k, res)
}

// SweepPoint is one point of a sweep's grid before it runs.
type SweepPoint struct {
	// Label names the point, e.g. "clients=10 capacity=4".
	Label string
	// Scenario is s with the point's values set.
	Scenario *scenarios.Scenario
	Index    []int
}

// SweepPoints returns the points of the grid the parameters span, in grid
// order (the last parameter varies fastest), with s's copy at each.
func SweepPoints(s *scenarios.Scenario, ps []sweep.Param) ([]SweepPoint, error) {
	if len(ps) == 0 || len(ps) > sweep.MaxParams {
		return nil, fmt.Errorf("sweep needs 1 or %d parameters, got %d", sweep.MaxParams, len(ps))
	}
	if len(ps) == 2 && ps[0].Name == ps[1].Name {
		return nil, fmt.Errorf("parameter %s is given twice", ps[0].Name)
	}
	total := 1
	for _, p := range ps {
		total *= len(p.Values)
	}
	if total > sweep.MaxPoints {
		return nil, fmt.Errorf("%d points; at most %d", total, sweep.MaxPoints)
	}
	var out []SweepPoint
	idx := make([]int, len(ps))
	for range total {
		values := make([]int64, len(ps))
		for i, p := range ps {
			values[i] = p.Values[idx[i]]
		}
		sc, err := sweep.Apply(s, ps, values)
		if err != nil {
			return nil, err
		}
		out = append(out, SweepPoint{Label: pointLabel(ps, idx), Scenario: sc, Index: append([]int(nil), idx...)})
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(ps[i].Values) {
				break
			}
			idx[i] = 0
		}
	}
	return out, nil
}

// sweepOf builds the sweep of s over ps, taking the runs at point i (in
// grid order) from collect.
func sweepOf(s *scenarios.Scenario, ps []sweep.Param, first uint64, k int, collect func(i int, pt SweepPoint) (*MultiSeed, error)) (*Sweep, error) {
	points, err := SweepPoints(s, ps)
	if err != nil {
		return nil, err
	}
	out := &Sweep{Scenario: s.Name, FirstSeed: first, Seeds: k}
	for _, p := range s.Policies {
		out.Policies = append(out.Policies, p.Name)
	}
	for _, p := range ps {
		ax := Axis{Name: p.Name, Title: p.Title(), Unit: p.Unit()}
		for i := range p.Values {
			ax.Labels = append(ax.Labels, p.Label(i))
			ax.Values = append(ax.Values, p.Number(i))
		}
		out.Axes = append(out.Axes, ax)
	}
	for i, pt := range points {
		runs, err := collect(i, pt)
		if err != nil {
			return nil, fmt.Errorf("at %s: %w", pt.Label, err)
		}
		runs.Scenario = s.Name
		out.Points = append(out.Points, Point{Index: pt.Index, Runs: runs})
	}
	return out, nil
}

func pointLabel(ps []sweep.Param, idx []int) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Name + "=" + p.Label(idx[i])
	}
	return strings.Join(parts, " ")
}

// SweepPlan is the plan of a sweep of s over ps on k seeds from first: one
// group per point of the grid, in grid order, labelled with the point. It
// checks every point first as the loader checks a file (sweep.Validate).
func SweepPlan(s *scenarios.Scenario, ps []sweep.Param, first uint64, k int) (Plan, error) {
	if err := sweep.Validate(s, ps); err != nil {
		return Plan{}, err
	}
	points, err := SweepPoints(s, ps)
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{Groups: make([]Group, len(points))}
	for i, pt := range points {
		plan.Groups[i] = Group{Scenario: pt.Scenario, First: first, Seeds: k, Label: pt.Label}
	}
	return plan, nil
}

// SweepOf is the sweep whose plan (SweepPlan, with the same arguments)
// gave res.
func SweepOf(s *scenarios.Scenario, ps []sweep.Param, first uint64, k int, res *Results) (*Sweep, error) {
	return sweepOf(s, ps, first, k, func(i int, _ SweepPoint) (*MultiSeed, error) {
		if i >= len(res.Groups) || res.Groups[i].Runs == nil {
			return nil, fmt.Errorf("no runs for point %d", i+1)
		}
		return res.Groups[i].Runs, nil
	})
}

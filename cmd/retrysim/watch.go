package main

import (
	"context"

	"github.com/retrysim/retrysim/cmd/retrysim/internal/progress"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
)

// A watch draws one progress bar on stderr, on a terminal only, over the
// runs of a command. With many runs (progress.MinRuns) it counts them;
// with few, it counts engine events against the work estimate's bound, so
// that a long single run (or check) does not run silently. A run that
// ends below its bound moves the bar forward by the rest of its bound.
type watch struct {
	bar    *progress.Bar
	events bool
}

// startWatch starts the bar for the runs of plan (a Plot group's seeds and
// its timeline run); description names them.
func startWatch(c *call, description string, plan runs.Plan) *watch {
	total := plan.Runs()
	events := 0.0
	for _, gr := range plan.Groups {
		k := gr.Seeds
		if gr.Plot {
			k++
		}
		for p := range gr.Scenario.Policies {
			events += float64(k) * policyEvents(gr.Scenario, p)
		}
	}
	w := c.stderr
	if total >= progress.MinRuns {
		return &watch{bar: progress.New(w, total, description)}
	}
	return &watch{bar: progress.NewEvents(w, events, description), events: true}
}

// context returns ctx carrying the watch to the runs of s (one of those
// of the plan).
func (w *watch) context(ctx context.Context, s *scenarios.Scenario) context.Context {
	if !w.bar.Active() {
		return ctx
	}
	if !w.events {
		return runs.WithProgress(ctx, &runs.Progress{Done: func(int, int) { w.bar.Add() }})
	}
	bounds := make([]int64, len(s.Policies))
	for p := range bounds {
		bounds[p] = int64(min(policyEvents(s, p), 1<<62))
	}
	return runs.WithProgress(ctx, &runs.Progress{
		Events: func(_, more int) { w.bar.AddN(int64(more)) },
		Done:   func(p, events int) { w.bar.AddN(bounds[p] - int64(events)) },
	})
}

// done removes the bar.
func (w *watch) done() { w.bar.Done() }

// policyEvents bounds the engine events of one run of policy p of s: the
// work estimate of s with that policy alone.
func policyEvents(s *scenarios.Scenario, p int) float64 {
	one := *s
	one.Policies = s.Policies[p : p+1]
	return runs.EstimateOf(&one, 1).Events
}

package runs

import (
	"context"
	"fmt"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// The work estimate's prediction: where EstimateOf bounds the events from
// the scenario's limits, a pilot run predicts them. docs/scenarios.md ("How
// much work a run does") explains it.
const (
	// PilotOperations is the size of a pilot: a scenario of up to this many
	// operations is piloted whole, a bigger one scaled down to about this.
	PilotOperations = 10_000
	// PilotEvents bounds the engine events of a pilot, all policies
	// together (about a quarter of a second): past it the pilot stops and
	// runs again a tenth as large, and past it again the estimate keeps
	// its bound.
	PilotEvents = 1_000_000
	// PlanPilotEvents bounds the events of all the pilots of a plan (a
	// sweep pilots every point): past it the estimate keeps its bound.
	PlanPilotEvents = 4_000_000
)

// Pilot is what a pilot run of a scenario predicts.
type Pilot struct {
	// Events is the predicted engine events of one seed, all policies
	// together; 0 when there is no prediction (then Why says why).
	Events float64
	// Factor is the share of the scenario's operations the pilot ran: 1
	// for a pilot at full size.
	Factor float64
	Why    string
	used   int  // the events the pilot processed
	over   bool // it ran past its budget
}

// RunPilot runs every policy of s once on its seed, on s itself when it
// has at most PilotOperations operations, else on a copy of s scaled down
// to about that many (kinds.Scale: clients and every shared capacity by the
// same factor), and predicts the events of a run of s as the pilot's
// divided by the factor. A pilot that runs past PilotEvents runs again a
// tenth as large. Deterministic: the same s gives the same Pilot.
func RunPilot(ctx context.Context, s *scenarios.Scenario) Pilot {
	return pilotWithin(ctx, s, PilotEvents)
}

// pilotWithin is RunPilot within budget events, both tries together.
func pilotWithin(ctx context.Context, s *scenarios.Scenario, budget int) Pilot {
	p := runPilot(ctx, s, PilotOperations, budget)
	if p.over && s.Operations() > PilotOperations/10 && budget > p.used {
		used := p.used
		p = runPilot(ctx, s, PilotOperations/10, budget-used)
		p.used += used
	}
	return p
}

// runPilot pilots s at about size operations, within budget events.
func runPilot(ctx context.Context, s *scenarios.Scenario, size, budget int) Pilot {
	ops := s.Operations()
	pilot := s
	if ops > size {
		var err error
		if pilot, err = scaledDown(s, float64(size)/float64(ops)); err != nil {
			return Pilot{Why: err.Error()}
		}
	}
	factor := float64(pilot.Operations()) / float64(max(ops, 1))
	if factor <= 0 {
		return Pilot{Why: "the scaled-down scenario has no operations"}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := 0
	past := func(used int) Pilot {
		return Pilot{Why: fmt.Sprintf("the pilot ran past %s events", count(float64(budget))), used: used, over: true}
	}
	var runner sim.Runner
	for p := range pilot.Policies {
		cfg := pilot.Config(p, s.Seed)
		seen := 0 // events of this run so far
		cfg.OnProgress = func(n int) {
			if seen = n; events+n > budget {
				cancel()
			}
		}
		r, err := runner.RunContext(ctx, cfg)
		switch {
		case events+seen > budget:
			return past(events + seen)
		case err != nil:
			return Pilot{Why: "the pilot failed: " + err.Error(), used: events + seen}
		}
		events += r.Events
	}
	if events > budget {
		return past(events)
	}
	return Pilot{Events: float64(events) / factor, Factor: factor, used: events}
}

// scaledDown returns a copy of s with its clients and capacities
// multiplied by f, or by a larger factor (4 f, 16 f; at most 1) where a
// count would be too few to scale (a queue's 10 workers by 0.001), or why
// it cannot be scaled.
func scaledDown(s *scenarios.Scenario, f float64) (*scenarios.Scenario, error) {
	var err error
	for _, try := range []float64{f, min(4*f, 1), min(16*f, 1)} {
		var parts kinds.Parts
		if parts, err = kinds.Scale(s.Parts(), try); err == nil {
			c := *s
			c.Server, c.Workload, c.Policies = parts.Server, parts.Workload, parts.Policies
			if err = c.Workload.Validate(); err != nil {
				return nil, err
			}
			return &c, nil
		}
	}
	return nil, err
}

// Predict returns e with the prediction of pilot runs for the plan's runs
// (shard sh's part when sh is not nil): each group's seeds, and its
// timeline run, times the events its scenario's pilot predicts. When a
// group's scenario has no prediction, or the pilots of all groups run
// past PlanPilotEvents, e keeps its bound and says why. The pilots run
// one after another, about a second at most in all.
func (p Plan) Predict(ctx context.Context, e Estimate, sh *Shard) Estimate {
	var owned [][]int
	if sh != nil {
		owned = OwnedSeeds(p.Groups, *sh)
	}
	pilots := map[*scenarios.Scenario]Pilot{}
	total, cost, least := 0.0, 0.0, 1.0
	left := PlanPilotEvents
	for g, gr := range p.Groups {
		n, plot := gr.Seeds, gr.Plot
		if sh != nil {
			n = len(owned[g])
			plot = plot && n > 0 && owned[g][0] == 0
		}
		if plot {
			n++
		}
		if n == 0 {
			continue
		}
		pl, ok := pilots[gr.Scenario]
		if !ok {
			if left <= 0 {
				e.NoPilot = fmt.Sprintf("the pilots of the plan ran past %s events", count(PlanPilotEvents))
				return e
			}
			budget := min(PilotEvents, left)
			pl = pilotWithin(ctx, gr.Scenario, budget)
			if left -= pl.used; pl.over && budget < PilotEvents {
				pl.Why = fmt.Sprintf("the pilots of the plan ran past %s events", count(PlanPilotEvents))
			}
			pilots[gr.Scenario] = pl
		}
		if pl.Events == 0 {
			e.NoPilot = pl.Why
			return e
		}
		total += float64(n) * pl.Events
		cost += float64(n) * pl.Events * NsPerEventAt(gr.Scenario.Operations())
		least = min(least, pl.Factor)
	}
	e.Predicted, e.PredictedCost, e.PilotFactor = total, cost, least
	return e
}

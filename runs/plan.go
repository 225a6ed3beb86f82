package runs

import (
	"context"
	"fmt"

	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// Plan is the work of a command: groups of runs, in order. A command
// builds it from its flags and scenario file alone, runs nothing to build
// it, and hands it to Execute; the same plan is run whole, one shard of it,
// or taken from the merged shards, and gives the same Results.
type Plan struct {
	Groups []Group
	// Unsplit, if set, says why the plan cannot be split into shards
	// (it is a usage error to try); its groups may then keep whole
	// results (Group.Whole).
	Unsplit string
}

// Mode says where Execute takes a plan's runs from: the zero Mode runs
// them here.
type Mode struct {
	// Shard, if set, runs only that shard's part (Results.Parts).
	Shard *Shard
	// Merged, if set, takes the runs from the merged shards.
	Merged *Merged
	// Context, if set, gives the context of group g's runs here (for
	// progress; see WithProgress).
	Context func(ctx context.Context, g *Group) context.Context
	// Each, if set, is called for every run here, from worker goroutines,
	// for distinct (group, seed, policy).
	Each func(g, seed, policy int, r *sim.Result)
	// Done, if set, is called after each run of a shard, from worker
	// goroutines.
	Done func()
}

// Results are what Execute returns for a plan: one GroupResult per group,
// or, for a shard, its part of each group.
type Results struct {
	Groups []GroupResult
	Parts  []GroupPart
}

// GroupResult is what a group ran: its metrics on every seed, and its
// plot data for a Plot group (whose Runs are then Plot.Runs) or every
// policy's whole result for a Whole one.
type GroupResult struct {
	Runs  *MultiSeed
	Plot  *PlotData
	Whole []sim.Result
}

// Execute runs plan as mode says. Where the runs come from changes nothing
// in the results: the merged shards of a plan give what running it whole
// gives. Errors of a labelled group name its label.
func Execute(ctx context.Context, plan Plan, mode Mode) (*Results, error) {
	switch {
	case mode.Shard != nil && plan.Unsplit != "":
		return nil, fmt.Errorf("%s", plan.Unsplit)
	case mode.Shard != nil:
		parts, err := RunShard(ctx, plan.Groups, *mode.Shard, mode.Done)
		if err != nil {
			return nil, err
		}
		return &Results{Parts: parts}, nil
	case mode.Merged != nil:
		return mode.Merged.results(plan)
	}
	res := &Results{Groups: make([]GroupResult, len(plan.Groups))}
	for g := range plan.Groups {
		gr := &plan.Groups[g]
		gctx := ctx
		if mode.Context != nil {
			gctx = mode.Context(ctx, gr)
		}
		var each func(seed, policy int, r *sim.Result)
		if mode.Each != nil {
			each = func(seed, policy int, r *sim.Result) { mode.Each(g, seed, policy, r) }
		}
		r, err := runGroup(gctx, gr, each)
		if err != nil {
			if gr.Label != "" {
				err = fmt.Errorf("at %s: %w", gr.Label, err)
			}
			return nil, err
		}
		res.Groups[g] = r
	}
	return res, nil
}

// runGroup runs one group here.
func runGroup(ctx context.Context, gr *Group, each func(seed, policy int, r *sim.Result)) (GroupResult, error) {
	s := gr.Scenario
	switch {
	case gr.Whole:
		whole := make([]sim.Result, len(s.Policies))
		err := Seeds(ctx, s, gr.First, 1, 0, func(seed, p int, r *sim.Result) {
			whole[p] = *r
			if each != nil {
				each(seed, p, r)
			}
		})
		if err != nil {
			return GroupResult{}, err
		}
		return GroupResult{Whole: whole}, nil
	case gr.Plot:
		hists := newLatencyHists(len(s.Policies))
		ms, err := Collect(ctx, s, gr.First, gr.Seeds, func(seed, p int, r *sim.Result) {
			hists.add(p, r)
			if each != nil {
				each(seed, p, r)
			}
		})
		if err != nil {
			return GroupResult{}, err
		}
		timelines, err := recordTimelines(ctx, s, gr.First, gr.Bucket)
		if err != nil {
			return GroupResult{}, err
		}
		d := plotData(s, ms, hists.h, timelines, gr.Bucket)
		return GroupResult{Runs: ms, Plot: d}, nil
	}
	ms, err := Collect(ctx, s, gr.First, gr.Seeds, each)
	if err != nil {
		return GroupResult{}, err
	}
	return GroupResult{Runs: ms}, nil
}

// results takes plan's results from the merged shards, which must hold
// exactly its groups.
func (m *Merged) results(plan Plan) (*Results, error) {
	if plan.Unsplit != "" {
		return nil, fmt.Errorf("the command does not shard: %s", plan.Unsplit)
	}
	if len(plan.Groups) != len(m.parts) {
		return nil, fmt.Errorf("the shards hold %d group(s) of runs, but the command plans %d", len(m.parts), len(plan.Groups))
	}
	res := &Results{Groups: make([]GroupResult, len(plan.Groups))}
	for g, gr := range plan.Groups {
		var err error
		if gr.Plot {
			var d *PlotData
			if d, err = m.PlotData(g, gr); err == nil {
				res.Groups[g] = GroupResult{Runs: d.Runs, Plot: d}
			}
		} else {
			res.Groups[g].Runs, err = m.MultiSeed(g, gr)
		}
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Work estimates running the whole plan: each group's seeds, whose
// metrics are kept, and for a Plot group the latency histograms and the
// timeline run of every policy.
func (p Plan) Work() Estimate {
	var est Estimate
	for _, gr := range p.Groups {
		e := seedsWork(gr.Scenario, gr.Seeds)
		if gr.Plot {
			e = e.Add(EstimateOf(gr.Scenario, 1))
			e.Kept += histogramsKept(gr.Scenario)
		}
		est = est.Add(e)
	}
	return est
}

// ShardWork estimates shard sh's part of the plan, and counts its seeds
// and the plan's.
func (p Plan) ShardWork(sh Shard) (est Estimate, seeds, all int) {
	owned := OwnedSeeds(p.Groups, sh)
	for g, gr := range p.Groups {
		s, n := gr.Scenario, len(owned[g])
		seeds += n
		all += gr.Seeds
		if n == 0 {
			continue
		}
		e := seedsWork(s, n)
		if gr.Plot {
			if owned[g][0] == 0 {
				e = e.Add(EstimateOf(s, 1))
			}
			e.Kept += histogramsKept(s)
		}
		est = est.Add(e)
	}
	return est, seeds, all
}

// Runs counts the runs of the whole plan, timelines included.
func (p Plan) Runs() int {
	n := 0
	for _, gr := range p.Groups {
		k := gr.Seeds
		if gr.Plot {
			k++
		}
		n += k * len(gr.Scenario.Policies)
	}
	return n
}

// seedsWork estimates k seeds of s whose metrics are kept: one float64
// per metric reported (MultiSeed).
func seedsWork(s *scenarios.Scenario, k int) Estimate {
	e := EstimateOf(s, k)
	e.Kept = float64(e.Runs) * float64(8*len(s.Metrics()))
	return e
}

// histogramsKept is the memory of the latency histograms of s's policies.
func histogramsKept(s *scenarios.Scenario) float64 {
	return 8 * stats.MaxHistogramCounters * float64(len(s.Policies))
}

package runs

import (
	"context"
	"errors"
	"fmt"
	"github.com/retrysim/retrysim/stats"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// MaxShards bounds the number of shards a run is split into.
const MaxShards = 100_000

// Shard is part Index of Count of a command's work, 0 ≤ Index < Count.
//
// The work is a list of groups (a scenario on a range of seeds: one for
// compare, plot and report, one per point for sweep, one per checked
// scenario and per baseline for check), and each group's seeds are units:
// the units are numbered through the groups in order, unit u being seed
// index u − (units of the groups before). Shard I runs every policy on
// the units u with u mod Count = I, so consecutive seeds, which cost about
// the same, go to different shards and the shards take about equal time.
// The timelines of the plots (one extra run per policy on a group's first
// seed) go to the shard that owns that seed.
type Shard struct{ Index, Count int }

// ParseShard reads "I/N", shard I of N with 0 ≤ I < N.
func ParseShard(text string) (Shard, error) {
	i, n, ok := strings.Cut(text, "/")
	if !ok {
		return Shard{}, fmt.Errorf("want I/N (shard I of N, counting from 0), got %q", text)
	}
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("want I/N with whole numbers, got %q", text)
	}
	sh := Shard{index, count}
	return sh, sh.Validate()
}

// Validate checks 1 ≤ Count ≤ MaxShards and 0 ≤ Index < Count.
func (sh Shard) Validate() error {
	switch {
	case sh.Count < 1 || sh.Count > MaxShards:
		return fmt.Errorf("the number of shards must be between 1 and %d, got %d", MaxShards, sh.Count)
	case sh.Index < 0 || sh.Index >= sh.Count:
		return fmt.Errorf("shard index must be between 0 and %d (shards count from 0), got %d", sh.Count-1, sh.Index)
	}
	return nil
}

func (sh Shard) String() string { return fmt.Sprintf("%d/%d", sh.Index, sh.Count) }

// Group is one set of runs a command needs: every policy of Scenario on
// seeds First, First+1, …, First+Seeds−1.
type Group struct {
	Scenario *scenarios.Scenario
	First    uint64
	Seeds    int
	// Label tells groups of the same scenario apart: the point of a sweep.
	Label string
	// Plot asks for what the plots need too (CollectPlotData): the
	// latency histograms over its seeds and a timeline per policy on
	// the first seed, with buckets of Bucket.
	Plot   bool
	Bucket time.Duration
	// Whole asks for every policy's whole result on seed First (Seeds
	// is 1), in a plan that does not shard (Plan.Unsplit).
	Whole bool
}

// OwnedSeeds returns, for each group, the seed indexes shard sh runs, in
// ascending order.
func OwnedSeeds(groups []Group, sh Shard) [][]int {
	out := make([][]int, len(groups))
	unit := 0
	for g, gr := range groups {
		out[g] = []int{}
		// The first unit of this group that sh owns, then every Count-th.
		s := (sh.Index - unit%sh.Count + sh.Count) % sh.Count
		for ; s < gr.Seeds; s += sh.Count {
			out[g] = append(out[g], s)
		}
		unit += gr.Seeds
	}
	return out
}

// RunShard runs shard sh's part of groups and returns it, one GroupPart
// per group (with no runs where the shard owns none of the group's
// seeds). done, if set, is called after each run of a seed and policy,
// from worker goroutines.
func RunShard(ctx context.Context, groups []Group, sh Shard, done func()) ([]GroupPart, error) {
	if err := sh.Validate(); err != nil {
		return nil, err
	}
	owned := OwnedSeeds(groups, sh)
	parts := make([]GroupPart, len(groups))
	for g, gr := range groups {
		s := gr.Scenario
		part := newGroupPart(gr)
		seeds := owned[g]
		m := NewMultiSeed(s, gr.First, len(seeds))
		hists := newLatencyHists(len(s.Policies)) // over the shard's seeds
		err := seedList(ctx, s, gr.First, len(seeds), seeds, 0, func(i, p int, r *sim.Result) {
			m.Add(i, p, r)
			if gr.Plot {
				hists.add(p, r)
			}
			if done != nil {
				done()
			}
		})
		if err != nil {
			if gr.Label != "" {
				err = fmt.Errorf("at %s: %w", gr.Label, err)
			}
			return nil, err
		}
		for i, seed := range seeds {
			run := SeedRun{Seed: seed, Values: make([]Floats, len(s.Policies))}
			for p := range s.Policies {
				run.Values[p] = make(Floats, len(m.Metrics))
				for x := range m.Metrics {
					run.Values[p][x] = m.values[p][x][i]
				}
			}
			part.Runs = append(part.Runs, run)
		}
		if gr.Plot {
			for _, h := range hists.h {
				part.Completions = append(part.Completions, h.Counts())
			}
		}
		if gr.Plot && len(seeds) > 0 && seeds[0] == 0 {
			if part.Timelines, err = recordTimelines(ctx, s, gr.First, gr.Bucket); err != nil {
				return nil, err
			}
		}
		parts[g] = part
	}
	return parts, nil
}

func newGroupPart(gr Group) GroupPart {
	part := GroupPart{Scenario: gr.Scenario.Name, Label: gr.Label, FirstSeed: gr.First, Seeds: gr.Seeds, Plot: gr.Plot, Runs: []SeedRun{}}
	if gr.Plot {
		part.Bucket = gr.Bucket
	}
	for _, p := range gr.Scenario.Policies {
		part.Policies = append(part.Policies, p.Name)
	}
	for _, m := range gr.Scenario.Metrics() {
		part.Metrics = append(part.Metrics, m.Name)
	}
	return part
}

// differs says how part's description differs from want's, or "".
func (part *GroupPart) differs(want *GroupPart) string {
	switch {
	case part.Scenario != want.Scenario:
		return fmt.Sprintf("scenario %q, want %q", part.Scenario, want.Scenario)
	case part.Label != want.Label:
		return fmt.Sprintf("point %q, want %q", part.Label, want.Label)
	case part.FirstSeed != want.FirstSeed || part.Seeds != want.Seeds:
		return fmt.Sprintf("%d seeds from %d, want %d from %d", part.Seeds, part.FirstSeed, want.Seeds, want.FirstSeed)
	case part.Plot != want.Plot || part.Bucket != want.Bucket:
		return fmt.Sprintf("plot data %v (bucket %v), want %v (bucket %v)", part.Plot, part.Bucket, want.Plot, want.Bucket)
	case !slices.Equal(part.Policies, want.Policies):
		return fmt.Sprintf("policies %q, want %q", part.Policies, want.Policies)
	case !slices.Equal(part.Metrics, want.Metrics):
		return fmt.Sprintf("metrics %q, want %q", part.Metrics, want.Metrics)
	}
	return ""
}

// Merged is the runs of every shard of a command, put together group by
// group. Its methods return what the unsharded command's calls return.
type Merged struct {
	parts [][]GroupPart // [group][shard]
}

// group checks that group g exists and matches gr, and returns its parts.
func (m *Merged) group(g int, gr Group) ([]GroupPart, error) {
	if g >= len(m.parts) {
		return nil, fmt.Errorf("the shards hold %d group(s) of runs; the command needs more (%s)", len(m.parts), gr.Scenario.Name)
	}
	want := newGroupPart(gr)
	for _, part := range m.parts[g] {
		if d := part.differs(&want); d != "" {
			return nil, fmt.Errorf("group %d of the shards has %s", g+1, d)
		}
	}
	return m.parts[g], nil
}

// Groups is the number of groups of runs.
func (m *Merged) Groups() int { return len(m.parts) }

// MultiSeed returns group g's metrics on every seed, as Collect would
// have returned them; gr describes the group as the command asks for it.
func (m *Merged) MultiSeed(g int, gr Group) (*MultiSeed, error) {
	parts, err := m.group(g, gr)
	if err != nil {
		return nil, err
	}
	ms := NewMultiSeed(gr.Scenario, gr.First, gr.Seeds)
	seen := make([]bool, gr.Seeds)
	for _, part := range parts {
		for _, run := range part.Runs {
			if run.Seed < 0 || run.Seed >= gr.Seeds || seen[run.Seed] {
				return nil, fmt.Errorf("group %d: seed index %d is out of range or given twice", g+1, run.Seed)
			}
			seen[run.Seed] = true
			if len(run.Values) != len(ms.Policies) {
				return nil, fmt.Errorf("group %d, seed index %d: %d policies, want %d", g+1, run.Seed, len(run.Values), len(ms.Policies))
			}
			for p, values := range run.Values {
				if len(values) != len(ms.Metrics) {
					return nil, fmt.Errorf("group %d, seed index %d: %d metric values, want %d", g+1, run.Seed, len(values), len(ms.Metrics))
				}
				ms.set(run.Seed, p, values)
			}
		}
	}
	if i := slices.Index(seen, false); i >= 0 {
		return nil, fmt.Errorf("group %d: no shard ran seed %d", g+1, gr.First+uint64(i))
	}
	return ms, nil
}

// PlotData returns group g's plot data, as CollectPlotData would have
// returned it.
func (m *Merged) PlotData(g int, gr Group) (*PlotData, error) {
	ms, err := m.MultiSeed(g, gr)
	if err != nil {
		return nil, err
	}
	parts, _ := m.group(g, gr)
	s := gr.Scenario
	hists := make([]*stats.Histogram, len(s.Policies))
	for p := range hists {
		hists[p] = new(stats.Histogram)
	}
	var timelines []Timeline
	for _, part := range parts {
		if len(part.Completions) != len(s.Policies) {
			return nil, fmt.Errorf("group %d: a shard has no completion latencies for every policy", g+1)
		}
		for p := range s.Policies {
			if err := hists[p].AddCounts(part.Completions[p]); err != nil {
				return nil, fmt.Errorf("group %d, policy %s: %w", g+1, s.Policies[p].Name, err)
			}
		}
		if part.Timelines != nil {
			if timelines != nil || len(part.Timelines) != len(s.Policies) {
				return nil, fmt.Errorf("group %d: the timelines are not there once for every policy", g+1)
			}
			timelines = make([]Timeline, len(part.Timelines))
			for i, t := range part.Timelines {
				if err := t.check(gr.Bucket); err != nil {
					return nil, fmt.Errorf("group %d: %w", g+1, err)
				}
				if err := checkMembers(&t, s.Server); err != nil {
					return nil, fmt.Errorf("group %d: %w", g+1, err)
				}
				timelines[i] = t.clone()
			}
		}
	}
	if timelines == nil {
		return nil, fmt.Errorf("group %d: no shard recorded the timelines", g+1)
	}
	return plotData(s, ms, hists, timelines, gr.Bucket), nil
}

// errNoShards is MergeShards' error for an empty list.
var errNoShards = errors.New("no shard files to merge")

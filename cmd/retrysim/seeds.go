package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// maxSeeds bounds --seeds so that a typo cannot run for days or fill the
// memory (every metric of every policy on every seed is kept).
const maxSeeds = 100_000

// seedsFlag is --seeds, shared by every command that runs scenarios.
func seedsFlag() cli.Flag {
	return &decimalFlag{Name: "seeds", Value: 1, Usage: "run `K` seeds: seed, seed+1, …, seed+K−1, in parallel on all cores, and report statistics over them"}
}

// seedFlag is --seed.
func seedFlag() cli.Flag {
	return &decimalFlag{Name: "seed", HideDefault: true, Usage: "first random seed `N` (default: the scenario's own seed)"}
}

// scenarioFlags are the flags that pick a scenario and its seeds, and
// --force.
func scenarioFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "scenario", Aliases: []string{"s"}, Usage: "scenario `NAME` to run (default: the file's default scenario; see 'retrysim list')"},
		fileFlag(),
		seedFlag(),
		seedsFlag(),
		forceFlag(),
	}
}

// pickScenario loads the scenario named by --scenario from --file (or the
// built-in file) and returns it with the first seed and the number of seeds.
func pickScenario(cmd *cli.Command) (*scenarios.Scenario, uint64, int, error) {
	f, err := loadFile(cmd)
	if err != nil {
		return nil, 0, 0, err
	}
	name := cmd.String("scenario")
	if name == "" {
		name = f.Default
	}
	s, err := f.Lookup(name)
	if err != nil {
		return nil, 0, 0, usageError{err}
	}
	seed := s.Seed
	if cmd.IsSet("seed") {
		seed = cmd.Uint64("seed")
	}
	k, err := seedCount(cmd, seed)
	if err != nil {
		return nil, 0, 0, err
	}
	return s, seed, k, nil
}

// seedCount validates --seeds against the first seed.
func seedCount(cmd *cli.Command, first uint64) (int, error) {
	n := cmd.Uint64("seeds")
	if n < 1 || n > maxSeeds {
		return 0, usagef("--seeds must be between 1 and %d, got %d", maxSeeds, n)
	}
	k := int(n)
	if first > math.MaxUint64-uint64(k-1) {
		return 0, usagef("--seed %d with --seeds %d runs past the largest seed (%d)", first, k, uint64(math.MaxUint64))
	}
	return k, nil
}

// runSeeds runs every policy of s on k seeds from first, on all cores, with
// a progress bar on a terminal (startWatch), and collects the results in
// seed order.
// keep, if set, is also called for every run (from worker goroutines, for
// distinct (seed, policy) pairs).
func runSeeds(ctx context.Context, cmd *cli.Command, s *scenarios.Scenario, first uint64, k int, keep func(seed, policy int, r *sim.Result)) (*runs.MultiSeed, error) {
	if st := merging(cmd); st != nil {
		return st.seeds(runs.Group{Scenario: s, First: first, Seeds: k})
	}
	w := startWatch(cmd, fmt.Sprintf("%s: %d seeds", s.Name, k), planned{s, k})
	ms, err := runs.Collect(w.context(ctx, s), s, first, k, keep)
	w.done()
	if err != nil {
		return nil, err
	}
	return ms, nil
}

// vsFlag is --vs, shared by the commands that compare policies over seeds.
func vsFlag() cli.Flag {
	return &cli.StringFlag{Name: "vs", Usage: "compare every policy with policy `NAME` (default: the first policy that completes an operation on every seed)"}
}

// reference resolves --vs among the policies of s: the reference policy's
// index, or report.DefaultReference when --vs is not given.
func reference(cmd *cli.Command, s *scenarios.Scenario) (int, error) {
	if !cmd.IsSet("vs") {
		return report.DefaultReference, nil
	}
	name := cmd.String("vs")
	names := make([]string, len(s.Policies))
	for p := range s.Policies {
		if names[p] = s.Policies[p].Name; names[p] == name {
			return p, nil
		}
	}
	return 0, usagef("--vs %q: scenario %s has no such policy (have: %s)", name, s.Name, strings.Join(names, ", "))
}

// writeWarnings prints the warnings of a document on stderr, for formats
// that have no place for them (all but JSON).
func writeWarnings(cmd *cli.Command, warnings []string) {
	if format(cmd) == report.JSON {
		return
	}
	for _, w := range warnings {
		fmt.Fprintln(cmd.Root().ErrWriter, "retrysim: warning:", w)
	}
}

// compareSeeds is compare with --seeds K > 1 or --format html; ref is the
// reference policy (see reference).
func compareSeeds(ctx context.Context, cmd *cli.Command, s *scenarios.Scenario, first uint64, k, ref int) error {
	if format(cmd) == report.HTML {
		if cmd.Bool("verbose") {
			return usagef("--verbose works with the table, markdown, csv and json formats, not html")
		}
		return writeHTMLReport(ctx, cmd, cmd.Root().Writer, s, first, k, ref)
	}
	var events atomic.Int64 // a sum: the same whatever order runs finish in
	start := time.Now()
	ms, err := runSeeds(ctx, cmd, s, first, k, func(_, _ int, r *sim.Result) { events.Add(int64(r.Events)) })
	if err != nil {
		return err
	}
	if cmd.Bool("verbose") {
		wall := time.Since(start)
		fmt.Fprintf(cmd.Root().ErrWriter, "total: %d events in %d runs (%d seeds × %d policies) in %v wall time (%.3g events/s)\n",
			events.Load(), k*len(s.Policies), k, len(s.Policies), wall.Round(time.Microsecond), float64(events.Load())/wall.Seconds())
	}
	doc := report.StatsVs(ms, ref)
	if err := report.WriteMultiSeed(cmd.Root().Writer, format(cmd), &doc); err != nil {
		return err
	}
	writeWarnings(cmd, doc.Warnings)
	return nil
}

// compareFormats are report.Formats plus the HTML report.
func compareFormats() []report.Format { return append(report.Formats(), report.HTML) }

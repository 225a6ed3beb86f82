package main

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/compare"
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
func pickScenario(c *call) (*scenarios.Scenario, uint64, int, error) {
	f, err := loadFile(c)
	if err != nil {
		return nil, 0, 0, err
	}
	name := c.String("scenario")
	if name == "" {
		name = f.Default
	}
	s, err := f.Lookup(name)
	if err != nil {
		return nil, 0, 0, usageError{err}
	}
	seed := s.Seed
	if c.IsSet("seed") {
		seed = c.Uint64("seed")
	}
	k, err := seedCount(c, seed)
	if err != nil {
		return nil, 0, 0, err
	}
	return s, seed, k, nil
}

// seedCount validates --seeds against the first seed.
func seedCount(c *call, first uint64) (int, error) {
	n := c.Uint64("seeds")
	if n < 1 || n > maxSeeds {
		return 0, usagef("--seeds must be between 1 and %d, got %d", maxSeeds, n)
	}
	k := int(n)
	if first > math.MaxUint64-uint64(k-1) {
		return 0, usagef("--seed %d with --seeds %d runs past the largest seed (%d)", first, k, uint64(math.MaxUint64))
	}
	return k, nil
}

// vsFlag is --vs, shared by the commands that compare policies over seeds.
func vsFlag() cli.Flag {
	return &cli.StringFlag{Name: "vs", Usage: "compare every policy with policy `NAME` (default: the first policy that completes an operation on every seed)"}
}

// reference resolves --vs among the policies of s: the reference policy's
// index, or report.DefaultReference when --vs is not given.
func reference(c *call, s *scenarios.Scenario) (int, error) {
	if !c.IsSet("vs") {
		return report.DefaultReference, nil
	}
	name := c.String("vs")
	p, err := s.PolicyIndex(name)
	if err != nil {
		return 0, usagef("--vs %q: %v", name, err)
	}
	return p, nil
}

// writeWarnings prints the warnings of a document on stderr, for formats
// that have no place for them (all but JSON).
func writeWarnings(c *call, warnings []string) {
	if format(c) == report.JSON {
		return
	}
	for _, w := range warnings {
		fmt.Fprintln(c.stderr, "retrysim: warning:", w)
	}
}

// compareJob is compare's job: every policy of the scenario for the HTML
// report, on K seeds, or on one seed (which does not shard).
func compareJob(c *call) (job, error) {
	s, seed, k, err := pickScenario(c)
	if err != nil {
		return job{}, err
	}
	if s, err = setParams(c, s); err != nil {
		return job{}, err
	}
	ref, err := reference(c, s)
	if err != nil {
		return job{}, err
	}
	origin, err := reportOrigin(c, s)
	if err != nil {
		return job{}, err
	}
	gr := runs.Group{Scenario: s, First: seed, Seeds: k}
	switch {
	case format(c) == report.HTML:
		gr.Plot, gr.Bucket = true, runs.DefaultBucket(s.Server)
		return job{plan: runs.Plan{Groups: []runs.Group{gr}}, title: fmt.Sprintf("%s: %d seeds", s.Name, k),
			start: func() (func(), error) {
				if c.Bool("verbose") {
					return nil, usagef("--verbose works with the table, markdown, csv and json formats, not html")
				}
				return nil, nil
			},
			present: func(res *runs.Results) error {
				return writeHTMLReport(c, c.stdout, s, res.Groups[0].Plot, ref)
			}}, nil
	case k > 1:
		return compareSeeds(c, gr, ref, origin), nil
	}
	cj := compare.Job{Scenario: s, Seed: seed, Seeds: 1, Ref: ref, Origin: origin}
	var start time.Time // of the runs, for --verbose
	return job{plan: runs.Plan{Groups: []runs.Group{cj.Group()}, Unsplit: "compare --shard needs --seeds K > 1 (or --format html): one seed is not split"},
		title: fmt.Sprintf("%s, seed %d", s.Name, seed),
		start: func() (func(), error) { start = time.Now(); return nil, nil },
		present: func(res *runs.Results) error {
			if c.Bool("verbose") {
				writeEngineStats(c.stderr, res.Groups[0].Whole, time.Since(start))
			}
			if _, err := cj.Write(c.stdout, format(c), &res.Groups[0]); err != nil {
				return err
			}
			noteOneSeed(c.stderr, s, seed)
			return nil
		}}, nil
}

// compareSeeds is compare's job on the seeds of gr, K > 1, with policy ref
// as the reference (see reference); its JSON report records origin.
func compareSeeds(c *call, gr runs.Group, ref int, origin *report.Origin) job {
	s, k := gr.Scenario, gr.Seeds
	var events atomic.Int64 // a sum: the same whatever order runs finish in
	var start time.Time     // of the runs, for --verbose
	return job{plan: runs.Plan{Groups: []runs.Group{gr}}, title: fmt.Sprintf("%s: %d seeds", s.Name, k),
		start: func() (func(), error) { start = time.Now(); return nil, nil },
		each:  func(_, _, _ int, r *sim.Result) { events.Add(int64(r.Events)) },
		present: func(res *runs.Results) error {
			if c.Bool("verbose") {
				wall := time.Since(start)
				fmt.Fprintf(c.stderr, "total: %d events in %d runs (%d seeds × %d policies) in %v wall time (%.3g events/s)\n",
					events.Load(), k*len(s.Policies), k, len(s.Policies), wall.Round(time.Microsecond), float64(events.Load())/wall.Seconds())
			}
			warnings, err := compare.Job{Scenario: s, Seed: gr.First, Seeds: k, Ref: ref, Origin: origin}.Write(c.stdout, format(c), &res.Groups[0])
			if err != nil {
				return err
			}
			writeWarnings(c, warnings)
			return nil
		}}
}

// compareFormats are report.Formats plus the HTML report.
func compareFormats() []report.Format { return append(report.Formats(), report.HTML) }

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/check"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
)

// checkFailed is returned when an expectation or baseline metric fails: the
// input was fine, the policies were not (exit 1).
type checkFailed struct{ expectations, baseline int }

func (e checkFailed) Error() string {
	var parts []string
	if e.expectations > 0 {
		parts = append(parts, fmt.Sprintf("%d expectation(s) failed", e.expectations))
	}
	if e.baseline > 0 {
		parts = append(parts, fmt.Sprintf("%d metric(s) worse than the baseline beyond tolerance", e.baseline))
	}
	return "check failed: " + strings.Join(parts, "; ")
}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "verify scenario expectations (and a baseline) for CI",
		UsageText: "retrysim check [--file PATH] [--scenario NAME ...] [--seeds K]\n" +
			"               [--format table|markdown] [--junit FILE]\n" +
			"               [--baseline FILE ... [--tolerance 5%]] [--force]\n\n" +
			"Exits 0 when every expectation holds and no metric is worse than its\n" +
			"baseline beyond the tolerance, 1 when something fails, 2 on bad input.\n" +
			"See docs/ci.md.\n\n" +
			"Examples:\n" +
			"   retrysim check --file scenarios.yaml\n" +
			"   retrysim check --format markdown --junit check.xml\n" +
			"   retrysim compare --format json > baseline.json   # once, on main\n" +
			"   retrysim check --baseline baseline.json --tolerance 5%",
		Flags: append([]cli.Flag{
			fileFlag(),
			&cli.StringSliceFlag{Name: "scenario", Aliases: []string{"s"}, Usage: "check only scenario `NAME` (repeatable; default: every scenario with expectations)"},
			&decimalFlag{Name: "seeds", HideDefault: true, Usage: "take statistics such as mean(completed) over `K` seeds instead of each scenario's check_seeds"},
			formatFlag(check.Formats()),
			&cli.StringFlag{Name: "junit", Usage: "also write the results as JUnit XML to `FILE`"},
			&cli.StringSliceFlag{Name: "baseline", Usage: "compare with `FILE`, written by 'retrysim compare --format json' (repeatable; '-' reads stdin)"},
			&cli.StringSliceFlag{Name: "tolerance", Usage: "how much worse than the baseline a metric may get, relative to its baseline value: `[METRIC=]PCT`, e.g. 5% for every metric or latency_ms.p99=10% for one (repeatable; default 0 for a single-seed baseline, 5% for a multi-seed one)"},
			forceFlag(),
		}, shardFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("check takes no arguments, got %q", cmd.Args().Slice())
			}
			// Standard input can be read once.
			stdinUsers := 0
			for _, path := range append(cmd.StringSlice("baseline"), cmd.String("file")) {
				if path == "-" {
					stdinUsers++
				}
			}
			if stdinUsers > 1 {
				return usagef("'-' (standard input) can be given only once among --file and --baseline")
			}
			inputs := []inputFile{{"--file", cmd.String("file")}}
			for _, path := range cmd.StringSlice("baseline") {
				inputs = append(inputs, inputFile{"--baseline", path})
			}
			if err := notAnInput("--junit", cmd.String("junit"), inputs...); err != nil {
				return err
			}
			f, err := loadFile(cmd)
			if err != nil {
				return err
			}
			seeds := 0
			if cmd.IsSet("seeds") {
				n := cmd.Uint64("seeds")
				if n < 1 || n > scenarios.MaxCheckSeeds {
					return usagef("--seeds must be between 1 and %d, got %d", scenarios.MaxCheckSeeds, n)
				}
				seeds = int(n)
			}
			tol, err := check.ParseTolerances(cmd.StringSlice("tolerance"))
			if err != nil {
				return usagef("--tolerance: %v", err)
			}
			if cmd.IsSet("tolerance") && len(cmd.StringSlice("baseline")) == 0 {
				return usagef("--tolerance applies to --baseline, which is not given")
			}

			// Start the JUnit file before running anything, so that a bad
			// path exits 2 at once rather than after every scenario ran.
			// It replaces an existing file only once the check has results.
			var junit *pendingFile
			if path := cmd.String("junit"); path != "" && !sharding(cmd) {
				if junit, err = createOutput("--junit", path); err != nil {
					return err
				}
				defer junit.abort()
			}
			list := f.Scenarios
			if names := cmd.StringSlice("scenario"); len(names) > 0 {
				list = nil
				for _, name := range names {
					s, err := f.Lookup(name)
					if err != nil {
						return usageError{err}
					}
					if !slices.Contains(list, s) {
						list = append(list, s)
					}
				}
			}
			var rep check.Report
			// Read every baseline before running anything: bad input exits 2 early.
			type baseline struct {
				file  string
				doc   *report.Document // a single-seed baseline, or
				multi *check.SeedSet   // a multi-seed one
				s     *scenarios.Scenario
				first uint64
				seeds int
			}
			var baselines []baseline
			for _, path := range cmd.StringSlice("baseline") {
				doc, multi, err := readBaseline(cmd, path)
				if err != nil {
					return usageError{err}
				}
				b := baseline{file: path, doc: doc, multi: multi}
				name := ""
				if doc != nil {
					name, b.first, b.seeds = doc.Scenario, doc.Seed, 1
				} else {
					name, b.first, b.seeds = multi.Scenario, multi.FirstSeed, multi.Seeds
				}
				if b.s, err = f.Lookup(name); err != nil {
					return usagef("baseline %s: %v", path, err)
				}
				if path == "-" {
					b.file = stdinName
				}
				if multi != nil {
					rep.Warnings = append(rep.Warnings, check.PowerWarnings(b.file, multi)...)
				}
				baselines = append(baselines, b)
			}

			var work scenarios.Estimate
			for _, s := range list {
				work = work.Add(seedsWork(s, check.Seeds(s, seeds)))
			}
			for _, b := range baselines {
				work = work.Add(seedsWork(b.s, b.seeds))
			}
			if err := checkWork(cmd, work); err != nil {
				return err
			}
			if sharding(cmd) {
				var groups []runs.Group
				for _, s := range list {
					if n := check.Seeds(s, seeds); n > 0 {
						groups = append(groups, runs.Group{Scenario: s, First: s.Seed, Seeds: n})
					}
				}
				for _, b := range baselines {
					groups = append(groups, runs.Group{Scenario: b.s, First: b.first, Seeds: b.seeds, Label: "baseline " + b.file})
				}
				if len(groups) == 0 {
					return usagef("nothing to check: no expectations in %s for the chosen scenarios and no --baseline (docs/ci.md shows how to write them)", f.Path)
				}
				return runShard(ctx, cmd, groups)
			}

			var plan []planned
			for _, s := range list {
				plan = append(plan, planned{s, check.Seeds(s, seeds)})
			}
			for _, b := range baselines {
				plan = append(plan, planned{b.s, b.seeds})
			}
			w := startWatch(cmd, "check", plan...)
			defer w.done()
			for _, s := range list {
				var checks []check.Result
				if st := merging(cmd); st == nil {
					if checks, err = check.Scenario(w.context(ctx, s), s, seeds); err != nil {
						return err
					}
				} else if n := check.Seeds(s, seeds); n > 0 {
					m, err := st.seeds(runs.Group{Scenario: s, First: s.Seed, Seeds: n})
					if err != nil {
						return err
					}
					checks = check.Measure(s, m)
				}
				rep.Checks = append(rep.Checks, checks...)
			}
			for _, b := range baselines {
				if b.multi != nil {
					now, err := baselineSeeds(w.context(ctx, b.s), cmd, b.s, b.first, b.seeds, "baseline "+b.file)
					if err != nil {
						return err
					}
					seedTol := tol
					if !tol.DefaultSet {
						seedTol.Default = check.DefaultTolerance(b.multi)
					}
					rep.Seeds = append(rep.Seeds, check.CompareSeeds(b.file, b.multi, check.FromMultiSeed(now), seedTol)...)
					continue
				}
				now, err := baselineNow(w.context(ctx, b.s), cmd, b.s, b.first, "baseline "+b.file)
				if err != nil {
					return err
				}
				rep.Baseline = append(rep.Baseline, check.CompareBaseline(b.file, b.doc, &now, tol)...)
			}
			w.done()
			if len(rep.Checks) == 0 && len(rep.Baseline) == 0 && len(rep.Seeds) == 0 {
				return usagef("nothing to check: no expectations in %s for the chosen scenarios and no --baseline (docs/ci.md shows how to write them)", f.Path)
			}

			if err := check.WriteCheck(cmd.Root().Writer, format(cmd), &rep); err != nil {
				return err
			}
			if junit != nil {
				var buf bytes.Buffer
				if err := check.WriteJUnit(&buf, &rep); err != nil {
					return err
				}
				if err := finishOutput(cmd, junit, cmd.String("junit"), buf.Bytes()); err != nil {
					return err
				}
			}
			if e, b := rep.Failures(); e+b > 0 {
				return checkFailed{e, b}
			}
			return nil
		},
	}
}

// readBaseline reads the baseline named by --baseline ('-' reads stdin):
// a single-seed report (doc) or a multi-seed one (multi).
func readBaseline(cmd *cli.Command, path string) (doc *report.Document, multi *check.SeedSet, err error) {
	if !sharding(cmd) && merging(cmd) == nil {
		return readReport(cmd, path)
	}
	// The shard file keeps the baseline's bytes.
	data, name, err := readInput(cmd, "--baseline", path)
	if err != nil {
		return nil, nil, fmt.Errorf("baseline %s: %w", path, pathErr(err))
	}
	return parseReport(name, data)
}

// parseReport reads a JSON report: single-seed (doc) or multi-seed (multi).
func parseReport(name string, data []byte) (doc *report.Document, multi *check.SeedSet, err error) {
	if check.Schema(data) == "" {
		doc, err = check.ReadBaseline(name, bytes.NewReader(data))
		return doc, nil, err
	}
	multi, err = check.ReadSeedBaseline(name, data)
	return nil, multi, err
}

// readBounded reads at most limit bytes from r, refusing more.
func readBounded(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("larger than %d MiB", limit>>20)
	}
	return data, err
}

// baselineSeeds runs s on k seeds from first for a multi-seed baseline
// (or takes them from the merged shards).
func baselineSeeds(ctx context.Context, cmd *cli.Command, s *scenarios.Scenario, first uint64, k int, label string) (*runs.MultiSeed, error) {
	if st := merging(cmd); st != nil {
		return st.seeds(runs.Group{Scenario: s, First: first, Seeds: k, Label: label})
	}
	return runs.Collect(ctx, s, first, k, nil)
}

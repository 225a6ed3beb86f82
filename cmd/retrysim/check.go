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
	"github.com/retrysim/retrysim/compare"
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
			"               [--baseline FILE ... [--tolerance 5%] [--alpha 0.05]\n" +
			"                [--param NAME=VALUE ...] [--accept-scenario-change]]\n" +
			"               [--force]\n\n" +
			"Exits 0 when every expectation holds and no metric is worse than its\n" +
			"baseline beyond the tolerance, 1 when something fails, 2 on bad input.\n" +
			"Against multi-seed baselines every metric is a paired test, and all of\n" +
			"them together are one family: the chance that the check fails when\n" +
			"only the random draws changed is at most --alpha.\n" +
			"A baseline runs with the --param values it was recorded with; one whose\n" +
			"scenario (server, workload, incident) or --param values differ from what\n" +
			"the check runs is bad input unless --accept-scenario-change.\n" +
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
			alphaFlag(),
			&cli.StringSliceFlag{Name: "param", Aliases: []string{"p"}, Usage: "run the baselines with sweep parameter `NAME=VALUE` set, as 'compare --param' recorded them (repeatable; default: the values each baseline records)"},
			&cli.BoolFlag{Name: "accept-scenario-change", Usage: "compare with a baseline even if its scenario or --param values differ from what the check runs (the report says so)"},
			forceFlag(),
		}, shardFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("check takes no arguments, got %q", cmd.Args().Slice())
			}
			return execute(ctx, newCall(cmd), checkJob)
		},
	}
}

// checkJob is check's job: the runs of checkPlan, reported on stdout and
// in --junit.
func checkJob(c *call) (job, error) {
	plan, err := checkPlan(c)
	if err != nil {
		return job{}, err
	}
	var junit *pendingFile
	return job{plan: plan.Runs(), title: "check",
		// Start the JUnit file before running anything, so that a bad
		// path exits 2 at once rather than after every scenario ran.
		// It replaces an existing file only once the check has results.
		start: func() (func(), error) {
			path := c.String("junit")
			if path == "" {
				return nil, nil
			}
			junit, err = createOutput("--junit", path)
			if err != nil {
				return nil, err
			}
			return junit.abort, nil
		},
		present: func(res *runs.Results) error { return writeCheck(c, plan.Report(res), junit) },
	}, nil
}

// checkPlan reads check's flags, scenario file and baselines: what it checks.
func checkPlan(c *call) (*check.Plan, error) {
	// Standard input can be read once.
	stdinUsers := 0
	for _, path := range append(c.StringSlice("baseline"), c.String("file")) {
		if path == "-" {
			stdinUsers++
		}
	}
	if stdinUsers > 1 {
		return nil, usagef("'-' (standard input) can be given only once among --file and --baseline")
	}
	inputs := []inputFile{{"--file", c.String("file")}}
	for _, path := range c.StringSlice("baseline") {
		inputs = append(inputs, inputFile{"--baseline", path})
	}
	if err := notAnInput("--junit", c.String("junit"), inputs...); err != nil {
		return nil, err
	}
	f, err := loadFile(c)
	if err != nil {
		return nil, err
	}
	seeds := 0
	if c.IsSet("seeds") {
		n := c.Uint64("seeds")
		if n < 1 || n > scenarios.MaxCheckSeeds {
			return nil, usagef("--seeds must be between 1 and %d, got %d", scenarios.MaxCheckSeeds, n)
		}
		seeds = int(n)
	}
	tol, err := check.ParseTolerances(c.StringSlice("tolerance"))
	if err != nil {
		return nil, usagef("--tolerance: %v", err)
	}
	for _, flag := range []string{"tolerance", "alpha", "param", "accept-scenario-change"} {
		if c.IsSet(flag) && len(c.StringSlice("baseline")) == 0 {
			return nil, usagef("--%s applies to --baseline, which is not given", flag)
		}
	}
	alpha, err := alphaOf(c.String("alpha"))
	if err != nil {
		return nil, err
	}
	list, err := checkedScenarios(c, f)
	if err != nil {
		return nil, err
	}
	baselines, err := checkBaselines(c, f)
	if err != nil {
		return nil, err
	}
	plan := check.NewPlan(list, seeds, baselines, tol)
	plan.Alpha = alpha
	if plan.Empty() {
		return nil, usagef("nothing to check: no expectations in %s for the chosen scenarios and no --baseline (docs/ci.md shows how to write them)", f.Path)
	}
	return plan, nil
}

// checkedScenarios are the scenarios of f that --scenario names, each
// once, or every scenario of f.
func checkedScenarios(c *call, f *scenarios.File) ([]*scenarios.Scenario, error) {
	names := c.StringSlice("scenario")
	if len(names) == 0 {
		return f.Scenarios, nil
	}
	var list []*scenarios.Scenario
	for _, name := range names {
		s, err := f.Lookup(name)
		if err != nil {
			return nil, usageError{err}
		}
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list, nil
}

// checkBaselines reads every --baseline, each against its scenario in f
// with the --param values it runs with, before anything runs: bad input,
// or a baseline whose origin does not match, exits 2 early.
func checkBaselines(c *call, f *scenarios.File) ([]check.Baseline, error) {
	given, err := compare.Params(c.StringSlice("param"))
	if err != nil {
		return nil, usagef("--param %v", err)
	}
	var baselines []check.Baseline
	for _, path := range c.StringSlice("baseline") {
		doc, multi, err := readBaseline(c, path)
		if err != nil {
			return nil, usageError{err}
		}
		file := path
		if path == "-" {
			file = stdinName
		}
		rec := check.OriginOf(doc, multi)
		b, err := check.NewBaseline(file, doc, multi, f)
		if err != nil {
			if !c.IsSet("file") {
				// Not a built-in scenario: the baseline's file is needed.
				from := "the scenario file it was recorded from"
				if rec != nil && rec.File != scenarios.BuiltinFile {
					from = fmt.Sprintf("%s, the file it was recorded from", rec.File)
				}
				return nil, usagef("baseline %s is of scenario %q, which is not built in: pass --file with %s", path, baselineScenario(doc, multi), from)
			}
			return nil, usagef("baseline %s: %v", path, err)
		}
		if err := verifyBaseline(c, &b, rec, given); err != nil {
			return nil, err
		}
		baselines = append(baselines, b)
	}
	return baselines, nil
}

// baselineScenario is the scenario a baseline is of.
func baselineScenario(doc *report.Document, multi *check.SeedSet) string {
	if doc != nil {
		return doc.Scenario
	}
	return multi.Scenario
}

// verifyBaseline sets b's scenario to what the baseline runs (with the
// --param values given, or those it was recorded with) and checks it
// against rec, the baseline's origin (nil for an older baseline, which is
// compared with a warning): other --param values or another world are an
// OriginError (exit 2), unless --accept-scenario-change, which b's
// warnings then state.
func verifyBaseline(c *call, b *check.Baseline, rec *report.Origin, given []string) error {
	params, note, problem := check.BaselineParams(b.File, rec, given, c.IsSet("param"))
	base := b.Scenario
	s, err := compare.Set(base, params)
	if err != nil {
		if !c.IsSet("param") && rec != nil {
			return usagef("baseline %s: its --param %s: %v", b.File, strings.Join(params, " --param "), err)
		}
		return usagef("--param %v", err)
	}
	b.Scenario = s
	if note != "" {
		b.Notes = append(b.Notes, note)
	}
	if rec == nil {
		b.Warnings = append(b.Warnings, check.UnverifiedWarning(b.File))
		return nil
	}
	var problems []string
	// The world is compared with the --param values recorded, so that
	// other values are one problem and a changed file another.
	recorded := s
	if problem != "" {
		problems = append(problems, problem)
		if recorded, err = compare.Set(base, rec.Params); err != nil {
			recorded = nil // they no longer apply: the world changed
		}
	}
	if recorded == nil {
		problems = append(problems, fmt.Sprintf("scenario %s no longer takes --param %s", base.Name, strings.Join(rec.Params, " --param ")))
	} else if p, n := check.VerifyScenario(rec, recorded, scenarioFileName(c)); p != "" {
		problems = append(problems, p)
	} else if n != "" {
		b.Notes = append(b.Notes, b.File+": "+n)
	}
	if len(problems) == 0 {
		return nil
	}
	if !c.Bool("accept-scenario-change") {
		return usageError{&check.OriginError{File: b.File, Problems: problems, Rerecord: rerecord(c, b, params)}}
	}
	b.Warnings = append(b.Warnings, fmt.Sprintf("%s: compared although it is not of what this check runs (--accept-scenario-change): %s", b.File, strings.Join(problems, "; ")))
	return nil
}

// rerecord is the command that records baseline b again for what the
// check runs.
func rerecord(c *call, b *check.Baseline, params []string) string {
	args := []string{"retrysim compare"}
	if path := c.String("file"); path != "" {
		args = append(args, "--file "+path)
	}
	args = append(args, "--scenario "+b.Scenario.Name, fmt.Sprintf("--seed %d", b.First))
	if b.Seeds > 1 {
		args = append(args, fmt.Sprintf("--seeds %d", b.Seeds))
	}
	for _, p := range params {
		args = append(args, "--param "+p)
	}
	return "'" + strings.Join(append(args, "--format json"), " ") + "'"
}

// writeCheck writes rep to stdout in --format, and to junit, if set, as
// JUnit XML; a failed check is an error (exit 1).
func writeCheck(c *call, rep *check.Report, junit *pendingFile) error {
	if err := check.WriteCheck(c.stdout, format(c), rep); err != nil {
		return err
	}
	if junit != nil {
		var buf bytes.Buffer
		if err := check.WriteJUnit(&buf, rep); err != nil {
			return err
		}
		if err := finishOutput(c, junit, c.String("junit"), buf.Bytes()); err != nil {
			return err
		}
	}
	if e, b := rep.Failures(); e+b > 0 {
		return checkFailed{e, b}
	}
	return nil
}

// readBaseline reads the baseline named by --baseline ('-' reads stdin):
// a single-seed report (doc) or a multi-seed one (multi).
func readBaseline(c *call, path string) (doc *report.Document, multi *check.SeedSet, err error) {
	if !sharding(c) && merging(c) == nil {
		return readReport(c, path)
	}
	// The shard file keeps the baseline's bytes.
	data, name, err := readInput(c, "--baseline", path)
	if err != nil {
		return nil, nil, fmt.Errorf("baseline %s: %w", path, pathErr(err))
	}
	return parseReport(name, data)
}

// parseReport reads a JSON report: single-seed (doc) or multi-seed (multi).
func parseReport(name string, data []byte) (doc *report.Document, multi *check.SeedSet, err error) {
	if s := check.Schema(data); s == "" || s == report.SingleSeedSchema {
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

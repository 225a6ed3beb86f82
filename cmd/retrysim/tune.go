package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/report/plot"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/sweep"
	"github.com/retrysim/retrysim/tune"
)

// tuneFailed is returned when no point meets every target: the input was
// fine, the search found nothing (exit 1).
type tuneFailed struct{ policy string }

func (e tuneFailed) Error() string {
	return fmt.Sprintf("tune: no point of the space makes %s meet every target", e.policy)
}

func tuneCommand() *cli.Command {
	return &cli.Command{
		Name:  "tune",
		Usage: "search a policy's parameters for the point that meets targets",
		UsageText: "retrysim tune --policy NAME --scenario NAME [--scenario NAME ...]\n" +
			"              --param NAME=VALUES [--param ...] [--target [SCENARIO:]EXPR ...]\n" +
			"              [--objective [SCENARIO:]METRIC] [--file PATH] [--seed N]\n" +
			"              [--seeds K] [--levels L] [--format table|markdown|json]\n" +
			"              [--out FILE] [--plot-dir DIR [--plot-format png,svg]]\n" +
			"              [--force] [--shard I/N [--shard-out PATH]]\n\n" +
			"Every point runs the policy on the same seeds on every scenario. A point\n" +
			"is feasible when every target holds: a mean by its 95% confidence\n" +
			"interval, a bound on single runs on every seed, another statistic as\n" +
			"check takes it. Targets are the policy's expect lists in the scenario\n" +
			"file and --target. The search tries L values of each parameter, then\n" +
			"refines around the best point at half the spacing until it is one\n" +
			"value. Among feasible points the best objective (mean over seeds) wins.\n" +
			"Exits 1 when no point is feasible, naming the closest: the smallest\n" +
			"shortfall, its worst target's distance from the target's value relative\n" +
			"to that value. --out writes each target as checked (completed >= X as\n" +
			"min(completed) >= X over the seeds). VALUES are as in sweep. --shard runs\n" +
			"a shard of the first stage; 'retrysim merge' refines. See docs/tune.md.\n\n" +
			"Policy parameters: " + strings.Join(wrapWords(strings.Join(tune.PolicyParams(), ", "), helpWidth-helpIndent-19), "\n   ") + "\n\n" +
			"Examples:\n" +
			"   retrysim tune --file docs/examples/tune.yaml --policy budgeted \\\n" +
			"      --scenario healthy --scenario outage \\\n" +
			"      --param budget_min_per_second=1:40:log6 --param base=250ms:20s:log7 \\\n" +
			"      --out tuned.yaml\n" +
			"   retrysim check --file tuned.yaml     # gates the chosen policy\n" +
			"   retrysim tune ... --objective outage:latency_ms.p99 \\\n" +
			"      --target 'healthy: mean(amplification) <= 1.2'",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "policy", Usage: "tune policy `NAME` (every scenario must have it)"},
			&cli.StringSliceFlag{Name: "scenario", Aliases: []string{"s"}, Usage: "tune on scenario `NAME` (repeatable; default: the file's default scenario)"},
			fileFlag(),
			&cli.StringSliceFlag{Name: "param", Aliases: []string{"p"}, Usage: "policy parameter to vary, `NAME=VALUES` (repeatable, at most 4)"},
			&cli.StringSliceFlag{Name: "target", Usage: "a bound to meet, `[SCENARIO:]EXPR`, e.g. 'outage: mean(amplification) <= 2' (repeatable)"},
			&cli.StringFlag{Name: "objective", Value: "attempts", Usage: "optimise mean(`[SCENARIO:]METRIC`) in the metric's direction, over every scenario by default"},
			&decimalFlag{Name: "seed", HideDefault: true, Usage: "first seed `N` of every point (default: the first scenario's seed)"},
			&decimalFlag{Name: "seeds", Value: 10, Usage: "run every point on `K` seeds"},
			&decimalFlag{Name: "levels", Value: 5, Usage: "try `L` values of each parameter first (2 to 9)"},
			formatFlag(tune.Formats()),
			&cli.StringFlag{Name: "plot-dir", Usage: "also draw the explored space (objective against the two most influential parameters) as tune.png/.svg in `DIR`"},
			&cli.StringFlag{Name: "plot-format", Value: "png,svg", Usage: "comma-separated image `FORMATS`: png, svg"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "also write the chosen policy with its targets as a scenario file `FILE` for check"},
			forceFlag(),
		}, shardFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("tune takes no arguments, got %q", cmd.Args().Slice())
			}
			return execute(ctx, newCall(cmd), tuneJob)
		},
	}
}

// tuneJob is tune's job: the search's first stage, the coarse grid, is the
// plan (so it shards); the refinement runs when its results are in, here
// or in the merge, and then the result is written on stdout and the
// policy file in --out.
func tuneJob(c *call) (job, error) {
	p, source, err := tuneProblem(c)
	if err != nil {
		return job{}, err
	}
	b, err := tune.Begin(p)
	if err != nil {
		return job{}, usageError{err}
	}
	formats, err := plotFormatsFlag(c)
	if err != nil {
		return job{}, err
	}
	var out *pendingFile
	return job{plan: b.Plan(), title: "tune " + p.Policy,
		start: func() (func(), error) {
			if dir := c.String("plot-dir"); dir != "" {
				if err := outputDir("--plot-dir", dir); err != nil {
					return nil, err
				}
			}
			path := c.String("out")
			if path == "" {
				return nil, nil
			}
			f, err := createOutput("--out", path)
			if err != nil {
				return nil, err
			}
			out = f
			return out.abort, nil
		},
		finish: func(ctx context.Context, first *runs.Results) error {
			res, err := b.Continue(ctx, first, func(ctx context.Context, plan runs.Plan) (*runs.Results, error) {
				return tuneStage(ctx, c, plan)
			})
			if err != nil {
				return err
			}
			return writeTune(c, res, source, out, formats)
		}}, nil
}

// tuneStage runs a stage of the refinement here.
func tuneStage(ctx context.Context, c *call, plan runs.Plan) (*runs.Results, error) {
	if err := checkWork(ctx, c, plan); err != nil {
		return nil, err
	}
	w := startWatch(c, "tune: refinement", plan)
	res, err := runs.Execute(ctx, plan, runs.Mode{Context: func(ctx context.Context, g *runs.Group) context.Context {
		return w.context(ctx, g.Scenario)
	}})
	w.done()
	return res, err
}

// writeTune writes res on stdout and, when --out is set (out), the
// policy file; it fails (exit 1) when no point is feasible.
func writeTune(c *call, res *tune.Result, source tuneSource, out *pendingFile, formats []plot.ImageFormat) error {
	if err := tune.Write(c.stdout, format(c), res); err != nil {
		return err
	}
	if dir := c.String("plot-dir"); dir != "" {
		fig, err := plot.TuneFigure(res)
		if err != nil {
			return err
		}
		files, err := figureFiles(dir, []plot.NamedFigure{{Name: "tune", Figure: fig}}, formats)
		if err != nil {
			return err
		}
		if err := writeOutputs(c, files); err != nil {
			return err
		}
	}
	if res.Chosen == nil {
		return tuneFailed{res.Policy}
	}
	if out == nil {
		return nil
	}
	data, err := res.PolicyFile(source.data, source.dir, tuneHeader(res))
	if err != nil {
		return err
	}
	return finishOutput(c, out, c.String("out"), data)
}

// tuneSource is the scenario file's bytes, for the policy file, and the
// folder its traces are read from.
type tuneSource struct {
	data []byte
	dir  string
}

// tuneProblem reads the flags of tune.
func tuneProblem(c *call) (*tune.Problem, tuneSource, error) {
	var src tuneSource
	path := c.String("file")
	data, name, err := readInput(c, "--file", path)
	if err != nil {
		return nil, src, usageError{err}
	}
	f, err := parseInput(c, path, name, data)
	if err != nil {
		return nil, src, usageError{err}
	}
	src = tuneSource{data: data, dir: "."}
	if path != "" && path != "-" {
		src.dir = filepath.Dir(path)
	}
	// The library reads Levels 0 as its default; here 0 is a bad value.
	levels := c.Uint64("levels")
	if levels < 2 || levels > tune.MaxLevels {
		return nil, src, usagef("--levels %d: want 2 to %d", levels, tune.MaxLevels)
	}
	p := &tune.Problem{Policy: c.String("policy"), Levels: int(levels)}
	if p.Policy == "" {
		return nil, src, usagef("tune needs --policy NAME, the policy whose parameters vary")
	}
	names := c.StringSlice("scenario")
	if len(names) == 0 {
		names = []string{f.Default}
	}
	for _, n := range names {
		s, err := f.Lookup(n)
		if err != nil {
			return nil, src, usageError{err}
		}
		p.Scenarios = append(p.Scenarios, s)
	}
	if err := tuneFlags(c, p); err != nil {
		return nil, src, err
	}
	return p, src, nil
}

// tuneFlags reads --param, --target, --objective, --seed and --seeds.
func tuneFlags(c *call, p *tune.Problem) error {
	specs := c.StringSlice("param")
	if len(specs) == 0 {
		return usagef("tune needs --param NAME=VALUES, e.g. --param budget_percent=5:50:5")
	}
	for _, spec := range specs {
		q, err := sweep.Parse(spec)
		if err != nil {
			return usagef("--param %v", err)
		}
		if q.Note != "" {
			fmt.Fprintln(c.stderr, "retrysim: note: --param", q.Note)
		}
		p.Space = append(p.Space, q)
	}
	for _, text := range c.StringSlice("target") {
		t, err := tune.ParseTarget(text)
		if err != nil {
			return usagef("--target %v", err)
		}
		p.Targets = append(p.Targets, t)
	}
	o, err := tune.ParseObjective(c.String("objective"))
	if err != nil {
		return usagef("--objective %v", err)
	}
	p.Objective = o
	p.FirstSeed = p.Scenarios[0].Seed
	if c.IsSet("seed") {
		p.FirstSeed = c.Uint64("seed")
	}
	p.Seeds, err = seedCount(c, p.FirstSeed)
	return err
}

// tuneHeader is the policy file's comment.
func tuneHeader(res *tune.Result) string {
	return "Written by 'retrysim tune' (docs/tune.md): policy " + res.Policy + " at " + res.Chosen.Label + ",\n" +
		"its targets as its expect list as the search checked them (a bound on single\n" +
		"runs as min(...) or max(...) over the seeds), on the seeds it was tuned on\n" +
		"(seed and check_seeds; change seed for fresh ones). 'retrysim check --file'\n" +
		"on this file gates it."
}

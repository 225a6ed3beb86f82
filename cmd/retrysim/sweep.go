package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/report/plot"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/sweep"
)

func sweepCommand() *cli.Command {
	var about strings.Builder
	width := 0 // the names' column: the longest name
	for _, p := range kinds.Params() {
		width = max(width, len(p.Name))
	}
	for _, p := range kinds.Params() {
		name := p.Name
		for i, line := range wrapWords(p.About, helpWidth-helpIndent-3-width-1) {
			if i > 0 {
				name = ""
			}
			fmt.Fprintf(&about, "   %-*s %s\n", width, name, line)
		}
	}
	return &cli.Command{
		Name:  "sweep",
		Usage: "vary one or two parameters and report every metric",
		UsageText: "retrysim sweep --param NAME=VALUES [--param NAME=VALUES]\n" +
			"               [--scenario NAME | --file PATH] [--seed N] [--seeds K]\n" +
			"               [--vs POLICY] [--format table|markdown|csv|json]\n" +
			"               [--plot-dir DIR [--plot-format png,svg]] [--force]\n\n" +
			"VALUES is FROM:TO:STEP (FROM, FROM+STEP, ... up to TO), FROM:TO:logN (N\n" +
			"values from FROM to TO, log-spaced: counts rounded to whole numbers,\n" +
			"durations to 3 significant digits, duplicates dropped with a note),\n" +
			"V1,V2,... (a list, increasing) or one VALUE.\n\n" +
			"Parameters (durations take a unit, e.g. base=100ms:2s:100ms):\n" + about.String() + "\n" +
			"Examples:\n" +
			"   retrysim sweep --param clients=10:100:10\n" +
			"   retrysim sweep --param clients=10:1000:log5     # 10, 32, 100, 316, 1000\n" +
			"   retrysim sweep --param base=100ms,250ms,1s\n" +
			"   retrysim sweep --param capacity=2:12:2 --param outage=0s:4s:2s \\\n" +
			"      --seeds 20 --format csv\n" +
			"   retrysim sweep --param base=100ms:2s:100ms --plot-dir plots",
		Flags: append(append(scenarioFlags(), append([]cli.Flag{
			&cli.StringSliceFlag{Name: "param", Aliases: []string{"p"}, Usage: "parameter to vary, `NAME=VALUES` (repeatable, at most two)"},
			vsFlag(),
			formatFlag(report.Formats()),
		}, append(plotFlags("also write line plots of each metric to `DIR`"),
			&cli.StringFlag{Name: "plot", Hidden: true}, // the old name of --plot-dir
		)...)...), shardFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("sweep takes no arguments, got %q", cmd.Args().Slice())
			}
			return execute(ctx, newCall(cmd), sweepJob)
		},
	}
}

// sweepJob is sweep's job: every policy at every point of the grid of
// --param, on the seeds of the scenario.
func sweepJob(c *call) (job, error) {
	params, err := sweepParams(c)
	if err != nil {
		return job{}, err
	}
	plotDir, plotDirFlag, err := flagOrOldName(c, "plot-dir", "plot")
	if err != nil {
		return job{}, err
	}
	var formats []plot.ImageFormat
	if plotDir != "" {
		if formats, err = plotFormatsFlag(c); err != nil {
			return job{}, err
		}
	}
	s, first, k, err := pickScenario(c)
	if err != nil {
		return job{}, err
	}
	ref, err := reference(c, s)
	if err != nil {
		return job{}, err
	}
	// Every point is checked as the loader checks a file, before any runs.
	plan, err := runs.SweepPlan(s, params, first, k)
	if err != nil {
		return job{}, usagef("--param %v", err)
	}
	return job{plan: plan, title: "sweep " + s.Name,
		start: func() (func(), error) {
			if plotDir == "" {
				return nil, nil
			}
			return nil, outputDir(plotDirFlag, plotDir)
		},
		present: func(res *runs.Results) error {
			sw, err := runs.SweepOf(s, params, first, k, res)
			if err != nil {
				return err
			}
			return writeSweep(c, sw, ref, plotDir, formats)
		}}, nil
}

// sweepParams reads --param, at most sweep.MaxParams of them spanning at
// most sweep.MaxPoints points, and notes on stderr what parsing changed.
func sweepParams(c *call) ([]sweep.Param, error) {
	specs := c.StringSlice("param")
	if len(specs) == 0 {
		return nil, usagef("sweep needs --param NAME=VALUES, e.g. --param clients=10:50:10 or clients=10,20,50")
	}
	if len(specs) > sweep.MaxParams {
		return nil, usagef("--param: at most %d parameters, got %d", sweep.MaxParams, len(specs))
	}
	var params []sweep.Param
	total := 1
	for _, spec := range specs {
		p, err := sweep.Parse(spec)
		if err != nil {
			return nil, usagef("--param %v", err)
		}
		for _, q := range params {
			if q.Name == p.Name {
				return nil, usagef("--param: %s is given twice", p.Name)
			}
		}
		if p.Note != "" {
			fmt.Fprintln(c.stderr, "retrysim: note: --param", p.Note)
		}
		params = append(params, p)
		total *= len(p.Values)
	}
	if total > sweep.MaxPoints {
		return nil, usagef("--param: %d points; at most %d", total, sweep.MaxPoints)
	}
	return params, nil
}

// writeSweep writes sw to stdout in --format, with policy ref as the
// reference, and its line plots to plotDir, if set, in formats.
func writeSweep(c *call, sw *runs.Sweep, ref int, plotDir string, formats []plot.ImageFormat) error {
	if err := report.WriteSweep(c.stdout, format(c), sw, ref); err != nil {
		return err
	}
	if plotDir == "" {
		return nil
	}
	figs, err := plot.SweepFigures(sw)
	if err != nil {
		return err
	}
	files, err := figureFiles(plotDir, figs, formats)
	if err != nil {
		return err
	}
	return writeOutputs(c, files)
}

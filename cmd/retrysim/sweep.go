package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/report/plot"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sweep"
)

func sweepCommand() *cli.Command {
	var about strings.Builder
	for _, p := range scenarios.Params() {
		name := p.Name
		for i, line := range wrapWords(p.About, helpWidth-helpIndent-3-14) {
			if i > 0 {
				name = ""
			}
			fmt.Fprintf(&about, "   %-13s %s\n", name, line)
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
			specs := cmd.StringSlice("param")
			if len(specs) == 0 {
				return usagef("sweep needs --param NAME=VALUES, e.g. --param clients=10:50:10 or clients=10,20,50")
			}
			if len(specs) > sweep.MaxParams {
				return usagef("--param: at most %d parameters, got %d", sweep.MaxParams, len(specs))
			}
			var params []sweep.Param
			total := 1
			for _, spec := range specs {
				p, err := sweep.Parse(spec)
				if err != nil {
					return usagef("--param %v", err)
				}
				for _, q := range params {
					if q.Name == p.Name {
						return usagef("--param: %s is given twice", p.Name)
					}
				}
				if p.Note != "" {
					fmt.Fprintln(cmd.Root().ErrWriter, "retrysim: note: --param", p.Note)
				}
				params = append(params, p)
				total *= len(p.Values)
			}
			if total > sweep.MaxPoints {
				return usagef("--param: %d points; at most %d", total, sweep.MaxPoints)
			}
			plotDir, plotDirFlag, err := flagOrOldName(cmd, "plot-dir", "plot")
			if err != nil {
				return err
			}
			var formats []plot.ImageFormat
			if plotDir != "" {
				if formats, err = plotFormatsFlag(cmd); err != nil {
					return err
				}
			}
			s, first, k, err := pickScenario(cmd)
			if err != nil {
				return err
			}
			ref, err := reference(cmd, s)
			if err != nil {
				return err
			}
			// Check every point as the loader checks a file, before running any.
			if err := sweep.Validate(s, params); err != nil {
				return usagef("--param %v", err)
			}
			plan, err := runs.SweepPlan(s, params, first, k)
			if err != nil {
				return usagef("--param %v", err)
			}
			return execute(ctx, cmd, job{plan: plan, title: "sweep " + s.Name,
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
					return writeSweep(cmd, sw, ref, plotDir, formats)
				}})
		},
	}
}

// writeSweep writes sw to stdout in --format, with policy ref as the
// reference, and its line plots to plotDir, if set, in formats.
func writeSweep(cmd *cli.Command, sw *runs.Sweep, ref int, plotDir string, formats []plot.ImageFormat) error {
	if err := report.WriteSweep(cmd.Root().Writer, format(cmd), sw, ref); err != nil {
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
	return writeOutputs(cmd, files)
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/report/plot"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "write a self-contained HTML report for a design review",
		UsageText: "retrysim report --out FILE.html [--scenario NAME | --all] [--file PATH]\n" +
			"                [--seed N] [--seeds K] [--vs POLICY] [--bucket DURATION]\n" +
			"                [--playground URL] [--force]\n\n" +
			"Examples:\n" +
			"   retrysim report --out review.html\n" +
			"   retrysim report --out review.html --scenario long-outage --seeds 200\n" +
			"   retrysim report --out all.html --file docs/examples/custom.yaml --all\n" +
			"   retrysim compare --format html --seeds 50 > review.html  # on stdout",
		Flags: append(append(scenarioFlags(),
			vsFlag(), allFlag(),
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "HTML `FILE` to write ('-' for stdout)"},
			&cli.DurationFlag{Name: "bucket", HideDefault: true, Usage: "timeline bucket `DURATION` (default: the server's admission window or time scale, else 1s)"},
			playgroundLinkFlag(),
		), shardFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("report takes no arguments, got %q", cmd.Args().Slice())
			}
			return execute(ctx, newCall(cmd), reportJob)
		},
	}
}

// reportJob is report's job: the plot data of the scenario, as an HTML
// report in --out.
func reportJob(c *call) (job, error) {
	out := c.String("out")
	if out == "" {
		return job{}, usagef("report needs --out FILE.html (or --out - for stdout)")
	}
	if err := notAnInput("--out", out, inputFile{"--file", c.String("file")}); err != nil {
		return job{}, err
	}
	if err := checkPlaygroundLink(c); err != nil {
		return job{}, err
	}
	if c.Bool("all") {
		return allReportJob(c, out)
	}
	s, first, k, err := pickScenario(c)
	if err != nil {
		return job{}, err
	}
	ref, err := reference(c, s)
	if err != nil {
		return job{}, err
	}
	bucket, err := reportBucket(c, s)
	if err != nil {
		return job{}, err
	}
	var file *pendingFile
	return job{
		plan:  runs.Plan{Groups: []runs.Group{{Scenario: s, First: first, Seeds: k, Plot: true, Bucket: bucket}}},
		title: fmt.Sprintf("%s: %d seeds", s.Name, k),
		start: startOutput(out, &file),
		present: func(res *runs.Results) error {
			var buf bytes.Buffer
			if err := writeHTMLReport(c, &buf, s, res.Groups[0].Plot, ref); err != nil {
				return err
			}
			return finishOutput(c, file, out, buf.Bytes())
		},
	}, nil
}

// writeHTMLReport writes the HTML report of data, the plot data of s, to
// w, with policy ref as the reference of the comparisons (see reference).
func writeHTMLReport(c *call, w io.Writer, s *scenarios.Scenario, data *runs.PlotData, ref int) error {
	figures, err := plot.SVGFigures(data)
	if err != nil {
		return err
	}
	link, err := playgroundLink(c, s, data.Runs.FirstSeed, data.Runs.Seeds())
	if err != nil {
		return err
	}
	return report.WriteHTML(w, s, data.Runs, ref, figures, report.Provenance{Command: remakeCommand(c, s, data.Runs.FirstSeed, data.Runs.Seeds()),
		Version: readBuildVersion().short(), Playground: link})
}

// reportBucket is the timeline bucket of the HTML report: --bucket where
// the command has it, or the scenario's default.
func reportBucket(c *call, s *scenarios.Scenario) (time.Duration, error) {
	if c.IsSet("bucket") {
		return bucketFlag(c, s)
	}
	return runs.DefaultBucket(s.Server), nil
}

// remakeCommand is the command line that makes the same report again. It
// names only what decides the content, so it does not depend on --out.
func remakeCommand(c *call, s *scenarios.Scenario, first uint64, k int) string {
	parts := []string{"retrysim", c.name}
	if f := c.String("file"); f != "" {
		parts = append(parts, "--file", f)
	}
	parts = append(parts, "--scenario", s.Name, "--seed", fmt.Sprint(first))
	if k > 1 {
		parts = append(parts, "--seeds", fmt.Sprint(k))
	}
	if c.IsSet("vs") {
		parts = append(parts, "--vs", c.String("vs"))
	}
	if c.IsSet("bucket") {
		parts = append(parts, "--bucket", c.Duration("bucket").String())
	}
	if c.name == "compare" {
		parts = append(parts, "--format", "html")
	} else {
		parts = append(parts, "--out", "FILE.html")
	}
	return strings.Join(parts, " ")
}

// startOutput is a job's start for the file --out names: it creates *file
// (nothing for '-', stdout) before anything runs, and its abort removes it
// if the job fails.
func startOutput(out string, file **pendingFile) func() (func(), error) {
	return func() (func(), error) {
		if out == "-" {
			return nil, nil
		}
		f, err := createOutput("--out", out)
		if err != nil {
			return nil, err
		}
		*file = f
		return f.abort, nil
	}
}

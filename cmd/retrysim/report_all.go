package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/report/plot"
	"github.com/retrysim/retrysim/runs"
)

// allFlag is report's --all: every scenario of the file on one page.
func allFlag() cli.Flag {
	return &cli.BoolFlag{Name: "all", Usage: "every scenario of the file (the built-in ones, or --file's) on one page, each with its own summary"}
}

// allReportJob is report --all's job: every scenario of the file, each on
// its own seeds (--seed, or the scenario's) with its default reference, on
// one HTML page in out.
func allReportJob(c *call, out string) (job, error) {
	for _, f := range []string{"scenario", "vs"} {
		if c.IsSet(f) {
			return job{}, usagef("report --all takes no --%s: it reports every scenario of the file, each with its default reference", f)
		}
	}
	f, err := loadFile(c)
	if err != nil {
		return job{}, err
	}
	var plan runs.Plan
	for _, s := range f.Scenarios {
		first := s.Seed
		if c.IsSet("seed") {
			first = c.Uint64("seed")
		}
		k, err := seedCount(c, first)
		if err != nil {
			return job{}, err
		}
		bucket, err := reportBucket(c, s)
		if err != nil {
			return job{}, err
		}
		plan.Groups = append(plan.Groups, runs.Group{Scenario: s, First: first, Seeds: k, Plot: true, Bucket: bucket})
	}
	var file *pendingFile
	return job{
		plan:  plan,
		title: fmt.Sprintf("%d scenarios", len(plan.Groups)),
		start: startOutput(out, &file),
		present: func(res *runs.Results) error {
			var list []report.HTMLScenario
			for i, g := range res.Groups {
				figures, err := plot.SVGFigures(g.Plot)
				if err != nil {
					return err
				}
				list = append(list, report.HTMLScenario{Scenario: plan.Groups[i].Scenario, Runs: g.Plot.Runs, Ref: report.DefaultReference, Figures: figures})
			}
			var buf bytes.Buffer
			prov := report.Provenance{Command: remakeAllCommand(c), Version: readBuildVersion().short()}
			if err := report.WriteHTMLScenarios(&buf, list, prov); err != nil {
				return err
			}
			return finishOutput(c, file, out, buf.Bytes())
		},
	}, nil
}

// remakeAllCommand is the command line that makes report --all's page
// again; like remakeCommand, it does not depend on --out.
func remakeAllCommand(c *call) string {
	parts := []string{"retrysim report"}
	if f := c.String("file"); f != "" {
		parts = append(parts, "--file", f)
	}
	parts = append(parts, "--all")
	if c.IsSet("seed") {
		parts = append(parts, "--seed", fmt.Sprint(c.Uint64("seed")))
	}
	if c.IsSet("seeds") {
		parts = append(parts, "--seeds", fmt.Sprint(c.Uint64("seeds")))
	}
	if c.IsSet("bucket") {
		parts = append(parts, "--bucket", c.Duration("bucket").String())
	}
	parts = append(parts, "--out", "FILE.html")
	return strings.Join(parts, " ")
}

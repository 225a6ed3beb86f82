package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/runs"
)

// forceFlag is --force: run even what the work estimate refuses.
func forceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "force", Usage: "run even when the work estimate is over the limits (see docs/scenarios.md)"}
}

// checkWork refuses, unless --force is given, work whose estimate is over
// the limits (exit 2), and warns on stderr before a long run, both by the
// estimate's bound; the message gives the time a pilot run predicts. (A
// shard checks its own part, runShard; a merge runs nothing.)
func checkWork(ctx context.Context, c *call, plan runs.Plan) error {
	est := plan.Work()
	refusal := est.Refusal()
	if refusal != "" || est.Long() || c.Bool("verbose") {
		est = plan.Predict(ctx, est, nil)
	}
	if c.Bool("verbose") && refusal == "" && !est.Long() {
		fmt.Fprintf(c.stderr, "retrysim: work estimate: %s\n", est)
	}
	if refusal != "" && !c.Bool("force") {
		return usagef("refusing to start: %s (%s); make the scenario, --seeds or --param smaller, or pass --force to run it anyway", refusal, est)
	}
	if refusal != "" || est.Long() {
		fmt.Fprintf(c.stderr, "retrysim: warning: this is a long run: %s (Ctrl-C stops it)\n", est)
	}
	return nil
}

package main

import (
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/stats"
	"github.com/retrysim/retrysim/sweep"
)

// forceFlag is --force: run even what the work estimate refuses.
func forceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "force", Usage: "run even when the work estimate is over the limits (see docs/scenarios.md)"}
}

// checkWork refuses, unless --force is given, work whose estimate is over
// the limits (exit 2), and warns on stderr before a long run.
func checkWork(cmd *cli.Command, est scenarios.Estimate) error {
	if sharding(cmd) || merging(cmd) != nil {
		return nil // a shard checks its own part; a merge runs nothing
	}
	refusal := est.Refusal()
	if refusal != "" && !cmd.Bool("force") {
		return usagef("refusing to start: %s (%s); make the scenario, --seeds or --param smaller, or pass --force to run it anyway", refusal, est)
	}
	if refusal != "" || est.Long() {
		fmt.Fprintf(cmd.Root().ErrWriter, "retrysim: warning: this is a long run: %s (Ctrl-C stops it)\n", est)
	}
	return nil
}

// keptPerRun is what a multi-seed command keeps of each run of s: one
// float64 per metric reported (runs.MultiSeed).
func keptPerRun(s *scenarios.Scenario) float64 { return float64(8 * len(s.Metrics())) }

// seedsWork estimates k seeds of s whose metrics are kept.
func seedsWork(s *scenarios.Scenario, k int) scenarios.Estimate {
	e := s.Estimate(k)
	e.Kept = float64(e.Runs) * keptPerRun(s)
	return e
}

// plotWork estimates plot and report: k seeds, plus the latency histogram
// of each policy that the CDF draws (at most stats.MaxHistogramCounters
// counters each, whatever k), plus one timeline run per policy.
func plotWork(s *scenarios.Scenario, k int) scenarios.Estimate {
	e := seedsWork(s, k).Add(s.Estimate(1))
	e.Kept += histogramsKept(s)
	return e
}

// histogramsKept is the memory of the latency histograms of s's policies.
func histogramsKept(s *scenarios.Scenario) float64 {
	return 8 * stats.MaxHistogramCounters * float64(len(s.Policies))
}

// checkPlotWork is checkWork for plot and report.
func checkPlotWork(cmd *cli.Command, s *scenarios.Scenario, k int) error {
	return checkWork(cmd, plotWork(s, k))
}

// checkSweepWork is checkWork for a sweep: the sum over every point.
func checkSweepWork(cmd *cli.Command, s *scenarios.Scenario, params []sweep.Param, k int) error {
	var total scenarios.Estimate
	idx := make([]int, len(params))
	values := make([]int64, len(params))
	for {
		for i, p := range params {
			values[i] = p.Values[idx[i]]
		}
		sc, err := sweep.Apply(s, params, values)
		if err != nil {
			return usagef("--param %v", err)
		}
		total = total.Add(seedsWork(sc, k))
		i := len(idx) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < len(params[i].Values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			break
		}
	}
	return checkWork(cmd, total)
}

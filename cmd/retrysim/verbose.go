package main

import (
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/sim"
)

// verboseFlag asks a command to report the engine's work on stderr, so that
// stdout stays byte-identical from run to run.
func verboseFlag() cli.Flag {
	return &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print events processed and wall time to stderr"}
}

// writeEngineStats prints, per policy and in total, the events the engine
// processed, and the wall time of the whole run (policies run in parallel,
// so the time is for all of them together).
func writeEngineStats(w io.Writer, results []sim.Result, wall time.Duration) {
	total := 0
	for i := range results {
		r := &results[i]
		fmt.Fprintf(w, "%s: %d clients, %d events\n", r.Policy, r.Clients, r.Events)
		total += r.Events
	}
	rate := "n/a"
	if wall > 0 {
		rate = fmt.Sprintf("%.3g", float64(total)/wall.Seconds())
	}
	fmt.Fprintf(w, "total: %d events in %v wall time (%s events/s)\n", total, wall.Round(time.Microsecond), rate)
}

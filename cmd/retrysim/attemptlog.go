package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/policies/attemptlog"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/sim/simlog"
)

// attemptLogFlag is compare's --attempt-log.
func attemptLogFlag() cli.Flag {
	return &cli.StringFlag{Name: "attempt-log", Usage: "also write the run's attempt log to `FILE`: one JSON line per attempt and per operation, every policy in turn, " +
		"in virtual time from the run's origin (format retrysim/attempt-log/v1, docs/attempt-log.md); needs one seed"}
}

// withAttemptLog adds --attempt-log to a job of one seed: before the
// results are presented, every policy of the job's scenario runs again on
// its seed with the log attached (the run is the same: the simulator is
// deterministic and the log's hooks change nothing), and the log replaces
// FILE whole, or not at all.
func withAttemptLog(plan func(*call) (job, error)) func(*call) (job, error) {
	return func(c *call) (job, error) {
		j, err := plan(c)
		path := c.String("attempt-log")
		if err != nil || path == "" {
			return j, err
		}
		gr := j.plan.Groups[0]
		if gr.Seeds != 1 {
			return job{}, usagef("--attempt-log writes the log of one run per policy: it needs one seed (--seeds 1), got --seeds %d", gr.Seeds)
		}
		if err := attemptLogSupported(gr.Scenario); err != nil {
			return job{}, err
		}
		if err := notAnInput("--attempt-log", path, inputFile{"--file", c.String("file")}); err != nil {
			return job{}, err
		}
		var out *pendingFile
		start := j.start
		j.start = func() (func(), error) {
			var cleanup func()
			if start != nil {
				if cleanup, err = start(); err != nil {
					return cleanup, err
				}
			}
			if out, err = createOutput("--attempt-log", path); err != nil {
				return cleanup, err
			}
			return func() {
				out.abort()
				if cleanup != nil {
					cleanup()
				}
			}, nil
		}
		present, finish := j.present, j.finish
		j.finish = func(ctx context.Context, res *runs.Results) error {
			if err := writeAttemptLog(ctx, out, gr.Scenario, gr.First); err != nil {
				return err
			}
			if finish != nil {
				return finish(ctx, res)
			}
			return present(res)
		}
		return j, nil
	}
}

// attemptLogSupported refuses (exit 2) a scenario with a policy whose runs
// the log cannot follow attempt by attempt.
func attemptLogSupported(s *scenarios.Scenario) error {
	for i := range s.Policies {
		cfg := s.Config(i, 0)
		if _, err := simlog.Attach(&cfg, s.Policies[i].Name, attemptlog.NewHandler(nil)); err != nil {
			if errors.Is(err, simlog.ErrUnsupported) {
				return usagef("--attempt-log: %v (retry layers and hedging are not logged yet)", err)
			}
			return err
		}
	}
	return nil
}

// writeAttemptLog runs every policy of s on seed with the attempt log
// attached, in the scenario's order, one after the other, and puts the log
// in place. Its bytes depend on the scenario and seed only.
func writeAttemptLog(ctx context.Context, out *pendingFile, s *scenarios.Scenario, seed uint64) error {
	w := bufio.NewWriterSize(out.tmp, 1<<16)
	h := attemptlog.NewHandler(w)
	for i, p := range s.Policies {
		cfg := s.Config(i, seed)
		rec, err := simlog.Attach(&cfg, p.Name, h)
		if err != nil {
			return err
		}
		if _, err := sim.RunContext(ctx, cfg); err != nil {
			return fmt.Errorf("--attempt-log: policy %q: %w", p.Name, err)
		}
		if err := rec.Err(); err != nil {
			return fmt.Errorf("writing %s: %w", out.path, pathErr(err))
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", out.path, pathErr(err))
	}
	if err := out.write(nil); err != nil { // sets the mode and closes it
		return err
	}
	return out.place()
}

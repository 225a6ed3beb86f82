package main

import (
	"context"
	"io"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/sim"
)

// A call is a command at work: its flag values, its standard streams and
// the files it reads.
type call struct {
	flags
	name           string
	stdout, stderr io.Writer
	stdin          io.Reader
	// cmd is the command run; nil in a merge, whose flag values the
	// shards recorded.
	cmd *cli.Command
	// st holds the inputs read (for a shard) or the merged shards.
	st *shardState
}

// flags are the values of a command's flags, as *cli.Command gives them.
type flags interface {
	IsSet(name string) bool
	String(name string) string
	StringSlice(name string) []string
	Bool(name string) bool
	Uint64(name string) uint64
	Duration(name string) time.Duration
}

// newCall is the call of cmd.
func newCall(cmd *cli.Command) *call {
	root := cmd.Root()
	return &call{flags: cmd, name: cmd.Name, stdout: root.Writer, stderr: root.ErrWriter, stdin: root.Reader, cmd: cmd, st: &shardState{}}
}

// A job is what a command does once its flags are read: the plan of its
// runs and how to present their results. Every command that runs
// simulations builds one and hands it to execute, which alone knows
// whether the runs happen here, in one shard or come from merged shards.
type job struct {
	plan runs.Plan
	// title names the runs on the progress bar.
	title string
	// start, if set, runs after the work check and before any run, except
	// in a shard: it checks what only the output depends on and opens the
	// outputs, so that a bad path fails at once (exit 2). Its cleanup, if
	// any, runs when the command ends.
	start func() (cleanup func(), err error)
	// each, if set, is told of every run made here (runs.Mode.Each).
	each func(g, seed, policy int, r *sim.Result)
	// present writes the results; a shard writes its part instead.
	present func(*runs.Results) error
	// finish, if set, presents in place of present, with the context:
	// for a job that runs more once it has the plan's results (tune's
	// refinement, even in a merge).
	finish func(context.Context, *runs.Results) error
}

// execute plans c's job and runs it as c says: one shard of it, written
// for 'retrysim merge'; or its runs taken from the merged shards, when c is
// the merge of its shards; or here, after checking the work estimate. Then
// it presents the results (but for a shard).
func execute(ctx context.Context, c *call, plan func(*call) (job, error)) error {
	j, err := plan(c)
	if err != nil {
		return err
	}
	if sharding(c) {
		return runShard(ctx, c, j.plan)
	}
	st := merging(c)
	if st == nil {
		if err := checkWork(ctx, c, j.plan); err != nil {
			return err
		}
	}
	if j.start != nil {
		cleanup, err := j.start()
		if err != nil {
			return err
		}
		if cleanup != nil {
			defer cleanup()
		}
	}
	var res *runs.Results
	if st != nil {
		// The shards' runs are input: not fitting the plan is bad input.
		if res, err = runs.Execute(ctx, j.plan, runs.Mode{Merged: st.merged}); err != nil {
			return usageError{err}
		}
	} else {
		w := startWatch(c, j.title, j.plan)
		mode := runs.Mode{Each: j.each, Context: func(ctx context.Context, g *runs.Group) context.Context {
			return w.context(ctx, g.Scenario)
		}}
		res, err = runs.Execute(ctx, j.plan, mode)
		w.done()
		if err != nil {
			return err
		}
	}
	if j.finish != nil {
		return j.finish(ctx, res)
	}
	return j.present(res)
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	retrysim "github.com/retrysim/retrysim"
	"github.com/retrysim/retrysim/check"
	"github.com/retrysim/retrysim/cmd/retrysim/internal/progress"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
)

// Environment variables that choose a shard when --shard is not given: a
// Kubernetes Indexed Job sets JOB_COMPLETION_INDEX in every pod (Slurm's
// are in shard_slurm.go).
const (
	envIndex  = "JOB_COMPLETION_INDEX"
	envShards = "RETRYSIM_SHARDS"
)

// shardFlags are the flags of the commands whose work can be split.
func shardFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "shard", Usage: "run only shard `I/N` of the work (I counts from 0) and write a partial result for 'retrysim merge' (docs/scale.md)"},
		&decimalFlag{Name: "shards", HideDefault: true, Usage: "split the work into `N` shards; the shard is $" + envIndex + " (as a Kubernetes Indexed Job sets it) or $" + envSlurmID + " (a Slurm job array); default $" + envShards + ", or the Slurm array's size"},
		&cli.StringFlag{Name: "shard-out", Usage: "write the partial result to `PATH`; into a directory (an existing one, or one ending in /) as shard-I-of-N.json; default: stdout"},
	}
}

// maxShardOut is runs.MaxShardFileSize, lowered by tests.
var maxShardOut = runs.MaxShardFileSize

// notRecorded are the flags a shard file does not record: those that
// choose the shard and those that change nothing in the output.
var notRecorded = []string{"shard", "shards", "shard-out", "force", "verbose", "help"}

// shardState is what a call reads beyond its flags: the input files (read
// and recorded, for a shard; or, in a merge, the copies the shards
// recorded) and, in a merge, the merged runs.
type shardState struct {
	inputs []runs.Input
	merged *runs.Merged
	// used marks the inputs a merge has taken.
	used []bool
}

// merging returns the merged runs when c is 'retrysim merge' presenting
// the shards of its command.
func merging(c *call) *shardState {
	if st := c.st; st.merged != nil {
		return st
	}
	return nil
}

// splits reports whether cmd is a command whose work can be split (it
// has the shard flags): the only commands a shard file may name.
func splits(cmd *cli.Command) bool {
	return slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "shard") })
}

// sharding reports whether cmd runs one shard: --shard, --shards or the
// environment say so; or, in a Slurm array task, --shard-out.
func sharding(c *call) bool {
	if merging(c) != nil || c.cmd == nil || !splits(c.cmd) {
		return false
	}
	if c.IsSet("shard") || c.IsSet("shards") {
		return true
	}
	_, index := os.LookupEnv(envIndex)
	_, slurm := os.LookupEnv(envSlurmID)
	_, total := os.LookupEnv(envShards)
	// A Slurm array task knows its array's size, and shards when asked to
	// write a partial result.
	return (index || slurm) && total || slurm && c.IsSet("shard-out")
}

// shardOf returns the shard cmd runs: --shard I/N; or I from the
// environment (envShardIndex) and N from --shards, $RETRYSIM_SHARDS or a
// Slurm array's size (docs/scale.md#choosing-the-shard).
func shardOf(c *call) (runs.Shard, error) {
	if c.IsSet("shard") {
		sh, err := runs.ParseShard(c.String("shard"))
		if err != nil {
			return sh, usagef("--shard: %v", err)
		}
		if c.IsSet("shards") && c.Uint64("shards") != uint64(sh.Count) {
			return sh, usagef("--shard %s and --shards %d disagree on the number of shards", sh, c.Uint64("shards"))
		}
		return sh, nil
	}
	name, i, err := envShardIndex()
	if err != nil {
		return runs.Shard{}, err
	}
	var n uint64
	from := "--shards"
	switch total, ok := os.LookupEnv(envShards); {
	case c.IsSet("shards"):
		n = c.Uint64("shards")
	case ok:
		if n, err = parseDecimal(total); err != nil {
			return runs.Shard{}, usagef("$%s=%q: %v", envShards, total, err)
		}
		from = "$" + envShards
	default:
		// Only a Slurm task gets here (sharding).
		if n, err = slurmArraySize(); err != nil {
			return runs.Shard{}, err
		}
		from = "$" + envSlurmCount
	}
	sh := runs.Shard{Index: int(i), Count: int(min(n, runs.MaxShards+1))}
	if err := sh.Validate(); err != nil {
		return sh, usagef("shard from $%s=%d of %d (%s): %v", name, i, n, from, err)
	}
	if name == envSlurmID {
		return sh, slurmFits(n, from)
	}
	return sh, nil
}

// readInput reads the file named by flag (path '-' is stdin) and, when c
// runs a shard, records it for the shard file. When c merges shards, it
// returns the copy the shards recorded instead. name is how messages name
// the file.
func readInput(c *call, flag, path string) (data []byte, name string, err error) {
	st := c.st
	if st.merged != nil {
		for i, in := range st.inputs {
			if in.Flag == flag && in.Path == path && !st.used[i] {
				st.used[i] = true
				return in.Content, in.Name, nil
			}
		}
		return nil, "", usagef("the shards hold no copy of %s %s", flag, path)
	}
	switch path {
	case "":
		data, name = retrysim.BuiltinScenarios, scenarios.BuiltinFile
	case "-":
		data, err = readBounded(c.stdin, inputLimit(flag))
		name = stdinName
	default:
		data, err = readLimited(path, inputLimit(flag))
		name = path
	}
	if err != nil {
		return nil, "", err
	}
	if sharding(c) {
		st.inputs = append(st.inputs, runs.NewInput(flag, path, name, data))
	}
	return data, name, nil
}

// parseInput parses the scenario file readInput read from path (as
// scenarios.Load, ParseIn or Builtin would), reading its capacity traces
// with readTrace.
func parseInput(c *call, path, name string, data []byte) (*scenarios.File, error) {
	read := func(trace string) ([]byte, error) { return readTrace(c, trace) }
	switch path {
	case "":
		return scenarios.Parse(name, data)
	case "-":
		return scenarios.ParseWith(name, data, ".", read)
	}
	return scenarios.ParseWith(name, data, filepath.Dir(path), read)
}

// readTrace reads a capacity trace for a shard, once, and records it; when
// c merges shards, it returns the copy the shards recorded.
func readTrace(c *call, path string) ([]byte, error) {
	st := c.st
	for _, in := range st.inputs {
		if in.Flag == runs.TraceInput && in.Path == path {
			return in.Content, nil
		}
	}
	if st.merged != nil {
		return nil, fmt.Errorf("the shards hold no copy of the trace %s", path)
	}
	data, err := scenarios.ReadFile(path)
	if fi, serr := os.Stat(path); err != nil && serr == nil && fi.Size() > scenarios.MaxFileSize {
		// Every shard file carries a copy of every trace (base64), and a
		// merge reads shard files of at most runs.MaxShardFileSize.
		return nil, fmt.Errorf("%s is larger than %d MiB, the most a sharded run copies into each shard file: run it without --shard (an arrival trace from retrysim fit is smaller with a coarser --resolution)", filepath.Base(path), scenarios.MaxFileSize>>20)
	}
	if err != nil {
		return nil, err
	}
	st.inputs = append(st.inputs, runs.NewInput(runs.TraceInput, path, path, data))
	return data, nil
}

// readLimited reads a file of at most limit bytes. A scenario file over
// its limit gets scenarios.Load's message, which names the file.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readBounded(f, limit)
	if err != nil && limit == scenarios.MaxFileSize {
		_, err = scenarios.Load(path)
	}
	return data, err
}

// inputLimit is the most bytes an input named by flag may have.
func inputLimit(flag string) int64 {
	if flag == "--baseline" {
		return check.MaxBaselineSize
	}
	return scenarios.MaxFileSize
}

// canonicalArgs are the flags given to cmd, by long name in the command's
// flag order, less those notRecorded: the command line a shard records,
// for messages and for the record (the merge plans from recordFlags).
func canonicalArgs(cmd *cli.Command) []string {
	var args []string
	for _, f := range cmd.Flags {
		name := f.Names()[0]
		if slices.Contains(notRecorded, name) || !cmd.IsSet(name) {
			continue
		}
		switch v := cmd.Value(name).(type) {
		case []string:
			for _, s := range v {
				args = append(args, "--"+name, s)
			}
		case bool:
			args = append(args, "--"+name+"="+strconv.FormatBool(v))
		case time.Duration:
			args = append(args, "--"+name, v.String())
		default:
			args = append(args, "--"+name, fmt.Sprint(v))
		}
	}
	return args
}

// runShard runs cmd's shard of plan, the work the whole command does,
// and writes the partial result to --shard-out.
func runShard(ctx context.Context, c *call, plan runs.Plan) error {
	if plan.Unsplit != "" {
		return usagef("%s", plan.Unsplit)
	}
	sh, err := shardOf(c)
	if err != nil {
		return err
	}
	// Say what the shard runs, and refuse (without --force) a part over
	// the limits.
	est, seeds, all := plan.ShardWork(sh)
	est = plan.Predict(ctx, est, &sh)
	fmt.Fprintf(c.stderr, "retrysim: shard %s: %d of %d seed(s) in %d group(s): %s\n", sh, seeds, all, len(plan.Groups), est)
	if refusal := est.Refusal(); refusal != "" && !c.Bool("force") {
		return usagef("refusing to start shard %s: %s; use more shards, or pass --force to run it anyway", sh, refusal)
	}
	file, out, err := shardOut(c, sh)
	if err != nil {
		return err
	}
	if file != nil {
		defer file.abort()
	}
	total := 0
	for g, owned := range runs.OwnedSeeds(plan.Groups, sh) {
		total += len(owned) * len(plan.Groups[g].Scenario.Policies)
	}
	bar := progress.New(c.stderr, total, "shard "+sh.String())
	res, err := runs.Execute(ctx, plan, runs.Mode{Shard: &sh, Done: bar.Add})
	bar.Done()
	if err != nil {
		return err
	}
	doc, err := shardFile(c, sh, res.Parts)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := doc.Write(&buf); err != nil {
		return err
	}
	if buf.Len() > maxShardOut {
		return usagef("shard %s: its partial result is %d bytes, over the %d MiB a merge reads; use more shards", sh, buf.Len(), runs.MaxShardFileSize>>20)
	}
	return finishOutput(c, file, out, buf.Bytes())
}

// shardOut starts the file of shard sh's partial result, --shard-out (a
// file, or shard-I-of-N.json in a directory), and returns it with its path;
// no file for stdout.
func shardOut(c *call, sh runs.Shard) (*pendingFile, string, error) {
	out := c.String("shard-out")
	if out == "" || out == "-" {
		return nil, out, nil
	}
	if strings.HasSuffix(out, "/") {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, "", usagef("--shard-out %s: %v", out, pathErr(err))
		}
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		out = filepath.Join(out, fmt.Sprintf("shard-%d-of-%d.json", sh.Index, sh.Count))
	}
	file, err := createOutput("--shard-out", out)
	return file, out, err
}

// shardFile is the shard file of c's shard sh, whose runs are parts.
func shardFile(c *call, sh runs.Shard, parts []runs.GroupPart) (*runs.ShardFile, error) {
	flags, err := recordFlags(c.cmd)
	if err != nil {
		return nil, err
	}
	v := readBuildVersion()
	version := v.module + " " + v.commit
	if v.modified {
		version += " modified"
	}
	doc := &runs.ShardFile{
		Schema: runs.ShardSchema, Version: version,
		Go:      v.goVersion + " " + runtime.GOOS + "/" + runtime.GOARCH,
		Command: c.name, Args: canonicalArgs(c.cmd), Flags: flags, Shard: sh.Index, Shards: sh.Count,
		Inputs: c.st.inputs, Groups: parts,
	}
	if doc.Args == nil {
		doc.Args = []string{}
	}
	if doc.Inputs == nil {
		doc.Inputs = []runs.Input{}
	}
	return doc, nil
}

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:  "merge",
		Usage: "put the partial results of shards together (docs/scale.md)",
		UsageText: "retrysim merge SHARD.json|DIR ...\n\n" +
			"Prints (and writes) exactly what the command the shards ran prints\n" +
			"unsharded. A directory stands for its *.json files. Every shard must\n" +
			"be there once, all of the same command, flags, input files and build.\n\n" +
			"Examples:\n" +
			"   retrysim compare --seeds 1000 --shard 0/2 --shard-out results\n" +
			"   retrysim compare --seeds 1000 --shard 1/2 --shard-out results\n" +
			"   retrysim merge results",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if !cmd.Args().Present() {
				return usagef("merge needs the shard files (or a directory of them)")
			}
			var names []string
			for _, arg := range cmd.Args().Slice() {
				fi, err := os.Stat(arg)
				if err != nil {
					return usagef("%v", err)
				}
				if !fi.IsDir() {
					names = append(names, arg)
					continue
				}
				found, _ := filepath.Glob(filepath.Join(arg, "*.json"))
				if len(found) == 0 {
					return usagef("%s: no *.json shard files in it", arg)
				}
				names = append(names, found...)
			}
			// A shard file is untrusted input: every error names it and
			// exits 2.
			files := make([]*runs.ShardFile, len(names))
			for i, name := range names {
				f, err := runs.LoadShardFile(name)
				if err != nil {
					return usageError{err}
				}
				files[i] = f
			}
			merged, err := runs.MergeShards(names, files)
			if err != nil {
				return usageError{err}
			}
			return presentShards(ctx, cmd, names, files[0], merged)
		},
	}
}

// shardJobs are the job functions of the commands that shard.
var shardJobs = map[string]func(*call) (job, error){
	"compare": compareJob, "plot": plotJob, "report": reportJob, "sweep": sweepJob, "check": checkJob,
	"tune": tuneJob,
}

// presentShards plans the work of the command the shards ran, from the
// flag values and the input files ref recorded, and presents the merged
// runs as that command presents its own: it runs nothing and reads no
// input from disk.
func presentShards(ctx context.Context, cmd *cli.Command, names []string, ref *runs.ShardFile, merged *runs.Merged) error {
	// Only a command that shards: not list, serve, validate, nor merge,
	// which would read its own folder again and again.
	jobOf, ok := shardJobs[ref.Command]
	def := cmd.Root().Command(ref.Command)
	if !ok || def == nil || def.Name != ref.Command {
		return usagef("%s: ran %q, which is not a command that shards", names[0], ref.Command)
	}
	values, err := recordedFlags(def, ref.Flags)
	if err != nil {
		return usagef("%s: %v", names[0], err)
	}
	root := cmd.Root()
	c := &call{flags: values, name: ref.Command, stdout: root.Writer, stderr: root.ErrWriter, stdin: strings.NewReader(""),
		st: &shardState{merged: merged, inputs: ref.Inputs, used: make([]bool, len(ref.Inputs))}}
	err = execute(ctx, c, jobOf)
	// The recorded command's flags and the runs come from the files.
	if errors.As(err, new(usageError)) {
		return usagef("%s: %v", shardNames(names), err)
	}
	return err
}

// shardNames names the shard files of a merge in a message.
func shardNames(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return fmt.Sprintf("%s (and %d more shards)", names[0], len(names)-1)
}

// recordFlags are the values cmd read of its flags, in its flag order,
// less those notRecorded: what a shard records and a merge plans from.
func recordFlags(cmd *cli.Command) ([]runs.Flag, error) {
	out := []runs.Flag{}
	for _, f := range cmd.Flags {
		name := f.Names()[0]
		if slices.Contains(notRecorded, name) {
			continue
		}
		v := cmd.Value(name)
		if list, ok := v.([]string); ok && list == nil {
			v = []string{}
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", name, err)
		}
		out = append(out, runs.Flag{Name: name, Set: cmd.IsSet(name), Value: data})
	}
	return out, nil
}

// flagValues are the flag values a shard recorded, by name; a flag not
// recorded (notRecorded) is not set and has its type's zero value.
type flagValues map[string]recordedValue

type recordedValue struct {
	set   bool
	value any
}

// recordedFlags reads the flag values a shard of def recorded: every flag
// of def but those notRecorded, in def's order, each of its flag's type
// and accepted by its flag's validator.
func recordedFlags(def *cli.Command, recorded []runs.Flag) (flagValues, error) {
	var want []cli.Flag
	for _, f := range def.Flags {
		if !slices.Contains(notRecorded, f.Names()[0]) {
			want = append(want, f)
		}
	}
	if len(recorded) != len(want) {
		return nil, fmt.Errorf("records %d flag value(s); retrysim %s has %d flags", len(recorded), def.Name, len(want))
	}
	values := flagValues{}
	for i, f := range want {
		name, r := f.Names()[0], recorded[i]
		if r.Name != name {
			return nil, fmt.Errorf("flag value %d is of --%s; retrysim %s's flag %d is --%s", i+1, r.Name, def.Name, i+1, name)
		}
		var v any
		var err error
		switch f := f.(type) {
		case *choiceFlag:
			v, err = decodeFlag(r.Value, f.Validator)
		case *cli.StringFlag:
			v, err = decodeFlag(r.Value, f.Validator)
		case *cli.StringSliceFlag:
			v, err = decodeFlag[[]string](r.Value, nil)
		case *cli.BoolFlag:
			v, err = decodeFlag[bool](r.Value, nil)
		case *decimalFlag:
			v, err = decodeFlag[uint64](r.Value, nil)
		case *cli.DurationFlag:
			v, err = decodeFlag[time.Duration](r.Value, nil)
		default:
			err = errors.New("a flag of a type a merge does not read")
		}
		if err != nil {
			return nil, fmt.Errorf("flag --%s: %v", name, err)
		}
		values[name] = recordedValue{r.Set, v}
	}
	return values, nil
}

// decodeFlag reads a recorded flag value of type T and checks it with
// valid, if set.
func decodeFlag[T any](raw []byte, valid func(T) error) (T, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("recorded value %s is not of the flag's type", raw)
	}
	if valid != nil {
		return v, valid(v)
	}
	return v, nil
}

func (v flagValues) IsSet(name string) bool { return v[name].set }

func (v flagValues) String(name string) string { s, _ := v[name].value.(string); return s }

func (v flagValues) StringSlice(name string) []string { l, _ := v[name].value.([]string); return l }

func (v flagValues) Bool(name string) bool { b, _ := v[name].value.(bool); return b }

func (v flagValues) Uint64(name string) uint64 { n, _ := v[name].value.(uint64); return n }

func (v flagValues) Duration(name string) time.Duration {
	d, _ := v[name].value.(time.Duration)
	return d
}

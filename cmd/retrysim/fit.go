package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/fit"
	"github.com/retrysim/retrysim/scenarios"
)

// maxPolicyFile bounds a --policy file.
const maxPolicyFile = 1 << 20

func fitCommand() *cli.Command {
	return &cli.Command{
		Name:  "fit",
		Usage: "fit a log of real attempts to a scenario, to replay an incident",
		UsageText: "retrysim fit LOG [--out FILE] [--log-format attempt-log|otlp-json|csv] [--map FIELD=COLUMN,...]\n" +
			"                 [--lenient] [--window D] [--resolution D] [--log-policy NAME] [--policy PRESET|FILE]...\n" +
			"                 [--compare [--seeds K] [--vs POLICY] [--format table|markdown|csv|json|html]]\n\n" +
			"Examples:\n" +
			"   retrysim fit attempts.jsonl                       # writes attempts.fit.yaml and attempts.fit.arrivals.csv\n" +
			"   retrysim fit spans.json --policy full-jitter --compare --seeds 20\n" +
			"   retrysim fit calls.csv --map sent=ts,status=code,op=request_id --out day.yaml",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the scenario to `FILE` (default: LOG's name with .fit.yaml); the arrivals go beside it (.arrivals.csv)"},
			&choiceFlag{&cli.StringFlag{Name: "log-format", Usage: "the log's format: " + strings.Join(fit.Formats, ", ") + " (default: from its first line)"}, fit.Formats},
			&cli.StringFlag{Name: "map", Usage: "CSV columns of the fields, `FIELD=COLUMN,...` (fields: " + strings.Join(fit.CSVFields, ", ") + ")"},
			&cli.BoolFlag{Name: "lenient", Usage: "skip bad lines (counted) instead of stopping at the first"},
			&cli.DurationFlag{Name: "window", Value: time.Second, Usage: "capacity window `D`"},
			&cli.DurationFlag{Name: "resolution", Value: time.Millisecond, Usage: "arrivals are binned to `D`"},
			&cli.StringFlag{Name: "log-policy", Usage: "fit policy `NAME`'s records of a log that has several (a simulated log)"},
			&cli.StringSliceFlag{Name: "policy", Usage: "a candidate to compare with the policy that ran: a policy type or preset `NAME`, or a YAML FILE of one policy (repeatable)"},
			&cli.BoolFlag{Name: "compare", Usage: "then compare the policy that ran with the candidates on the fitted scenario, as 'retrysim compare --file' does"},
			seedsFlag(),
			vsFlag(),
			formatFlag(compareFormats()),
			verboseFlag(),
			forceFlag(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usagef("fit takes one LOG, got %q", cmd.Args().Slice())
			}
			c := newCall(cmd)
			out, err := fitLog(c, cmd.Args().First())
			if err != nil || !c.Bool("compare") {
				return err
			}
			return execute(ctx, &call{flags: fittedFlags{c.flags, out}, name: "compare", stdout: c.stdout, stderr: c.stderr, stdin: c.stdin, cmd: c.cmd, st: &shardState{}}, compareJob)
		},
	}
}

// fittedFlags are fit's flags as compare reads them: --file is the fitted
// scenario.
type fittedFlags struct {
	flags
	file string
}

func (f fittedFlags) String(name string) string {
	switch name {
	case "file":
		return f.file
	case "scenario", "shard", "shards", "merge", "param":
		return ""
	}
	return f.flags.String(name)
}

func (f fittedFlags) IsSet(name string) bool {
	switch name {
	case "file":
		return true
	case "seed", "scenario", "param":
		return false
	}
	return f.flags.IsSet(name)
}

// fitLog fits the log at path and writes the scenario and its arrivals;
// it returns the scenario's path.
func fitLog(c *call, path string) (string, error) {
	m, err := fit.ParseMap(c.String("map"))
	if err != nil {
		return "", usageError{err}
	}
	for _, d := range []string{"window", "resolution"} {
		if c.Duration(d) <= 0 {
			return "", usagef("--%s must be > 0, got %v", d, c.Duration(d))
		}
	}
	candidates, err := candidatePolicies(c.StringSlice("policy"))
	if err != nil {
		return "", err
	}
	out := c.String("out")
	if out == "" {
		out = strings.TrimSuffix(path, filepath.Ext(path)) + ".fit.yaml"
	}
	arrivals := strings.TrimSuffix(out, filepath.Ext(out)) + ".arrivals.csv"
	for _, o := range []string{out, arrivals} {
		if filepath.Clean(o) == filepath.Clean(path) {
			return "", usagef("--out %s would overwrite the log", o)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", usagef("%v", pathErr(err))
	}
	defer f.Close()
	rd, err := fit.Open(f, c.String("log-format"), fit.Options{Name: path, Lenient: c.Bool("lenient"), Map: m})
	if err != nil {
		return "", usageError{err}
	}
	res, err := fit.Fit(rd, fit.Settings{Window: c.Duration("window"), Resolution: c.Duration("resolution"), Policy: c.String("log-policy")})
	if err != nil {
		var le *fit.LineError
		if errors.As(err, &le) {
			return "", usageError{err}
		}
		return "", usagef("%s: %v", path, err)
	}
	res.Name = filepath.Base(path)
	var yml, arr bytes.Buffer
	if err := res.WriteArrivals(&arr); err != nil {
		return "", err
	}
	if err := res.WriteScenario(&yml, fit.Output{Scenario: "fitted", Arrivals: filepath.Base(arrivals), Candidates: candidates, Format: rd.Format()}); err != nil {
		return "", err
	}
	pa, err := createOutput("--out", arrivals)
	if err != nil {
		return "", err
	}
	defer pa.abort()
	py, err := createOutput("--out", out)
	if err != nil {
		return "", err
	}
	defer py.abort()
	if err := pa.commit(arr.Bytes()); err != nil {
		return "", err
	}
	// The file must load as written: a candidate the loader refuses is
	// named with its line.
	if _, err := scenarios.ParseIn(out, yml.Bytes(), filepath.Dir(out)); err != nil {
		return "", usageError{err}
	}
	if err := py.commit(yml.Bytes()); err != nil {
		return "", err
	}
	pf, lat := res.FitPolicy(), res.FitLatency()
	fmt.Fprintf(c.stderr, "retrysim fit: %s: %d attempts, %d operations, %d windows of %v", path, res.Attempts, res.Operations, len(res.Windows), res.Window)
	if res.Skipped > 0 {
		fmt.Fprintf(c.stderr, ", %d bad lines skipped", res.Skipped)
	}
	if n, why := res.Chained(); n > 0 {
		fmt.Fprintf(c.stderr, ", %d sessions chained", n)
	} else if why != "" {
		fmt.Fprintf(c.stderr, ", sessions not chained (%s)", why)
	}
	fmt.Fprintf(c.stderr, "\n  response time %s (largest quantile error %.1f%%); policy as run: %s (%s)\n",
		lat.YAML, 100*lat.Error, strings.Join(pf.YAML(), ", "), pf.Describe())
	if fits, err := res.NearestPresets(); err == nil && len(fits) > 0 && pf.Samples > 0 {
		fmt.Fprintf(c.stderr, "  nearest preset: %s (%.1f%% of the logged backoffs in its ranges; see the file's comments)\n", fits[0].Name, 100*fits[0].Share())
	}
	fmt.Fprintf(c.stderr, "  wrote %s and %s; compare with: retrysim compare --file %s --seeds 20\n", out, arrivals, out)
	return out, nil
}

// candidatePolicies reads --policy: a YAML file of one policy mapping, or
// a policy type or preset name.
func candidatePolicies(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if fi, err := os.Stat(a); err == nil && !fi.IsDir() {
			f, err := os.Open(a)
			if err != nil {
				return nil, usagef("--policy %s: %v", a, pathErr(err))
			}
			data, err := readBounded(f, maxPolicyFile)
			f.Close()
			if err != nil {
				return nil, usagef("--policy %s: %v", a, err)
			}
			out = append(out, string(data))
			continue
		}
		if strings.ContainsAny(a, "/\\:\n ") || a == "" {
			return nil, usagef("--policy %q: no such file, and not a policy type or preset name", a)
		}
		if a == fit.AsRun {
			return nil, usagef("--policy %s: that is the fitted policy's name; name the candidate otherwise", a)
		}
		out = append(out, "name: "+a)
	}
	return out, nil
}

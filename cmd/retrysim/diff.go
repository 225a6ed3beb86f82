package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/check"
	"github.com/retrysim/retrysim/report"
)

// diffWorse is returned by 'diff --fail-on worse' when a metric got worse
// beyond its tolerance: the input was fine, the change was not (exit 1).
type diffWorse struct{ n int }

func (e diffWorse) Error() string {
	return fmt.Sprintf("diff: %d metric(s) worse beyond tolerance", e.n)
}

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:  "diff",
		Usage: "compare two JSON reports, metric by metric, paired by seed",
		UsageText: "retrysim diff OLD.json NEW.json [--format table|markdown|json|csv]\n" +
			"              [--tolerance [METRIC=]PCT ...] [--alpha 0.05] [--all]\n" +
			"              [--fail-on worse]\n\n" +
			"OLD and NEW are reports of 'retrysim compare --format json', both on one\n" +
			"seed or both with the same --seed and --seeds N (from any retrysim\n" +
			"version or scenario file with this schema). With many seeds each metric\n" +
			"is paired seed by seed and tested (two-sided signed-rank); all the tests\n" +
			"are one family, whose chance of showing any change when only the random\n" +
			"draws differ is at most --alpha (Holm's correction; docs/statistics.md).\n" +
			"'~' means no significant difference. A latency is not compared for a\n" +
			"policy whose completions changed: it describes other operations. The\n" +
			"table shows the metrics that changed, then a count of the rest (--all:\n" +
			"every metric); JSON and CSV carry every metric.\n" +
			"Exits 0 (also when something is worse) unless --fail-on worse;\nsee docs/ci.md.\n\n" +
			"Examples:\n" +
			"   retrysim compare --seeds 30 --format json > old.json\n" +
			"   retrysim compare --seeds 30 --format json --file mine.yaml > new.json\n" +
			"   retrysim diff old.json new.json --format markdown",
		Flags: []cli.Flag{
			formatFlag(check.DiffFormats()),
			&cli.StringSliceFlag{Name: "tolerance", Usage: "how much worse a metric may get before it counts as worse beyond tolerance: `[METRIC=]PCT` (repeatable; default 0 on one seed, 5% over many)"},
			alphaFlag(),
			&cli.BoolFlag{Name: "all", Usage: "show every metric in the table, not only those that changed"},
			&cli.StringFlag{Name: "fail-on", Usage: "exit 1 when a metric is `worse` beyond its tolerance", Validator: func(s string) error {
				if s != "worse" {
					return fmt.Errorf("--fail-on %q: the only value is worse", s)
				}
				return nil
			}},
		},
		Action: diffAction,
	}
}

// diffAction reads the two reports and writes their comparison.
func diffAction(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() != 2 {
		return usagef("diff takes two reports, OLD.json and NEW.json, got %d argument(s)", cmd.Args().Len())
	}
	oldPath, newPath := cmd.Args().Get(0), cmd.Args().Get(1)
	if oldPath == "-" && newPath == "-" {
		return usagef("'-' (standard input) can be given only once")
	}
	tol, err := check.ParseTolerances(cmd.StringSlice("tolerance"))
	if err != nil {
		return usagef("--tolerance: %v", err)
	}
	alpha, err := alphaOf(cmd.String("alpha"))
	if err != nil {
		return err
	}
	read := func(path string) (*check.SeedSet, string, error) {
		doc, multi, err := readReport(newCall(cmd), path)
		if err != nil {
			return nil, "", usageError{err}
		}
		if path == "-" {
			path = stdinName
		}
		if doc != nil {
			return check.FromDocument(doc), path, nil
		}
		return multi, path, nil
	}
	old, oldName, err := read(oldPath)
	if err != nil {
		return err
	}
	now, newName, err := read(newPath)
	if err != nil {
		return err
	}
	writeOrigins(newCall(cmd), oldName, old.Origin, newName, now.Origin)
	if !tol.DefaultSet {
		tol.Default = check.DefaultTolerance(old)
	}
	d, err := check.NewDiff(oldName, old, newName, now, tol, alpha)
	if err != nil {
		return usageError{err}
	}
	d.All = cmd.Bool("all")
	if err := check.WriteDiff(cmd.Root().Writer, format(newCall(cmd)), d); err != nil {
		return err
	}
	if n := d.Worse(); n > 0 && cmd.String("fail-on") == "worse" {
		return diffWorse{n}
	}
	return nil
}

// readReport reads a JSON report named by path ('-': stdin): single-seed
// (doc) or multi-seed (multi).
func readReport(c *call, path string) (doc *report.Document, multi *check.SeedSet, err error) {
	var data []byte
	name := path
	if path == "-" {
		name = stdinName
		data, err = readBounded(c.stdin, check.MaxBaselineSize)
	} else {
		data, err = readLimited(path, check.MaxBaselineSize)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, pathErr(err))
	}
	return parseReport(name, data)
}

// alphaFlag is check's and diff's --alpha: the family-wise false-alarm
// rate of the paired tests over seeds.
func alphaFlag() cli.Flag {
	return &cli.StringFlag{Name: "alpha", Value: "0.05", Usage: "the chance, at most, that anything reads as changed (and fails) when only the random draws differ, over every paired test of the run together: `P` such as 0.05 or 1%"}
}

// alphaOf reads --alpha.
func alphaOf(s string) (float64, error) {
	a, err := check.ParseAlpha(s)
	if err != nil {
		return 0, usagef("--alpha: %v", err)
	}
	return a, nil
}

// writeOrigins says on stderr where the reports of a diff came from (in
// the table and markdown formats) and warns, in every format, when they
// are of other worlds or --param values (check.CompareOrigins).
func writeOrigins(c *call, oldName string, old *report.Origin, newName string, now *report.Origin) {
	if f := format(c); f == report.Table || f == report.Markdown {
		for _, o := range []struct {
			name   string
			origin *report.Origin
		}{{oldName, old}, {newName, now}} {
			if o.origin != nil {
				fmt.Fprintf(c.stderr, "retrysim: %s: %s\n", o.name, o.origin.Describe())
			}
		}
	}
	for _, w := range check.CompareOrigins(oldName, old, newName, now) {
		fmt.Fprintln(c.stderr, "retrysim: warning:", w)
	}
}

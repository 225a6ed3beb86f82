package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/internal/suggest"
	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/scenarios"
)

// run is the whole CLI: it parses args (args[0] is the program name) and
// writes to stdout and stderr. It never exits the process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var helpTopic error // set when 'retrysim help NAME' names no command
	var quiet bool      // --quiet
	var wide bool       // --wide
	app := &cli.Command{
		Name:  "retrysim",
		Usage: "compare retry policies against a simulated overloaded API",
		Description: "retrysim runs seeded bursts of clients against a model API server whose\n" +
			"capacity changes over time, and compares retry policies by completions,\n" +
			"attempts and give-ups. The same scenario and seed always give\n" +
			"byte-identical output.\n\n" +
			"Built-in scenarios travel inside the binary; --file loads your own\n" +
			"(docs/scenarios.md). Exit status: 0 success, 1 failed run or check,\n" +
			"2 usage or input error, 3 internal error, 130 interrupted (Ctrl-C).",
		Version:   readBuildVersion().module,
		Writer:    stdoutWriter{stdout, &wide},
		ErrWriter: quietWriter{stderr, &quiet},
		Flags:     []cli.Flag{quietFlag(&quiet), wideFlag(&wide)},
		// Errors are reported once, by main; usage errors exit 2.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		OnUsageError: func(_ context.Context, cmd *cli.Command, err error, _ bool) error {
			return teachFlagError(cmd, err)
		},
		CommandNotFound: func(_ context.Context, _ *cli.Command, name string) {
			helpTopic = usagef("no help for %q: there is no such command; run 'retrysim --help'", name)
		},
		// 'retrysim completion bash|zsh|fish|pwsh' prints a completion script.
		EnableShellCompletion:           true,
		ConfigureShellCompletionCommand: configureCompletion,
		Commands:                        commands(),
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				var names []string
				for _, c := range cmd.Commands {
					names = append(names, c.Name)
				}
				return usagef("unknown command %q%s; run 'retrysim --help'", cmd.Args().First(), suggest.DidYouMean(cmd.Args().First(), names))
			}
			return cli.ShowAppHelp(cmd)
		},
	}
	completing := len(args) > 0 && args[len(args)-1] == "--generate-shell-completion"
	for _, c := range app.Commands {
		c.OnUsageError = app.OnUsageError
		// Repeated flags such as --param or --baseline take one value each;
		// a comma inside a value is part of it.
		c.DisableSliceFlagSeparator = true
	}
	if !completing {
		refuseRepeats(app)
	}
	useFlagHelp(app)
	err := app.Run(ctx, args)
	switch {
	case helpTopic != nil:
		return helpTopic
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return errInterrupted
	}
	return err
}

// commands are retrysim's commands, in the order help lists them.
func commands() []*cli.Command {
	return []*cli.Command{compareCommand(), listCommand(), plotCommand(), sweepCommand(), reportCommand(), checkCommand(),
		mergeCommand(), serveCommand(), validateCommand(), showCommand(), diffCommand(), completeCommand(), tuneCommand(),
		playgroundCommand(), schemaCommand(), fitCommand()}
}

// refuseRepeats makes cmd and its subcommands refuse a flag that takes one
// value when it is given more than once (urfave/cli keeps the last one).
// Slice flags (--param, --baseline, check's --scenario) repeat by design.
func refuseRepeats(cmd *cli.Command) {
	before := cmd.Before
	cmd.Before = func(ctx context.Context, c *cli.Command) (context.Context, error) {
		for _, f := range c.Flags {
			if m, ok := f.(cli.DocGenerationMultiValueFlag); ok && m.IsMultiValueFlag() {
				continue
			}
			if n, ok := f.(cli.Countable); ok && n.Count() > 1 {
				return ctx, usagef("--%s is given %d times; give it once (only a repeatable flag takes several values)", f.Names()[0], n.Count())
			}
		}
		if before != nil {
			return before(ctx, c)
		}
		return ctx, nil
	}
	for _, sub := range cmd.Commands {
		refuseRepeats(sub)
	}
}

// fileFlag is shared by the commands that read scenarios.
func fileFlag() cli.Flag {
	return &cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "scenario `FILE` to load instead of the built-in scenarios ('-' reads stdin)"}
}

// choiceFlag is a string flag that takes one of a fixed list of values,
// which the bash completion offers.
type choiceFlag struct {
	*cli.StringFlag
	choices []string
}

// formatFlag is --format, accepting one of formats (the first is the default).
func formatFlag(formats []report.Format) cli.Flag {
	names := report.FormatNames(formats)
	choices := make([]string, len(formats))
	for i, f := range formats {
		choices[i] = string(f)
	}
	return &choiceFlag{&cli.StringFlag{Name: "format", Value: string(formats[0]), Usage: "output format: " + names,
		Validator: func(s string) error {
			if !slices.Contains(formats, report.Format(s)) {
				return fmt.Errorf("unknown format %q (want one of %s)", s, names)
			}
			return nil
		}}, choices}
}

// format is the --format flag's value.
func format(c *call) report.Format { return report.Format(c.String("format")) }

// stdinName names standard input in messages, for --file - and --baseline -.
const stdinName = "<stdin>"

// loadFile returns the scenario file named by --file ('-' reads stdin), or
// the built-in one.
func loadFile(c *call) (*scenarios.File, error) {
	path := c.String("file")
	var (
		f   *scenarios.File
		err error
	)
	switch {
	case sharding(c) || merging(c) != nil:
		// The shard file keeps the scenario file's bytes, and its traces'.
		var data []byte
		var name string
		if data, name, err = readInput(c, "--file", path); err == nil {
			f, err = parseInput(c, path, name, data)
		}
	case path == "":
		f, err = scenarios.Builtin()
	case path == "-":
		var data []byte
		if data, err = readBounded(c.stdin, scenarios.MaxFileSize); err == nil {
			f, err = scenarios.ParseIn(stdinName, data, ".")
		} else {
			err = fmt.Errorf("%s: %w", stdinName, err)
		}
	default:
		f, err = scenarios.Load(path)
	}
	if err != nil {
		return nil, usageError{err}
	}
	return f, nil
}

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "compare the policies of a scenario, on one seed or many",
		UsageText: "retrysim compare [--scenario NAME | --file PATH] [--seed N] [--seeds K]\n" +
			"                 [--vs POLICY] [--param NAME=VALUE]... [--attempt-log FILE]\n" +
			"                 [--format table|markdown|csv|json|html]\n" +
			"                 [--force]\n\n" +
			"Examples:\n" +
			"   retrysim compare                  # default scenario, as a table\n" +
			"   retrysim compare --scenario long-outage --seed 7\n" +
			"   retrysim compare --file my.yaml --format json > results.json\n" +
			"   retrysim compare --seeds 1000     # mean, 95% CI, median, p5, p95\n" +
			"                                     # (~ = no significant difference)\n" +
			"   retrysim compare --seeds 100 --vs gated  # compare with gated\n" +
			"   retrysim compare --param clients=40      # one point of a sweep\n" +
			"   retrysim compare --attempt-log run.jsonl # also every attempt, as JSON",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "scenario", Aliases: []string{"s"}, Usage: "scenario `NAME` to run (default: the file's default scenario; see 'retrysim list')"},
			fileFlag(),
			&decimalFlag{Name: "seed", HideDefault: true, Usage: "random seed `N` (default: the scenario's own seed)"},
			seedsFlag(),
			vsFlag(),
			setParamFlag(),
			formatFlag(compareFormats()),
			attemptLogFlag(),
			verboseFlag(),
			forceFlag(),
		}, shardFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("compare takes no arguments, got %q", cmd.Args().Slice())
			}
			return execute(ctx, newCall(cmd), withAttemptLog(compareJob))
		},
	}
}

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list the scenarios, policy types and other kinds",
		UsageText: "retrysim list [--file PATH]\n\n'retrysim show NAME' prints a built-in scenario's YAML.",
		Flags:     []cli.Flag{fileFlag()},
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("list takes no arguments, got %q", cmd.Args().Slice())
			}
			f, err := loadFile(newCall(cmd))
			if err != nil {
				return err
			}
			w := cmd.Root().Writer
			fmt.Fprintf(w, "Scenarios in %s:\n", f.Path)
			width := 0
			for _, s := range f.Scenarios {
				width = max(width, len(s.Name))
			}
			for _, s := range f.Scenarios {
				mark := " "
				if s.Name == f.Default {
					mark = "*"
				}
				fmt.Fprintf(w, " %s %-*s  %s\n", mark, width, s.Name, s.Description)
			}
			hint := ""
			if cmd.String("file") == "" {
				hint = "; 'retrysim show NAME' prints its YAML"
			}
			fmt.Fprintf(w, "(* runs when no --scenario is given%s)\n\nPolicy types:\n", hint)
			for _, t := range kinds.PolicyTypes() {
				fmt.Fprintf(w, "   %-19s  %s\n", t.Name, t.About)
			}
			// The other kinds come from the registry, in its order.
			for _, c := range []struct {
				category kinds.Category
				title    string
			}{
				{kinds.Coordinators, "Coordinators (shared by a policy's operations)"},
				{kinds.Servers, "Server types (server: type:, the first by default)"},
				{kinds.Workloads, "Workload types (clients: type:, the first by default)"},
			} {
				fmt.Fprintf(w, "\n%s:\n", c.title)
				for _, k := range kinds.Kinds(c.category) {
					fmt.Fprintf(w, "   %-19s  %s\n", k.Name, k.About)
				}
			}
			for _, l := range kinds.ListedKinds() {
				fmt.Fprintf(w, "\n%s:\n   %s\n", l.Title, l.Names)
			}
			return nil
		},
	}
}

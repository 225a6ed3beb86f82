package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/scenarios"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:  "show",
		Usage: "print a built-in scenario's YAML, to start a file of your own",
		UsageText: "retrysim show NAME\n\n" +
			"Prints the scenario's entry of the built-in scenarios.yaml as it is,\n" +
			"comments included, under a 'scenarios:' line, so the output loads\n" +
			"with --file. 'retrysim list' names the scenarios.\n\n" +
			"Example:\n" +
			"   retrysim show overload-burst > my.yaml  # edit, then:\n" +
			"   retrysim compare --file my.yaml",
		Action: func(_ context.Context, cmd *cli.Command) error {
			f, err := scenarios.Builtin()
			if err != nil {
				return err
			}
			if cmd.Args().Len() != 1 {
				return usagef("show takes one scenario NAME, got %d arguments; 'retrysim list' names them", cmd.Args().Len())
			}
			name := cmd.Args().First()
			if _, err := f.Lookup(name); err != nil {
				return usageError{err}
			}
			out, err := scenarios.ShowBuiltin(name)
			if err != nil {
				return err // the embedded file parsed, so this is a bug
			}
			_, err = cmd.Root().Writer.Write(out)
			return err
		},
	}
}

package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/export"
	"github.com/retrysim/retrysim/scenarios"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:  "show",
		Usage: "print a built-in scenario's YAML, or a policy as SDK code",
		UsageText: "retrysim show NAME\n" +
			"retrysim show --policy NAME --for TARGET [--scenario S | --file F]\n\n" +
			"Prints the scenario's entry of the built-in scenarios.yaml as it is,\n" +
			"comments included, under a 'scenarios:' line, so the output loads\n" +
			"with --file. 'retrysim list' names the scenarios.\n\n" +
			"Example:\n" +
			"   retrysim show overload-burst > my.yaml  # edit, then:\n" +
			"   retrysim compare --file my.yaml\n\n" +
			"With --policy and --for it prints the client set-up that runs the\n" +
			"scenario's policy in that SDK (docs/export.md), and says on stderr\n" +
			"what the SDK cannot express. Targets:\n" +
			"   " + export.TargetNames() + ".\n" +
			"   retrysim show --policy full-jitter --for anthropic-typescript > retry.ts",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "policy", Usage: "with --for: the scenario's policy `NAME` to carry into an SDK"},
			&cli.StringFlag{Name: "for", Usage: "with --policy: the `TARGET` SDK, one of " + export.TargetNames()},
			&cli.StringFlag{Name: "scenario", Aliases: []string{"s"}, Usage: "with --policy: the scenario `NAME` that holds it (default: the file's default scenario)"},
			fileFlag(),
		},
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.IsSet("policy") || cmd.IsSet("for") || cmd.IsSet("scenario") || cmd.IsSet("file") {
				return showPolicy(cmd)
			}
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

// showPolicy is show --policy NAME --for TARGET: the policy as code for an
// SDK, and what that code leaves out on stderr.
func showPolicy(cmd *cli.Command) error {
	name, target := cmd.String("policy"), cmd.String("for")
	if name == "" || target == "" {
		return usagef("--policy and --for go together: the scenario's policy and the SDK to carry it into (%s)", export.TargetNames())
	}
	if cmd.Args().Present() {
		return usagef("show --policy takes no arguments (name the scenario with --scenario), got %q", cmd.Args().Slice())
	}
	t, err := export.LookupTarget(target)
	if err != nil {
		return usagef("--for: %v", err)
	}
	s, _, err := scenarioAndSeed(cmd)
	if err != nil {
		return err
	}
	i, err := s.PolicyIndex(name)
	if err != nil {
		return usagef("--policy %q: %v", name, err)
	}
	res, err := export.Write(cmd.Root().Writer, &s.Policies[i], t, export.Source{File: cmd.String("file"), Scenario: s.Name})
	if err != nil {
		return err
	}
	stderr := cmd.Root().ErrWriter
	switch {
	case res.SDKOnly:
		fmt.Fprintf(stderr, "retrysim show: %s's own retries run %s: only its settings are printed\n", t.Name, name)
	case len(res.Unexpressed) == 0:
		fmt.Fprintf(stderr, "retrysim show: %s: the code printed runs all of %s\n", t.Name, name)
	default:
		fmt.Fprintf(stderr, "retrysim show: %s: the code printed does not express, of %s:\n", t.Name, name)
		for _, u := range res.Unexpressed {
			fmt.Fprintf(stderr, "  - %s\n", u)
		}
	}
	return nil
}

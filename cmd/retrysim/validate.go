package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

func validateCommand() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "run a scenario for real and compare with the simulation",
		UsageText: "retrysim validate [--scenario NAME | --file PATH] [--speed X] [--seed N]\n\n" +
			"Serves the scenario's server on a loopback port and runs its clients as\n" +
			"goroutines making real HTTP requests through the policies package, one\n" +
			"policy after another; prints the simulated and measured metrics side by\n" +
			"side with the tolerance and a verdict. Exit status 0 when every policy\n" +
			"agrees, 1 when one does not. At most 10,000 clients.\n\n" +
			"Examples:\n" +
			"   retrysim validate                    # the default scenario at speed 3\n" +
			"   retrysim validate --scenario rate-limited-burst --speed 5",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "scenario", Aliases: []string{"s"}, Usage: "scenario `NAME` to validate (default: the file's default scenario)"},
			fileFlag(),
			validateSpeedFlag(),
			&decimalFlag{Name: "seed", HideDefault: true, Usage: "random seed `N` (default: the scenario's own seed)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("validate takes no arguments, got %q", cmd.Args().Slice())
			}
			s, seed, err := scenarioAndSeed(cmd)
			if err != nil {
				return err
			}
			speed := 0.0 // serve.AutoSpeed's
			if cmd.IsSet("speed") {
				speed = cmd.Float("speed")
			}
			stderr := cmd.Root().ErrWriter
			cs, err := serve.Validate(ctx, serve.Validation{Model: s.Server, Workload: s.Workload, Policies: s.Policies,
				Seed: seed, Speed: speed,
				OnPolicy: func(i int, p sim.Policy) {
					fmt.Fprintf(stderr, "retrysim validate: policy %d/%d, %s, for real\n", i+1, len(s.Policies), p.Name)
				}})
			// What validate cannot run is refused before any run: bad input.
			var unsupported *serve.UnsupportedError
			var tooMany *serve.TooManyClientsError
			if errors.As(err, &unsupported) || errors.As(err, &tooMany) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			w := cmd.Root().Writer
			if len(cs) > 0 {
				speed = cs[0].Speed
			}
			fmt.Fprintf(w, "scenario %s, seed %d, speed %g\n", s.Name, seed, speed)
			if err := serve.WriteComparisons(w, cs); err != nil {
				return err
			}
			bad := 0
			for i := range cs {
				if !cs[i].Agree() {
					bad++
				}
			}
			if bad > 0 {
				return fmt.Errorf("validate: %d of %d policies disagree with the simulation beyond the tolerance (at a lower --speed real scheduling delays matter less)", bad, len(cs))
			}
			return nil
		},
	}
}

// validateSpeedFlag is validate's --speed: by default serve.AutoSpeed's.
func validateSpeedFlag() cli.Flag {
	f := speedFlag(serve.DefaultSpeed).(*cli.FloatFlag)
	f.HideDefault = true
	f.Usage += fmt.Sprintf(" (default: %d, or less for a scenario that would send more than %d requests a second)", serve.DefaultSpeed, serve.MaxRealRate)
	return f
}

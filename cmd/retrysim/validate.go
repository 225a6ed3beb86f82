package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/scenarios"
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
			"With --exec CMD it runs a client program of any language instead (sh -c\n" +
			"CMD, with RETRYSIM_BASE_URL, ANTHROPIC_BASE_URL, OPENAI_BASE_URL and\n" +
			"RETRYSIM_CLIENTS set; harnesses under clients/), counts from the server's\n" +
			"side what its callers did, and compares that with the simulation of the\n" +
			"scenario's policy named by --preset, over --seeds seeds. See docs/serve.md.\n\n" +
			"Examples:\n" +
			"   retrysim validate                    # the default scenario at speed 3\n" +
			"   retrysim validate --scenario rate-limited-burst --speed 5\n" +
			"   retrysim validate --file F --exec 'node clients/node/anthropic.mjs' \\\n" +
			"                     --preset anthropic-sdk-typescript",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "scenario", Aliases: []string{"s"}, Usage: "scenario `NAME` to validate (default: the file's default scenario)"},
			fileFlag(),
			validateSpeedFlag(),
			&decimalFlag{Name: "seed", HideDefault: true, Usage: "random seed `N` (default: the scenario's own seed)"},
			&cli.StringFlag{Name: "exec", Usage: "run the client program `CMD` (sh -c) instead of retrysim's own clients"},
			&cli.StringFlag{Name: "preset", Usage: "with --exec: the scenario's policy `NAME` the program is compared with"},
			&cli.IntFlag{Name: "seeds", Value: 100, Usage: "with --exec: simulate `K` seeds for the tolerances"},
			&cli.BoolFlag{Name: "counts-only", Usage: "with --exec: leave the give-up times out of the verdict (callers acting in step run late together)"},
			&choiceFlag{&cli.StringFlag{Name: "format", Value: "table", Usage: "with --exec: output format: table or json"}, []string{"table", "json"}},
		},
		Action: validateAction,
	}
}

// validateAction runs the scenario's clients for real (or --exec's program)
// and compares them with the simulation.
func validateAction(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usagef("validate takes no arguments, got %q", cmd.Args().Slice())
	}
	s, seed, err := scenarioAndSeed(cmd)
	if err != nil {
		return err
	}
	if _, own := s.Workload.(sim.Prioritizer); own || len(s.Priorities) > 0 && (cmd.IsSet("exec") || cmd.IsSet("preset")) {
		// The model would read priorities the real clients do not send:
		// only retrysim's own clients send the shares' (PriorityHeader).
		return usagef("validate: scenario %s gives its operations priorities, which only validate's own clients send (the %s header), by the clients' priorities shares; simulate it with 'retrysim compare'", s.Name, serve.PriorityHeader)
	}
	if cmd.IsSet("exec") || cmd.IsSet("preset") {
		return validateExec(ctx, cmd, s, seed)
	}
	speed := 0.0 // serve.AutoSpeed's
	if cmd.IsSet("speed") {
		speed = cmd.Float("speed")
	}
	stderr := cmd.Root().ErrWriter
	cs, err := serve.Validate(ctx, serve.Validation{Model: s.Server, Workload: s.Workload, Policies: s.Policies, Priorities: s.Priorities,
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
}

// validateExec is validate --exec: a program's callers against the
// scenario's server, compared with the simulation of --preset.
func validateExec(ctx context.Context, cmd *cli.Command, s *scenarios.Scenario, seed uint64) error {
	command, name := cmd.String("exec"), cmd.String("preset")
	if command == "" || name == "" {
		return usagef("--exec and --preset go together: the program to run and the scenario's policy it is compared with")
	}
	i, err := s.PolicyIndex(name)
	if err != nil {
		return usagef("--preset %q: %v", name, err)
	}
	pol := &s.Policies[i]
	clients, ok := kinds.ClientsAllAtOnce(s.Workload)
	if !ok {
		return usagef("--exec: scenario %s must have a burst of clients that all start at once (clients: {count: N}, no spread); the program starts its callers together", s.Name)
	}
	if f := cmd.String("format"); f != "table" && f != "json" {
		return usagef("--format: want table or json, got %q", f)
	}
	speed := 1.0
	if cmd.IsSet("speed") {
		speed = cmd.Float("speed")
	}
	res, err := serve.Exec(ctx, serve.ExecValidation{Model: s.Server, Clients: clients, Policy: *pol, Seed: seed,
		Seeds: int(cmd.Int("seeds")), Speed: speed, CountsOnly: cmd.Bool("counts-only"), Command: command, Output: cmd.Root().ErrWriter})
	var unsupported *serve.UnsupportedError
	if errors.As(err, &unsupported) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	w := cmd.Root().Writer
	if cmd.String("format") == "json" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	} else if err := serve.WriteExecResult(w, res); err != nil {
		return err
	}
	if !res.Agree() {
		return fmt.Errorf("validate --exec: %s does not behave as its preset %s predicts", command, name)
	}
	return nil
}

// validateSpeedFlag is validate's --speed: by default serve.AutoSpeed's.
func validateSpeedFlag() cli.Flag {
	f := speedFlag(serve.DefaultSpeed).(*cli.FloatFlag)
	f.HideDefault = true
	f.Usage += fmt.Sprintf(" (default: %d, or less for a scenario that would send more than %d requests a second)", serve.DefaultSpeed, serve.MaxRealRate)
	return f
}

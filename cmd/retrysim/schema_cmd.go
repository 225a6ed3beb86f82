package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/scenarios"
)

// schemaCommand prints the JSON Schema of a scenario file, for editors.
func schemaCommand() *cli.Command {
	return &cli.Command{
		Name:  "schema",
		Usage: "print the JSON Schema of a scenario file, for editors",
		UsageText: "retrysim schema > retrysim.schema.json\n\n" +
			"Then begin a scenario file with\n" +
			"# yaml-language-server: $schema=retrysim.schema.json",
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("schema takes no arguments, got %q", cmd.Args().Slice())
			}
			out, err := scenarios.JSONSchema()
			if err != nil {
				return err
			}
			_, err = cmd.Root().Writer.Write(out)
			return err
		},
	}
}

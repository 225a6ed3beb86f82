package main

import (
	"context"
	"errors"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/scenarios"
)

func reportCommand() *cli.Command { return &cli.Command{Name: "report", Hidden: true} }
func writeHTMLReport(context.Context, *cli.Command, io.Writer, *scenarios.Scenario, uint64, int) error {
	return errors.New("not yet")
}

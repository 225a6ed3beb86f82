package main

import (
	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/compare"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/scenarios"
)

// setParamFlag is compare's and plot's --param: one value of a sweep parameter,
// set on the scenario before it runs (compare.Set).
func setParamFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "param", Aliases: []string{"p"}, Usage: "set a sweep parameter or a field by its path, `NAME=VALUE` (repeatable; see 'retrysim sweep --help' for the names), e.g. clients=40 or 'server.phases[0].duration=2m'"}
}

// setParams returns s with the --param values of compare or plot set.
func setParams(c *call, s *scenarios.Scenario) (*scenarios.Scenario, error) {
	if !c.IsSet("param") {
		return s, nil
	}
	s, err := compare.Set(s, c.StringSlice("param"))
	if err != nil {
		return nil, usagef("--param %v", err)
	}
	return s, nil
}

// reportOrigin is what a JSON report of compare records of what produced
// it: this build, the scenario file, the --param values and s, the
// scenario with them set.
func reportOrigin(c *call, s *scenarios.Scenario) (*report.Origin, error) {
	params, err := compare.Params(c.StringSlice("param"))
	if err != nil {
		return nil, usagef("--param %v", err)
	}
	return report.NewOrigin(readBuildVersion().short(), scenarioFileName(c), params, s), nil
}

// scenarioFileName names the scenario file c reads as a report's origin
// records it: --file as given, "<stdin>", or scenarios.BuiltinFile.
func scenarioFileName(c *call) string {
	switch path := c.String("file"); path {
	case "":
		return scenarios.BuiltinFile
	case "-":
		return stdinName
	default:
		return path
	}
}

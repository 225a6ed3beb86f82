package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/internal/suggest"
)

var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)
	singleDash    = regexp.MustCompile(`(flag|for) -([a-zA-Z][-a-zA-Z0-9]+)`)
)

// teachFlagError rewrites a flag error of cmd as a user types flags (two
// dashes), with the flag the user probably meant: one of cmd's own with a
// name near it, or, when cmd is retrysim itself, the commands that take
// it (a flag goes after its command).
func teachFlagError(cmd *cli.Command, err error) error {
	msg := err.Error()
	m := undefinedFlag.FindStringSubmatch(msg)
	if m == nil {
		return usageError{fmt.Errorf("%s", singleDash.ReplaceAllString(msg, "$1 --$2"))}
	}
	name, _, _ := strings.Cut(m[1], "=")
	flag := dashes(name)
	var own []string
	for _, f := range cmd.Flags {
		own = append(own, f.Names()...)
	}
	if cmd.Root() == cmd {
		var takers []string
		for _, sub := range cmd.Commands {
			if slices.ContainsFunc(sub.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) }) {
				takers = append(takers, sub.Name)
			}
		}
		if len(takers) > 0 {
			return usagef("unknown flag %s before the command: a command's flags go after it, e.g. 'retrysim %s %s ...' (taken by: %s)",
				flag, takers[0], flag, strings.Join(takers, ", "))
		}
	}
	hint := ""
	if near := suggest.Closest(name, own); near != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", dashes(near))
	}
	where := "retrysim " + cmd.Name
	if cmd.Root() == cmd {
		where = "retrysim"
	}
	return usagef("unknown flag %s%s; '%s --help' lists the flags", flag, hint, where)
}

// dashes writes a flag's name as it is typed: --name, or -n for a letter.
func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

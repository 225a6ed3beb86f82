package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"
	"go.yaml.in/yaml/v3"

	retrysim "github.com/retrysim/retrysim"
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
			entry, err := scenarioEntry(retrysim.BuiltinScenarios, name)
			if err != nil {
				return err // the embedded file parsed, so this is a bug
			}
			w := cmd.Root().Writer
			fmt.Fprintf(w, "# 'retrysim show %s': a built-in scenario, from %s.\n# The schema is in docs/scenarios.md.\nscenarios:\n", name, f.Path)
			_, err = w.Write(entry)
			return err
		},
	}
}

// scenarioEntry returns the bytes of scenario name's item in the scenarios
// list of a scenario file: from its "- " (and the comments just above it,
// at the same indent) to the next item, without the blank lines between.
func scenarioEntry(data []byte, name string) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	if len(root.Content) == 0 {
		return nil, errors.New("empty scenario file")
	}
	var items []*yaml.Node
	top := root.Content[0].Content
	for i := 0; i+1 < len(top); i += 2 {
		if top[i].Value == "scenarios" {
			items = top[i+1].Content
		}
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	// first returns the index of item i's first line.
	first := func(i int) int {
		l := items[i].Line - 1 // the line of the item's first key, after "- "
		indent := bytes.IndexByte(lines[l], '-')
		for l > 0 {
			prev := lines[l-1]
			trimmed := bytes.TrimLeft(prev, " ")
			if !bytes.HasPrefix(trimmed, []byte("#")) || len(prev)-len(trimmed) != indent {
				break
			}
			l--
		}
		return l
	}
	for i, item := range items {
		for k := 0; k+1 < len(item.Content); k += 2 {
			if item.Content[k].Value != "name" || item.Content[k+1].Value != name {
				continue
			}
			end := len(lines)
			if i+1 < len(items) {
				end = first(i + 1)
			}
			for end > first(i) && len(bytes.TrimSpace(lines[end-1])) == 0 {
				end--
			}
			entry := bytes.Join(lines[first(i):end], nil)
			if !strings.HasSuffix(string(entry), "\n") {
				entry = append(entry, '\n')
			}
			return entry, nil
		}
	}
	return nil, fmt.Errorf("no scenario %q in the file", name)
}

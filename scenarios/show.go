package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	retrysim "github.com/retrysim/retrysim"
)

// ShowBuiltin returns what 'retrysim show NAME' prints: built-in scenario
// name's entry of scenarios.yaml as it is, comments included, under a
// 'scenarios:' line, so that it loads as a file of its own.
func ShowBuiltin(name string) ([]byte, error) {
	e, err := entry(retrysim.BuiltinScenarios, name)
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("# 'retrysim show %s': a built-in scenario, from %s.\n# The schema is in docs/scenarios.md.\nscenarios:\n", name, BuiltinFile)
	return append([]byte(head), e...), nil
}

// entry returns the bytes of scenario name's item in the scenarios
// list of a scenario file: from its "- " (and the comments just above it,
// at the same indent) to the next item, without the blank lines between.
func entry(data []byte, name string) ([]byte, error) {
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

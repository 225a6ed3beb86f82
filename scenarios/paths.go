package scenarios

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/internal/suggest"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// source is what a scenario was decoded from, so that a field can be set
// by its path and the scenario decoded again, by the loader itself.
type source struct {
	node      *yaml.Node // the scenario's mapping
	path      string     // its path in the file: "scenarios[3]"
	file, dir string
	read      func(string) ([]byte, error)
}

// Fields returns the scalar fields the loader reads for s, given or not,
// each with its path relative to the scenario ("server.phases[1].duration",
// "policies[0].cap"), in the order the loader reads them; nil for a
// scenario that was not loaded from YAML.
func (s *Scenario) Fields() []schema.Scalar {
	if s.src == nil {
		return nil
	}
	var out []schema.Scalar
	seen := map[string]bool{}
	d := s.src.decoder()
	d.Scalars = func(f schema.Scalar) {
		f.Path = strings.TrimPrefix(f.Path, s.src.path+".")
		if !seen[f.Path] {
			seen[f.Path] = true
			out = append(out, f)
		}
	}
	decodeScenario(d, s.src.node, s.src.path)
	return out
}

func (src *source) decoder() *schema.Decoder {
	return &schema.Decoder{File: src.file, Dir: src.dir, Read: src.read}
}

// WithValue returns a copy of s with the field at path (relative to the
// scenario, as Fields writes it; a list item may be named by its name,
// policies[mine].cap) set to value, written as in the file ("2m", "0.3"),
// and checked as the loader checks the file: the error names the field
// and the rule it breaks. s itself is not changed. The parts s no longer
// has (policies cut away) stay away; what the loader decodes anew
// replaces the server, the workload, the incident and the policies s has.
func (s *Scenario) WithValue(path, value string) (*Scenario, error) {
	if s.src == nil {
		return nil, fmt.Errorf("%s: this scenario was not read from a file", path)
	}
	root := copyNode(s.src.node)
	if err := setPath(root, path, value); err != nil {
		return nil, err
	}
	d := s.src.decoder()
	fresh := decodeScenario(d, root, s.src.path)
	if err := d.Err(); err != nil {
		return nil, relative(err, s.src.path+".")
	}
	c := *s
	c.Server, c.Workload, c.Incident, c.Seed = fresh.Server, fresh.Workload, fresh.Incident, fresh.Seed
	c.Policies = slices.Clone(s.Policies)
	for i, p := range c.Policies {
		if j := slices.IndexFunc(fresh.Policies, func(q sim.Policy) bool { return q.Name == p.Name }); j >= 0 {
			c.Policies[i] = fresh.Policies[j]
		}
	}
	c.src = &source{node: root, path: s.src.path, file: s.src.file, dir: s.src.dir, read: s.src.read}
	return &c, nil
}

// relative rewrites the loader's errors to name fields from the scenario
// on ("server.phases[1].duration: must be ..."), without the file's line.
func relative(err error, prefix string) error {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	var msgs []string
	for _, e := range list {
		var fe *schema.FieldError
		if errors.As(e, &fe) && fe.Field != "" {
			msgs = append(msgs, strings.TrimPrefix(fe.Field, prefix)+": "+fe.Msg)
		} else if errors.As(e, &fe) {
			msgs = append(msgs, fe.Msg)
		} else {
			msgs = append(msgs, e.Error())
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}

// setPath sets the scalar at path under the mapping root to value,
// adding the field (and mappings on the way) where the file has none.
func setPath(root *yaml.Node, path, value string) error {
	n := root
	parts := strings.Split(path, ".")
	for i, part := range parts {
		name, index, hasIndex, err := splitIndex(part)
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		last := i == len(parts)-1 && !hasIndex
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s: %s is not a mapping of fields", path, strings.Join(parts[:i], "."))
		}
		var next *yaml.Node
		for k := 0; k+1 < len(n.Content); k += 2 {
			if n.Content[k].Value == name {
				next = n.Content[k+1]
			}
		}
		if next == nil {
			if hasIndex {
				return fmt.Errorf("%s: the scenario has no list %s", path, strings.Join(append(parts[:i:i], name), "."))
			}
			next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, Line: n.Line, Column: n.Column}, next)
		}
		if hasIndex {
			item, err := listItem(next, index)
			if err != nil {
				return fmt.Errorf("%s: %s: %v", path, strings.Join(append(parts[:i:i], name), "."), err)
			}
			next = item
			last = i == len(parts)-1
		}
		if last {
			if next.Kind != yaml.ScalarNode && !(next.Kind == yaml.MappingNode && len(next.Content) == 0) {
				return fmt.Errorf("%s is not a single value (it is a list or a mapping); name a field inside it", path)
			}
			line, col := next.Line, next.Column
			if line == 0 {
				line, col = n.Line, n.Column
			}
			*next = *scalarNode(value)
			next.Line, next.Column = line, col
			return nil
		}
		n = next
	}
	return nil
}

// scalarNode is value as YAML reads it when a file writes it plainly.
func scalarNode(value string) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err == nil && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.ScalarNode {
		n := doc.Content[0]
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: n.Tag, Value: n.Value}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
}

// splitIndex splits "phases[1]" into phases and 1.
func splitIndex(part string) (name, index string, ok bool, err error) {
	name, rest, ok := strings.Cut(part, "[")
	if !ok {
		if name == "" {
			return "", "", false, fmt.Errorf("an empty field name")
		}
		return name, "", false, nil
	}
	if !strings.HasSuffix(rest, "]") || name == "" || len(rest) < 2 {
		return "", "", false, fmt.Errorf("%q: want FIELD or FIELD[INDEX] or FIELD[NAME]", part)
	}
	return name, strings.TrimSuffix(rest, "]"), true, nil
}

// listItem finds an item of a list by its index (from 0) or its name.
func listItem(list *yaml.Node, index string) (*yaml.Node, error) {
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("not a list")
	}
	if i, err := strconv.Atoi(index); err == nil {
		if i < 0 || i >= len(list.Content) {
			return nil, fmt.Errorf("no item %d (the list has %d, from 0)", i, len(list.Content))
		}
		return list.Content[i], nil
	}
	var names []string
	for _, item := range list.Content {
		for k := 0; item.Kind == yaml.MappingNode && k+1 < len(item.Content); k += 2 {
			if item.Content[k].Value == "name" {
				if item.Content[k+1].Value == index {
					return item, nil
				}
				names = append(names, item.Content[k+1].Value)
			}
		}
	}
	return nil, fmt.Errorf("no item named %q%s (have: %s)", index, suggest.DidYouMean(index, names), strings.Join(names, ", "))
}

// copyNode copies a YAML tree (the loader refuses aliases, so it is one).
func copyNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = copyNode(k)
	}
	return &c
}

// policyIndex matches the policy a path starts in: "policies[2]".
var policyIndex = regexp.MustCompile(`^policies\[([0-9]+)\]`)

// NumericPaths are the paths of the number, duration and probability
// fields the file gives for s, a policy named by its name
// ("policies[full-jitter].cap"): what --param can set beside the
// registered names, as completion offers them.
func (s *Scenario) NumericPaths() []string {
	var out []string
	for _, f := range s.Fields() {
		if f.Node == nil || !f.Kind.Numeric() {
			continue
		}
		path := f.Path
		if m := policyIndex.FindStringSubmatch(path); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil && i < len(s.Policies) {
				path = "policies[" + s.Policies[i].Name + "]" + path[len(m[0]):]
			}
		}
		out = append(out, path)
	}
	return out
}

package tune

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sweep"
)

// PolicyFile is a scenario file that pins the chosen point: each scenario
// tuned on, as source (the bytes of the scenario file searched) has it,
// with the tuned policy alone, the chosen values set on its fields
// (kinds.Param.Field), its expect list the targets on that scenario, and
// seed and check_seeds the seeds tuned on; so 'retrysim check --file'
// verifies it. header, if set, goes above as comment lines. It is checked
// before it is returned: loaded in dir (where the source's traces are
// found), each scenario's policy must be the one the search ran.
func (r *Result) PolicyFile(source []byte, dir, header string) ([]byte, error) {
	if r.Chosen == nil {
		return nil, errors.New("no point meets every target: there is no policy to write")
	}
	var root yaml.Node
	if err := yaml.Unmarshal(source, &root); err != nil || len(root.Content) == 0 {
		return nil, fmt.Errorf("reading the scenario file again: %v", err)
	}
	list := mappingValue(root.Content[0], "scenarios")
	if list == nil {
		return nil, errors.New("the scenario file has no scenarios list")
	}
	out := &yaml.Node{Kind: yaml.SequenceNode}
	for _, name := range r.Scenarios {
		sc := itemNamed(list, name)
		if sc == nil {
			return nil, fmt.Errorf("scenario %s is not in the scenario file", name)
		}
		if err := r.pin(sc, name); err != nil {
			return nil, fmt.Errorf("scenario %s: %w", name, err)
		}
		out.Content = append(out.Content, sc)
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, HeadComment: header, Content: []*yaml.Node{scalar("scenarios"), out}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	if err := r.verify(buf.Bytes(), dir); err != nil {
		return nil, fmt.Errorf("the policy file does not load as the policy tuned (%w); set its fields by hand", err)
	}
	return buf.Bytes(), nil
}

// pin cuts scenario node sc down to the tuned policy with the chosen
// values and the targets on scenario name.
func (r *Result) pin(sc *yaml.Node, name string) error {
	pols := mappingValue(sc, "policies")
	pol := itemNamed(pols, r.Policy)
	if pol == nil {
		return fmt.Errorf("no policy %s in the file", r.Policy)
	}
	pols.Content = []*yaml.Node{pol}
	for i, q := range r.Space {
		info, _ := kinds.LookupParam(q.Name)
		if err := setPath(pol, strings.Split(info.Field, "."), info.Format(r.Chosen.Values[i])); err != nil {
			return fmt.Errorf("%s: %w", info.Field, err)
		}
	}
	expect := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, t := range r.Targets {
		if t.Scenario == name {
			for _, e := range AsChecked(t.Expectation) {
				expect.Content = append(expect.Content, &yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Value: e.String()})
			}
		}
	}
	set(pol, "expect", expect)
	// Every expectation is now a statistic over seeds: check takes it
	// over the seeds the search ran.
	set(sc, "seed", scalar(strconv.FormatUint(r.FirstSeed, 10)))
	set(sc, "check_seeds", scalar(strconv.Itoa(r.Seeds)))
	return nil
}

// AsChecked is the expectation the search held e to, as 'retrysim check'
// reads it over the seeds searched: a bound on single runs (completed >=
// 195) holds on every seed, which is min(completed) >= 195 (max(...) for
// an upper bound; both for ==), where check would read the bare
// expectation on one seed alone. A statistic over seeds is itself.
func AsChecked(e scenarios.Expectation) []scenarios.Expectation {
	if e.OverSeeds() {
		return []scenarios.Expectation{e}
	}
	lower, upper := e, e
	lower.Stat, upper.Stat = scenarios.StatMin, scenarios.StatMax
	switch e.Op {
	case ">=", ">":
		return []scenarios.Expectation{lower}
	case "<=", "<":
		return []scenarios.Expectation{upper}
	}
	lower.Op, upper.Op = ">=", "<="
	return []scenarios.Expectation{lower, upper}
}

// verify loads data and compares each scenario's policy with the one the
// search ran at the chosen point.
func (r *Result) verify(data []byte, dir string) error {
	f, err := scenarios.ParseIn("tuned", data, dir)
	if err != nil {
		return err
	}
	for i, name := range r.Scenarios {
		got, err := f.Lookup(name)
		if err != nil {
			return err
		}
		want, err := sweep.Apply(r.cut[i], r.Space, r.Chosen.Values)
		if err != nil {
			return err
		}
		if len(got.Policies) != 1 {
			return fmt.Errorf("scenario %s: %d policies", name, len(got.Policies))
		}
		g, w := got.Policies[0], want.Policies[0]
		switch {
		case !reflect.DeepEqual(g.Rules.Backoff, w.Rules.Backoff):
			return fmt.Errorf("scenario %s: the backoff of %s loads as %v, tuned %v: a preset's backoff settings the file does not write", name, r.Policy, g.Rules.Backoff, w.Rules.Backoff)
		case !reflect.DeepEqual(g.Coordinators, w.Coordinators):
			return fmt.Errorf("scenario %s: the controls of %s load as %+v, tuned %+v: a preset's control settings the file does not write", name, r.Policy, g.Coordinators, w.Coordinators)
		case !reflect.DeepEqual(g, w):
			return fmt.Errorf("scenario %s: policy %s differs", name, r.Policy)
		}
	}
	return nil
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

// mappingValue is the value of key in mapping m, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// set gives key the value v in mapping m, adding it at the end if new.
func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v.LineComment = m.Content[i+1].LineComment
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}

// setPath sets the scalar at path under mapping m, making the mappings
// on the way.
func setPath(m *yaml.Node, path []string, value string) error {
	for _, k := range path[:len(path)-1] {
		next := mappingValue(m, k)
		if next == nil {
			next = &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
			set(m, k, next)
		}
		if next.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a mapping", k)
		}
		m = next
	}
	set(m, path[len(path)-1], scalar(value))
	return nil
}

// itemNamed is the mapping in sequence seq whose name is name, or nil.
func itemNamed(seq *yaml.Node, name string) *yaml.Node {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil
	}
	for _, item := range seq.Content {
		if n := mappingValue(item, "name"); n != nil && n.Value == name {
			return item
		}
	}
	return nil
}

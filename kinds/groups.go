package kinds

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The groups workload (sim.Groups): client groups sharing one server,
// each a workload of its own with a priority and, optionally, a policy
// of its own.
func registerGroups() {
	registerWorkload(&Kind{Name: "groups", Fields: []string{"groups"},
		About: "client groups sharing one server: each a workload (its clients mapping) with a name, a priority and optionally a policy of its own; groups without one run the compared policies"},
		workloadFuncs[*sim.Groups]{
			decode:   decodeGroups,
			describe: describeGroups,
			metrics: func(w *sim.Groups) []string {
				var names []string
				for _, g := range w.Members {
					if k := workloadKindOf(g.Workload); k != nil {
						for _, n := range k.metrics(g.Workload) {
							if !slices.Contains(names, n) {
								names = append(names, n)
							}
						}
					}
				}
				return names
			},
			clone: func(w *sim.Groups) *sim.Groups {
				c := &sim.Groups{Members: slices.Clone(w.Members)}
				for k := range c.Members {
					c.Members[k].Workload = cloneWorkload(c.Members[k].Workload)
				}
				return c
			},
			scale: func(w *sim.Groups, f float64) (*sim.Groups, error) {
				for k := range w.Members {
					g := &w.Members[k]
					kind := workloadKindOf(g.Workload)
					if kind == nil || kind.scale == nil {
						return nil, fmt.Errorf("group %q cannot be scaled", g.Name)
					}
					var err error
					if g.Workload, err = kind.scale(g.Workload, f); err != nil {
						return nil, fmt.Errorf("group %q: %w", g.Name, err)
					}
				}
				return w, nil
			},
		})
}

// decodeGroups reads a groups workload: its groups, each {name, clients,
// priority, policy}.
func decodeGroups(d *schema.Decoder, m *schema.Mapping, path string) *sim.Groups {
	w := &sim.Groups{}
	items := m.Sequence("groups")
	if len(items) == 0 && m.Node() != nil {
		m.Errorf("groups", "missing: list the client groups, each {name, clients, priority, policy}")
	}
	for i, item := range items {
		gm := d.Mapping(item, fmt.Sprintf("%s.groups[%d]", path, i))
		g := sim.Group{Name: gm.Str("name", "")}
		if g.Name == "" {
			gm.Errorf("name", "missing: every group needs a name")
		} else if slices.ContainsFunc(w.Members, func(o sim.Group) bool { return o.Name == g.Name }) {
			gm.Errorf("name", "another group is called %q", g.Name)
		}
		if !gm.Has("clients") {
			gm.Errorf("clients", "missing: the group's workload, a clients mapping as a scenario's")
		}
		var lim Limits
		g.Workload, lim = DecodeClients(d, gm.Get("clients"), gm.Field("clients"))
		g.Shares = lim.Priorities
		if gm.Has("priority") && len(g.Shares) > 0 {
			gm.Errorf("priority", "set the group's priority or its clients' priorities, not both")
		} else if own, ok := g.Workload.(sim.PriorityLevels); ok && gm.Has("priority") && own.PriorityLevels() != nil {
			gm.Errorf("priority", "has no effect: the group's workload gives its operations priorities itself (agent sessions' background)")
		}
		g.Priority = decodePriority(gm, "priority", sim.PriorityDefault)
		if n := gm.Get("policy"); n != nil {
			p := DecodePolicy(d, policyNode(n), gm.Field("policy"), lim, nil)
			g.Policy = &p
		} else if lim.MaxAttempts != 0 || lim.Deadline != 0 {
			gm.Errorf("clients", "max_attempts and deadline have no effect here: the group runs the compared policies, whose limits the scenario's clients set (give the group a policy to set its own)")
		}
		gm.Finish("name", "clients", "priority", "policy")
		w.Members = append(w.Members, g)
	}
	return w
}

// policyNode is a group's policy as DecodePolicy reads it: a mapping, or
// a preset's name written alone (policy: claude-code), which is the
// mapping {name: claude-code}.
func policyNode(n *yaml.Node) *yaml.Node {
	if n.Kind != yaml.ScalarNode {
		return n
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name", Line: n.Line, Column: n.Column}
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column, Content: []*yaml.Node{key, n}}
}

func describeGroups(w *sim.Groups) string {
	parts := make([]string, len(w.Members))
	for k, g := range w.Members {
		policy := "the compared policy"
		if g.Policy != nil {
			policy = "policy " + g.Policy.Name
		}
		levels := make([]string, 0, 3)
		for _, p := range (&sim.Groups{Members: []sim.Group{g}}).PriorityLevels() {
			levels = append(levels, p.String())
		}
		prio := "priority " + strings.Join(levels, ", ")
		parts[k] = fmt.Sprintf("%s (%s, %s): %s", g.Name, prio, policy, DescribeWorkload(g.Workload))
	}
	return fmt.Sprintf("%d client groups on one server: %s", len(w.Members), strings.Join(parts, "; "))
}

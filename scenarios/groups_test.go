package scenarios

import (
	"strings"
	"testing"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/sim"
)

const groupsScenario = `scenarios:
  - name: g
    server: {phases: [{admit: 6, window: 1s}]}
    clients:
      type: groups
      groups:
        - name: fg
          priority: critical
          policy: claude-code
          clients: {type: agent-sessions, sessions: 3, turns: 2, max_attempts: 4}
        - name: bg
          clients: {count: 5, priorities: {sheddable: 0.4, 3: 0.2}}
      max_attempts: 2
    policies:
      - {name: fj, type: full-jitter, base: 100ms, expect: ["by_priority.3.completed >= 0"]}
`

// A groups workload: each group's workload, priority and own policy (a
// preset named alone, which keeps its 11 attempts), and the levels it
// gives.
func TestGroupsDecode(t *testing.T) {
	s := parseOne(t, groupsScenario)
	w, ok := s.Workload.(*sim.Groups)
	if !ok || len(w.Members) != 2 {
		t.Fatalf("workload %#v", s.Workload)
	}
	fg, bg := w.Members[0], w.Members[1]
	if fg.Name != "fg" || fg.Priority != sim.PriorityCritical || fg.Policy == nil || fg.Policy.Name != "claude-code" ||
		fg.Policy.Rules.MaxAttempts != 11 || fg.Policy.Fallback == nil {
		t.Errorf("foreground %+v, policy %+v", fg, fg.Policy)
	}
	if bg.Policy != nil || len(bg.Shares) != 2 || bg.Workload.Operations() != 5 {
		t.Errorf("background %+v", bg)
	}
	var levels []string
	for _, p := range s.PriorityLevels() {
		levels = append(levels, p.String())
	}
	if got := strings.Join(levels, " "); got != "3 critical default sheddable" {
		t.Errorf("levels %q", got)
	}
	if m, _ := metrics.Lookup("by_priority.critical.latency_ms.p99"); !contains(s.Metrics(), m) {
		t.Error("no by_priority.critical.latency_ms.p99 among the scenario's metrics")
	}
	if d := kinds.DescribeWorkload(w); !strings.Contains(d, "fg (priority critical, policy claude-code)") || !strings.Contains(d, "bg (priority 3, default, sheddable, the compared policy)") {
		t.Errorf("description %q", d)
	}
	if s.Operations() != 3*2+5 {
		t.Errorf("%d operations", s.Operations())
	}
}

func contains(set []*metrics.Metric, m *metrics.Metric) bool {
	for _, x := range set {
		if x == m {
			return true
		}
	}
	return false
}

// Every problem with a group is an error at its line and field.
func TestGroupsErrors(t *testing.T) {
	for _, tt := range []struct{ from, to, want string }{
		{"        - name: bg\n", "        - name: fg\n", `scenarios[0].clients.groups[1].name: another group is called "fg"`},
		{"          priority: critical\n", "          priority: urgent\n", `scenarios[0].clients.groups[0].priority: "urgent" is not a priority`},
		{"          clients: {count: 5, priorities: {sheddable: 0.4, 3: 0.2}}\n", "          clients: {count: 5, max_attempts: 3}\n",
			"scenarios[0].clients.groups[1].clients: max_attempts and deadline have no effect here"},
		{"          clients: {count: 5, priorities: {sheddable: 0.4, 3: 0.2}}\n", "          priority: critical\n          clients: {count: 5, priorities: {sheddable: 0.4}}\n",
			"scenarios[0].clients.groups[1].priority: set the group's priority or its clients' priorities, not both"},
		{"          policy: claude-code\n", "          policy: {name: l, type: immediate, layers: [{name: sdk, type: immediate, max_attempts: 2}]}\n", `group "fg": its policy "l" has retry layers`},
		{"          policy: claude-code\n", "          policy: claud-code\n", "scenarios[0].clients.groups[0].policy"},
		{"      max_attempts: 2\n", "      max_attempts: 2\n      priorities: {critical: 0.5}\n", "scenarios[0].clients.priorities: this workload gives its operations priorities itself"},
		{"          clients: {count: 5, priorities: {sheddable: 0.4, 3: 0.2}}\n", "          clients: {type: open-loop, rate: 1, until: 1s}\n", "drawn afresh"},
		{"        - name: fg\n", "        - nom: fg\n", "scenarios[0].clients.groups[0].nom: unknown field"},
		{"          clients: {type: agent-sessions, sessions: 3, turns: 2, max_attempts: 4}\n", "          clients: {type: agent-sessions, sessions: 3, turns: 2, max_attempts: 4, background: {share: 0.5}}\n",
			"scenarios[0].clients.groups[0].priority: has no effect: the group's workload gives its operations priorities itself"},
		{`expect: ["by_priority.3.completed >= 0"]`, `expect: ["by_priority.5.completed >= 0"]`, "its workload gives no operation priority 5 (its levels: 3, critical, default, sheddable)"},
	} {
		src := strings.Replace(groupsScenario, tt.from, tt.to, 1)
		if src == groupsScenario {
			t.Fatalf("%q is not in the scenario", tt.from)
		}
		_, err := Parse("g.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v,\nwant %q", tt.to, err, tt.want)
		}
	}
}

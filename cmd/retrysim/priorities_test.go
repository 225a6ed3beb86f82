package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// The hardest case for metrics by priority: three levels, one of them
// given inside chained sessions (their background calls), one by a
// group of a burst with a policy of its own.
const threeLevels = `scenarios:
  - name: three-levels
    check_seeds: 3
    server: {phases: [{duration: 3s, admit: 4, window: 1s}, {admit: 40, window: 1s}]}
    clients:
      type: groups
      groups:
        - name: agents
          clients: {type: agent-sessions, sessions: 6, turns: 4, think: 200ms, max_repeats: 1, background: {share: 0.5, priority: sheddable}}
        - name: users
          priority: critical
          policy: {name: users-policy, type: capped-exponential, base: 200ms, max_attempts: 6}
          clients: {count: 8, spread: 2s}
      max_attempts: 3
    policies:
      - name: fj
        type: full-jitter
        base: 100ms
        expect: ["by_priority.critical.completed >= 1", "mean(by_priority.sheddable.attempts) >= 1", "by_priority.default.gave_up >= 0"]
      - {name: once, type: immediate, max_attempts: 1}
`

// Every output reports every metric by priority for the three levels,
// with the values of the run's results by priority: the JSON, the CSV,
// the table's section, expectations, a baseline that reads back, and the
// plot.
func TestEveryOutputByPriority(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "three.yaml")
	if err := os.WriteFile(file, []byte(threeLevels), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := scenarios.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	results, err := runs.One(t.Context(), s, s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	levels := []sim.Priority{sim.PriorityCritical, sim.PriorityDefault, sim.PrioritySheddable}
	want := func(r *sim.Result, p sim.Priority) int {
		sub, ok := r.OfPriority(p)
		if !ok || sub.Clients == 0 {
			t.Fatalf("%s: no operations of priority %v", r.Policy, p)
		}
		return sub.Completed
	}
	cli := func(args ...string) string {
		t.Helper()
		out, stderr, code, err := runCLI(t, append(args, "--file", file)...)
		if err != nil || code != 0 {
			t.Fatalf("%v: exit %d, %v\n%s", args, code, err, stderr)
		}
		return out
	}

	var doc struct {
		Results []struct {
			Policy     string
			ByPriority map[string]*float64 `json:"by_priority"`
		}
	}
	js := cli("compare", "--format", "json")
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Results) != 2 {
		t.Fatalf("json: %v, %d results", err, len(doc.Results))
	}
	rows, err := csv.NewReader(strings.NewReader(cli("compare", "--format", "csv"))).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("csv: %v, %d rows", err, len(rows))
	}
	table := cli("compare")
	section := table[strings.Index(table, "by priority"):]
	for i := range results {
		r := &results[i]
		for _, p := range levels {
			n := want(r, p)
			if v := doc.Results[i].ByPriority[p.String()+".completed"]; v == nil || int(*v) != n {
				t.Errorf("json: %s %v completed %v, want %d", r.Policy, p, v, n)
			}
			col := -1
			for k, name := range rows[0] {
				if name == "by_priority."+p.String()+".completed" {
					col = k
				}
			}
			if col < 0 || rows[i+1][col] != strconv.Itoa(n) {
				t.Errorf("csv: %s %v completed column %d, want %d", r.Policy, p, col, n)
			}
			if !strings.Contains(section, "| "+r.Policy) || !strings.Contains(section, "| "+p.String()) {
				t.Errorf("table: no row of %s at %v in\n%s", r.Policy, p, section)
			}
		}
		for _, name := range []string{"critical.latency_ms.p99", "sheddable.gave_up_by.attempts", "default.attempts_per_completion", "sheddable.retries"} {
			if _, ok := doc.Results[i].ByPriority[name]; !ok {
				t.Errorf("json: %s has no by_priority.%s", r.Policy, name)
			}
		}
	}
	if check := cli("check"); !strings.Contains(check, "3 of 3 expectations hold") {
		t.Errorf("check:\n%s", check)
	}
	base := filepath.Join(dir, "base.json")
	if err := os.WriteFile(base, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	if check := cli("check", "--baseline", base); !strings.Contains(check, "baseline metrics unchanged") {
		t.Errorf("check against its own baseline:\n%s", check)
	}
	changed := strings.Replace(js, `"critical.completed": `, `"critical.completed": 1`, 1) // a baseline that completed more
	if err := os.WriteFile(base, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, code, _ := runCLI(t, "check", "--baseline", base, "--file", file); code != 1 || !strings.Contains(out, "by_priority.critical.completed") {
		t.Errorf("check against a baseline that completed more critical operations: exit %d\n%s", code, out)
	}
	cli("plot", "--plot-dir", filepath.Join(dir, "plots"), "--plot-format", "svg")
	if svg, err := os.ReadFile(filepath.Join(dir, "plots", "priorities.svg")); err != nil || !strings.Contains(string(svg), "Sheddable: completed") {
		t.Errorf("plot: no outcomes by priority: %v", err)
	}
}

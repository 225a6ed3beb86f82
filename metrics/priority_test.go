package metrics

import (
	"testing"

	"github.com/retrysim/retrysim/sim"
)

// A metric by priority is found by its name, once per name, over its
// level's operations; its survivors' subset and presence are its level's
// too; counters and names that are no priority have none.
func TestMetricsByPriority(t *testing.T) {
	p99, ok := Lookup("by_priority.sheddable.latency_ms.p99")
	if !ok {
		t.Fatal("by_priority.sheddable.latency_ms.p99 not found")
	}
	if again, _ := ByPriority(sim.PrioritySheddable, P99); again != p99 {
		t.Error("two metrics for one name")
	}
	if level, base, ok := p99.Level(); !ok || level != sim.PrioritySheddable || base != P99 {
		t.Errorf("level %v of %v", level, base)
	}
	if want, _ := Lookup("by_priority.sheddable.completed"); p99.Subset() != want || p99.Part() != "sheddable.latency_ms.p99" {
		t.Errorf("subset %v, part %q", p99.Subset().Name, p99.Part())
	}
	if apc, _ := Lookup("by_priority.7.attempts_per_completion"); apc == nil || apc.Presence().Name != "by_priority.7.completed" {
		t.Errorf("presence of attempts per completion by priority: %v", apc)
	}
	for _, bad := range []string{"by_priority.low.completed", "by_priority.+7.completed", "by_priority.101.completed",
		"by_priority.critical.nope", "by_priority.critical", "by_priority.critical.by_priority.critical.completed"} {
		if m, ok := Lookup(bad); ok {
			t.Errorf("%s: found %v", bad, m.Name)
		}
	}
	r := &sim.Result{Completed: 5, Clients: 9, ByPriority: []sim.PriorityResult{
		{Priority: sim.PriorityCritical, Result: sim.Result{Clients: 4, Completed: 4}},
		{Priority: sim.PrioritySheddable, Result: sim.Result{Clients: 5, Completed: 1}}}}
	for name, want := range map[string]float64{"by_priority.critical.completed": 4, "by_priority.sheddable.goodput_share": 0.2, "by_priority.default.completed": 0} {
		m, _ := Lookup(name)
		if got, ok := m.Value(r); !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", name, got, ok, want)
		}
	}
	if m, _ := Lookup("by_priority.default.goodput_share"); m.ValueOrNaN(r) == m.ValueOrNaN(r) {
		t.Error("a share of a level without operations has a value")
	}
}

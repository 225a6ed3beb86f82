package scenarios

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/sim"
)

func TestRecoveryMetrics(t *testing.T) {
	get := func(name string, r *sim.Result) (float64, bool) {
		m, ok := metrics.Lookup(name)
		if !ok {
			t.Fatalf("no metric %s", name)
		}
		return m.Value(r)
	}
	none := &sim.Result{}
	for _, name := range RecoveryNames() {
		if _, ok := get(name, none); ok {
			t.Errorf("%s exists for a run without an incident", name)
		}
	}
	never := &sim.Result{Recovery: sim.Recovery{Measured: true, DuringPerSecond: 2.5, AfterPerSecond: 0.5}}
	if v, ok := get("recovery.goodput_during", never); !ok || v != 2.5 {
		t.Errorf("goodput_during = %v, %v", v, ok)
	}
	if v, ok := get("recovery.recovered", never); !ok || v != 0 {
		t.Errorf("recovered = %v, %v for a run that never recovered", v, ok)
	}
	if _, ok := get("recovery.time_to_recover_ms", never); ok {
		t.Error("a run that never recovered has a time to recover")
	}
	back := &sim.Result{Recovery: sim.Recovery{Measured: true, Recovered: true, TimeToRecover: 1500 * time.Millisecond}}
	if v, ok := get("recovery.time_to_recover_ms", back); !ok || v != 1500 {
		t.Errorf("time_to_recover_ms = %v, %v", v, ok)
	}
	if v, _ := get("recovery.recovered", back); v != 1 {
		t.Errorf("recovered = %v", v)
	}
}

// The registry in its order, with the metrics the kinds and the incident
// register after metrics' own: their order is that of the JSON fields and
// columns, and must not change.
func TestCountedMetricsOrder(t *testing.T) {
	counted := []string{"server.wasted", "server.wasted_ms", "server.wasted_output_tokens", "server.dropped", "server.queue_full", "server.codel_dropped", "server.lifo", "server.priority_evicted",
		"server.rate_limited", "server.too_large", "server.key_idle_ms", "server.key_utilisation", "client.idle_ms", "server.reads", "server.writes", "server.conflicts",
		"pool.busiest_share", "pool.ejections", "pool.cooldowns", "pool.unavailable", "crash.reset", "crash.refused",
		"billing.billed", "billing.abandoned", "billing.billed_per_completion", "billing.cost_per_completion", "billing.partial", "billing.partial_output_tokens",
		"shed.shed", "shed.critical_ok", "shed.critical_failed", "shed.noncritical_ok", "shed.noncritical_failed",
		"admission.rejected", "admission.admitted", "admission.rejected_share",
		"sessions.completed", "sessions.failed", "sessions.resumed", "sessions.turns_repeated", "sessions.tokens_wasted", "sessions.background_failed",
		"hedge.sent", "hedge.denied", "hedge.cancelled", "server.stream_faults", "stream.watchdog", "stream.wasted_events",
		"layers.after_giveup", "layers.retrying_retry_after", "layers.retrying_capacity", "layers.retrying_transient", "layers.retrying_terminal",
		"recovery.goodput_during", "recovery.goodput_after", "recovery.recovered", "recovery.time_to_recover_ms"}
	names := metrics.Names()
	if got := names[len(names)-len(counted):]; !slices.Equal(got, counted) {
		t.Fatalf("the counted metrics are %v, want %v", got, counted)
	}
	for _, name := range counted {
		m, _ := metrics.Lookup(name)
		recovery := strings.HasPrefix(m.Name, "recovery.")
		if !m.Optional() || recovery == (m.Column == m.Name[:strings.IndexByte(m.Name, '.')]) {
			t.Errorf("%s: optional %v, column %q", m.Name, m.Optional(), m.Column)
		}
		// Plots label an optional headline metric's axis with its Quantity.
		if m.Headline && m.Quantity == "" {
			t.Errorf("%s: no Quantity for its plot axis", m.Name)
		}
	}
	r := sim.Result{Counters: sim.Counters{{Name: "server.wasted", Value: 4}, {Name: "server.wasted_time", Value: int64(1500 * time.Millisecond)},
		{Name: "server.wasted_output_tokens", Value: 1 << 40}, {Name: "server.rate_limited", Value: 7}, {Name: "server.reads", Value: 11},
		{Name: "server.writes", Value: 9}, {Name: "server.conflicts", Value: 6}, {Name: "sessions.started", Value: 3},
		{Name: "sessions.completed", Value: 2}, {Name: "sessions.failed", Value: 1}, {Name: "sessions.turns_repeated", Value: 5}}}
	for name, v := range map[string]float64{"server.wasted": 4, "server.wasted_ms": 1500, "server.wasted_output_tokens": 1 << 40, "server.rate_limited": 7,
		"server.reads": 11, "server.writes": 9, "server.conflicts": 6, "server.dropped": 0,
		"sessions.completed": 2, "sessions.failed": 1, "sessions.turns_repeated": 5} {
		m, _ := metrics.Lookup(name)
		if got, ok := m.Value(&r); !ok || got != v {
			t.Errorf("%s = %v (ok %v), want %v", name, got, ok, v)
		}
	}
}

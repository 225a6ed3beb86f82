package metrics

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

func TestRegistryOrder(t *testing.T) {
	want := []string{"completed", "attempts", "retries", "gave_up",
		"gave_up_by.attempts", "gave_up_by.deadline", "gave_up_by.terminal", "gave_up_by.queue_full", "gave_up_by.budget", "gave_up_by.throttled", "gave_up_by.circuit_open",
		"fallbacks", "amplification", "attempts_per_completion", "goodput_share", "gave_up_share", "give_up_ms.p50", "give_up_ms.p99",
		"latency_ms.mean", "latency_ms.p50", "latency_ms.p95", "latency_ms.p99", "last_completion_ms"}
	counted := []string{"server.wasted", "server.wasted_ms", "server.wasted_output_tokens", "server.dropped", "server.queue_full",
		"server.rate_limited", "server.too_large", "server.reads", "server.writes", "server.conflicts",
		"sessions.completed", "sessions.failed", "sessions.resumed", "sessions.turns_repeated", "sessions.tokens_wasted",
		"recovery.goodput_during", "recovery.goodput_after", "recovery.recovered", "recovery.time_to_recover_ms"}
	if got := Names(); !slices.Equal(got, slices.Concat(want, counted)) {
		t.Fatalf("Names() = %v,\nwant %v then %v", got, want, counted)
	}
	// The optional metrics: fallbacks and the give-ups only controls cause,
	// and those only some servers and workloads count.
	if n := len(Default()); n != len(want)-4 {
		t.Errorf("Default() has %d metrics, want all but the 4 optional ones", n)
	}
	withFallback := For([]sim.Policy{{Name: "a"}, {Name: "b", Fallback: &sim.Fallback{}}})
	if !slices.Contains(withFallback, Fallbacks) || len(withFallback) != len(want)-3 {
		t.Errorf("a policy with a fallback does not show fallbacks")
	}
	withCounted := names(For(nil, "sessions.failed", "server.wasted"))
	if !slices.Equal(withCounted[len(withCounted)-2:], []string{"server.wasted", "sessions.failed"}) || len(withCounted) != len(want)-2 {
		t.Errorf("For with counted metrics gives %v", withCounted)
	}
	for _, m := range All() {
		recovery := strings.HasPrefix(m.Name, "recovery.")
		if m.counted && (!m.Optional() || recovery == (m.Column == m.Name[:strings.IndexByte(m.Name, '.')])) {
			t.Errorf("%s: optional %v, column %q", m.Name, m.Optional(), m.Column)
		}
	}
	withBreaker := names(For([]sim.Policy{{Name: "a", Coordinators: []policies.Spec{policies.BreakerConfig{}}}}))
	if !slices.Contains(withBreaker, "gave_up_by.circuit_open") || slices.Contains(withBreaker, "gave_up_by.budget") {
		t.Errorf("a policy with a breaker shows %v", withBreaker)
	}
}

func TestValues(t *testing.T) {
	r := sim.Result{Policy: "p", Clients: 3, Completed: 3, Attempts: 10, Retries: 6, GaveUp: 1, Fallbacks: 2,
		Latencies: []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, LastCompletion: 3 * time.Second}
	r.GaveUpBy[policies.StopDeadline] = 1
	r.Counters = sim.Counters{{Name: "server.wasted", Value: 4}, {Name: "server.wasted_time", Value: int64(1500 * time.Millisecond)}, {Name: "server.wasted_output_tokens", Value: 1 << 40},
		{Name: "server.rate_limited", Value: 7}, {Name: "server.reads", Value: 11}, {Name: "server.writes", Value: 9}, {Name: "server.conflicts", Value: 6},
		{Name: "sessions.started", Value: 3}, {Name: "sessions.completed", Value: 2}, {Name: "sessions.failed", Value: 1}, {Name: "sessions.turns_repeated", Value: 5}}
	want := map[string]float64{"completed": 3, "attempts": 10, "amplification": 10.0 / 3, "gave_up_by.deadline": 1,
		"fallbacks": 2, "latency_ms.p50": 2000, "last_completion_ms": 3000,
		"server.wasted": 4, "server.wasted_ms": 1500, "server.wasted_output_tokens": 1 << 40, "server.rate_limited": 7,
		"server.reads": 11, "server.writes": 9, "server.conflicts": 6,
		"sessions.completed": 2, "sessions.failed": 1, "sessions.turns_repeated": 5}
	for name, v := range want {
		m, ok := Lookup(name)
		if !ok {
			t.Fatalf("no metric %q", name)
		}
		if got, ok := m.Value(&r); !ok || got != v {
			t.Errorf("%s = %v (ok %v), want %v (unrounded)", name, got, ok, v)
		}
	}
	if got := Amplification.RoundForJSON(10.0 / 3); got != 3.3333 {
		t.Errorf("amplification in JSON = %v", got)
	}
	if Completed.Better != stats.HigherIsBetter || Attempts.Better != stats.LowerIsBetter {
		t.Error("directions")
	}
	empty := sim.Result{Clients: 1, GaveUp: 1}
	if _, ok := P99.Value(&empty); ok || !math.IsNaN(LastCompletion.ValueOrNaN(&empty)) {
		t.Error("latency of a run with no completions exists")
	}
	if _, ok := Lookup("bogus"); ok {
		t.Error("found a metric that does not exist")
	}
	if GaveUpBy()[3].Part() != policies.StopQueueFull.String() || GaveUpBy()[3].Column != "gave_up_by" || P50.Column != "p50_ms" {
		t.Error("names of parts and columns")
	}
}

func names(ms []*Metric) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

func TestRecoveryMetrics(t *testing.T) {
	get := func(name string, r *sim.Result) (float64, bool) {
		m, ok := Lookup(name)
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

// Plots label an optional headline metric's axis with its Quantity.
func TestOptionalHeadlineMetricsSayWhatTheyCount(t *testing.T) {
	for _, m := range All() {
		if m.Optional() && m.Headline && m.Quantity == "" && m.shown == nil {
			t.Errorf("%s: no Quantity for its plot axis", m.Name)
		}
	}
}

// Only a verdict that the operations one policy completes and the other
// does not could not overturn ranks a survivor metric.
func TestComparable(t *testing.T) {
	S, B, W := stats.Same, stats.Better, stats.Worse
	for _, c := range []struct {
		m               *Metric
		subset, verdict stats.Verdict
		want            bool
	}{
		{Attempts, W, B, true}, // over every operation: always
		{P99, S, B, true},      // same completions
		{P99, S, S, true},
		{P99, W, B, false}, // faster by completing fewer
		{P99, B, W, false}, // slower by completing more
		{P99, W, S, false}, // "~" over different operations
		{P99, B, B, true},  // faster while completing more
		{P99, W, W, true},  // slower while completing fewer
		{LastCompletion, W, B, false},
	} {
		if got := Comparable(c.m, c.subset, c.verdict); got != c.want {
			t.Errorf("Comparable(%s, completions %v, verdict %v) = %v, want %v", c.m.Name, c.subset, c.verdict, got, c.want)
		}
	}
}

// The metrics that state the trade: what a completion costs, the shares
// that completed and gave up, how long a give-up takes, the mean latency.
func TestTradeMetrics(t *testing.T) {
	r := &sim.Result{Clients: 4, Completed: 2, GaveUp: 2, Attempts: 10,
		Latencies: []time.Duration{time.Second, 2 * time.Second},
		GiveUps:   []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond}}
	for m, want := range map[*Metric]float64{AttemptsPerCompletion: 5, GoodputShare: 0.5, GaveUpShare: 0.5,
		GiveUpP50: 500, GiveUpP99: 1500, MeanLatency: 1500} {
		if v, ok := m.Value(r); !ok || v != want {
			t.Errorf("%s = %v, %v; want %v", m.Name, v, ok, want)
		}
	}
	none := &sim.Result{Clients: 3, GaveUp: 0, Completed: 3, Attempts: 3, Latencies: []time.Duration{1, 1, 1}}
	if _, ok := GiveUpP50.Value(none); ok || GiveUpP50.MissingReason() != "nothing gave up" || GiveUpP50.Over != OverGaveUp || GiveUpP50.Subset() != GaveUp {
		t.Errorf("time to give up of a run without give-ups")
	}
	if _, ok := AttemptsPerCompletion.Value(&sim.Result{Clients: 2, GaveUp: 2, Attempts: 4}); ok {
		t.Error("attempts per completion without completions")
	}
	for _, m := range []*Metric{GoodputShare, GaveUpShare} {
		if !m.Proportion || m.Over != OverRun {
			t.Errorf("%s: proportion %v over %v", m.Name, m.Proportion, m.Over)
		}
	}
}

package metrics

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

func TestRegistryOrder(t *testing.T) {
	want := []string{"completed", "attempts", "retries", "gave_up",
		"gave_up_by.attempts", "gave_up_by.deadline", "gave_up_by.terminal", "gave_up_by.queue_full", "gave_up_by.budget", "gave_up_by.throttled", "gave_up_by.circuit_open",
		"fallbacks", "amplification", "attempts_per_completion", "goodput_share", "gave_up_share", "give_up_ms.p50", "give_up_ms.p99",
		"latency_ms.mean", "latency_ms.p50", "latency_ms.p95", "latency_ms.p99", "last_completion_ms"}
	// The metrics only some servers, workloads and incidents count are
	// their kinds' to register (package kinds, scenarios' recovery.go): a
	// test that imports this package alone has none but a test one.
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v,\nwant %v", got, want)
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
	a := RegisterCounted(&Metric{Name: "test.a"}, CounterValue("test.a", 1))
	b := RegisterCounted(&Metric{Name: "test.b", Column: "b"}, CounterValue("test.b", 1))
	t.Cleanup(func() { registry = registry[:len(registry)-2] })
	withCounted := names(For(nil, "test.b", "test.a"))
	if !slices.Equal(withCounted[len(withCounted)-2:], []string{"test.a", "test.b"}) || len(withCounted) != len(want)-2 {
		t.Errorf("For with counted metrics gives %v", withCounted)
	}
	if !a.Optional() || a.Column != "test" || b.Column != "b" || len(Default()) != len(want)-4 {
		t.Errorf("counted metrics: optional %v, columns %q and %q, in Default %v", a.Optional(), a.Column, b.Column, len(Default()) != len(want)-4)
	}
	withBreaker := names(For([]sim.Policy{{Name: "a", Coordinators: []machine.Spec{policies.BreakerConfig{}}}}))
	if !slices.Contains(withBreaker, "gave_up_by.circuit_open") || slices.Contains(withBreaker, "gave_up_by.budget") {
		t.Errorf("a policy with a breaker shows %v", withBreaker)
	}
}

func TestValues(t *testing.T) {
	r := sim.Result{Policy: "p", Clients: 3, Completed: 3, Attempts: 10, Retries: 6, GaveUp: 1, Fallbacks: 2,
		Latencies: []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, LastCompletion: 3 * time.Second}
	r.GaveUpBy[policies.StopDeadline] = 1
	r.Counters = sim.Counters{{Name: "x.count", Value: 1 << 40}, {Name: "x.time", Value: int64(1500 * time.Millisecond)}}
	want := map[string]float64{"completed": 3, "attempts": 10, "amplification": 10.0 / 3, "gave_up_by.deadline": 1,
		"fallbacks": 2, "latency_ms.p50": 2000, "last_completion_ms": 3000}
	for name, v := range want {
		m, ok := Lookup(name)
		if !ok {
			t.Fatalf("no metric %q", name)
		}
		if got, ok := m.Value(&r); !ok || got != v {
			t.Errorf("%s = %v (ok %v), want %v (unrounded)", name, got, ok, v)
		}
	}
	for _, tt := range []struct {
		name string
		unit time.Duration
		want float64
	}{{"x.count", 1, 1 << 40}, {"x.time", time.Millisecond, 1500}, {"x.none", 1, 0}} {
		if got, ok := CounterValue(tt.name, tt.unit)(&r); !ok || got != tt.want {
			t.Errorf("counter %s = %v (ok %v), want %v", tt.name, got, ok, tt.want)
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

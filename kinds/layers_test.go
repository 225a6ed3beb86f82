package kinds

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// layers.retrying_CLASS counts the levels that retried a failure of the
// class (the sidecar the 503s, the app its timeouts); layers.after_giveup
// the requests of orphans.
func TestLayersMetrics(t *testing.T) {
	always503 := &sim.CapacityWindows{ResponseTime: sim.Fixed(50 * time.Millisecond), Phases: []sim.Phase{{Reject: sim.Rejection{Status: 503, Class: policies.Capacity}}}}
	run := func(appAttempts int, orphans bool) *sim.Result {
		p := sim.Policy{Name: "app", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: appAttempts, AttemptTimeout: 120 * time.Millisecond},
			Layers: []sim.Layer{{Name: "sidecar", NoDeadlinePropagation: orphans, Rules: policies.Policy{Backoff: policies.Constant{Wait: 25 * time.Millisecond}, MaxAttempts: 3}}}}
		r, err := sim.Run(sim.Config{Seed: 1, Server: always503, Workload: &sim.Burst{Clients: 2}, Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		return &r
	}
	value := func(name string, r *sim.Result) float64 {
		m, ok := metrics.Lookup(name)
		if !ok {
			t.Fatalf("no metric %s", name)
		}
		v, _ := m.Value(r)
		return v
	}
	// The sidecar's 3 requests (0, 75, 150 ms) outlast the app's 120 ms
	// attempt timeout, which the app retries as a transient failure.
	r := run(2, false)
	if got := value("layers.retrying_capacity", r); got != 1 {
		t.Errorf("capacity retried by %v levels, want 1 (the sidecar)", got)
	}
	if got := value("layers.retrying_transient", r); got != 1 {
		t.Errorf("transient retried by %v levels, want 1 (the app)", got)
	}
	if got := value("layers.after_giveup", r); got != 0 {
		t.Errorf("after_giveup %v with propagation", got)
	}
	r = run(1, true)
	if got := value("layers.retrying_transient", r); got != 0 {
		t.Errorf("transient retried by %v levels, want 0", got)
	}
	if got := value("layers.after_giveup", r); got != 2 {
		t.Errorf("after_giveup %v, want 2 (each operation's third sidecar request, at 150 ms)", got)
	}
}

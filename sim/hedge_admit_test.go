package sim

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// copyCounter is a CopyAdmitter that lets every attempt pass and admits
// every other hedge, counting what it was asked.
type copyCounter struct{ asked, admitted int64 }

func (c *copyCounter) Admit(time.Time, machine.Ask) machine.Admission { return machine.Admission{} }
func (c *copyCounter) Observe(time.Time, int, policies.Outcome)       {}
func (c *copyCounter) Release(time.Time, machine.Waiter, bool)        {}
func (c *copyCounter) AdmitCopy(time.Time, machine.Ask) bool {
	c.asked++
	if c.asked%2 == 0 {
		return false
	}
	c.admitted++
	return true
}

type copyCounterSpec struct{ c *copyCounter }

func (s copyCounterSpec) Validate() error                               { return nil }
func (s copyCounterSpec) NewCoordinator() (policies.Coordinator, error) { return s.c, nil }

// The engine sends a hedge only when the plan's CopyAdmitters admit it,
// through the same machine.Op.Hedge as Do: every hedge sent was asked for
// and charged, a refused one is not sent, and the budget is not spent on it.
func TestSimChargesHedgeCopies(t *testing.T) {
	c := &copyCounter{}
	cfg := Config{Seed: 1, Workload: Burst{Clients: 40},
		Server: admitAll(time.Second),
		Policy: Policy{Name: "hedged", Coordinators: []machine.Spec{
			policies.HedgeConfig{Delay: 300 * time.Millisecond, MaxHedges: 2}, copyCounterSpec{c}},
			Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 5}}}
	r := mustRun(t, cfg)
	sent := counter(r, "hedge.sent")
	// Each attempt asks for a second copy; admitted, it asks for a third.
	if c.asked != 60 || c.admitted != 30 || sent != c.admitted || counter(r, "hedge.denied") != 0 {
		t.Errorf("asked %d, admitted %d; hedge.sent %d, hedge.denied %d", c.asked, c.admitted, sent, counter(r, "hedge.denied"))
	}
	if int64(r.Attempts) != 40+sent {
		t.Errorf("%d requests sent for 40 operations and %d hedges", r.Attempts, sent)
	}
}

// A header pacer charges a hedge as a request in the simulator too: 20
// workers on a key of 60 requests per minute, answers of 1 s, a hedge
// 300 ms after each attempt's first copy. The key refuses nothing, hedged
// or not (serve's TestPacerAdmitsHedges is the same in production).
func TestSimPacerAdmitsHedges(t *testing.T) {
	for _, hedged := range []bool{false, true} {
		specs := []machine.Spec{policies.PacerConfig{}}
		if hedged {
			specs = append([]machine.Spec{policies.HedgeConfig{Delay: 300 * time.Millisecond, MaxHedges: 1}}, specs...)
		}
		cfg := Config{Seed: 1, Workload: &ClosedLoop{Workers: 20, PerWorker: 5},
			Server: &RateLimit{RequestsPerMinute: 60, RetryAfterUnit: time.Second, Inner: admitAll(time.Second)},
			Policy: Policy{Name: "paced", Coordinators: specs,
				Rules: policies.Policy{Backoff: policies.FullJitter{Base: time.Second, Factor: 2, Cap: 30 * time.Second}, MaxAttempts: 10, Deadline: 10 * time.Minute}}}
		r := mustRun(t, cfg)
		t.Logf("hedged %v: %d requests, %d completed, %d rate limited, %d hedges", hedged, r.Attempts, r.Completed, counter(r, "server.rate_limited"), counter(r, "hedge.sent"))
		if n := counter(r, "server.rate_limited"); n != 0 || r.Completed != 100 {
			t.Errorf("hedged %v: %d requests refused (429), %d of 100 completed", hedged, n, r.Completed)
		}
		if hedged && counter(r, "hedge.sent") == 0 {
			t.Errorf("no hedge was sent: the test does not exercise hedging")
		}
	}
}

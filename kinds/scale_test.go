package kinds

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// Scale multiplies the clients and every shared capacity by the factor, on
// a copy; a count too small to scale, and a kind that cannot be scaled,
// are refused with the reason.
func TestScale(t *testing.T) {
	parts := Parts{
		Server: &sim.Queue{Phases: []sim.WorkerPhase{{Duration: time.Second, Concurrency: 100}, {Concurrency: 50}},
			Service: sim.Fixed(time.Millisecond), QueueLimit: 400},
		Workload: sim.Burst{Clients: 10_000},
		Policies: []sim.Policy{{Name: "p", Coordinators: []machine.Spec{
			machine.GateConfig{},
			machine.ThrottleConfig{Count: 3, Per: time.Second, MaxQueue: 1000},
			machine.LimitConfig{MaxInFlight: 200},
			policies.RetryQuotaConfig{},
		}, Layers: []sim.Layer{{Name: "sdk", Coordinators: []machine.Spec{policies.RetryThrottlingConfig{MaxTokens: 100}}}}}},
	}
	got, err := Scale(parts, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	q := got.Server.(*sim.Queue)
	if q.Phases[0].Concurrency != 10 || q.Phases[1].Concurrency != 5 || q.QueueLimit != 40 {
		t.Errorf("queue scaled by 0.1: %+v", q)
	}
	if w := got.Workload.(sim.Burst); w.Clients != 1000 {
		t.Errorf("burst scaled by 0.1: %d clients", w.Clients)
	}
	p := &got.Policies[0]
	if th, _ := specOf[machine.ThrottleConfig](p); th.Count != 3 || th.Per != 10*time.Second || th.MaxQueue != 100 {
		t.Errorf("throttle scaled by 0.1: %+v", th)
	}
	if l, _ := specOf[machine.LimitConfig](p); l.MaxInFlight != 20 {
		t.Errorf("in-flight limit scaled by 0.1: %+v", l)
	}
	if rq, _ := specOf[policies.RetryQuotaConfig](p); rq.Capacity != policies.DefaultRetryQuota().Capacity/10 {
		t.Errorf("retry quota scaled by 0.1: %+v", rq)
	}
	if rt, _ := specOf[policies.RetryThrottlingConfig](&sim.Policy{Coordinators: p.Layers[0].Coordinators}); rt.MaxTokens != 10 {
		t.Errorf("a layer's gRPC throttling scaled by 0.1: %+v", rt)
	}
	if parts.Server.(*sim.Queue).Phases[1].Concurrency != 50 || parts.Policies[0].Coordinators[2].(machine.LimitConfig).MaxInFlight != 200 ||
		parts.Policies[0].Layers[0].Coordinators[0].(policies.RetryThrottlingConfig).MaxTokens != 100 {
		t.Error("Scale changed the parts it was given")
	}

	for _, c := range []struct {
		name  string
		parts Parts
		f     float64
		want  string
	}{
		{"too few workers", Parts{Server: &sim.Queue{Concurrency: 10, Service: sim.Fixed(time.Millisecond)}, Workload: sim.Burst{Clients: 1000}}, 0.01,
			"queue server: workers 10 cannot be scaled by 0.01"},
		{"contention", Parts{Server: &sim.Contention{}, Workload: sim.Burst{Clients: 1000}}, 0.1,
			"the contention server cannot be scaled"},
		{"rate limit", Parts{Server: &sim.RateLimit{RequestsPerMinute: 600, Inner: &sim.ErrorMix{}}, Workload: sim.Burst{Clients: 1000}}, 0.1,
			"the rate-limit server cannot be scaled"},
		{"factor", parts, 2, "scale factor 2 is not in (0, 1]"},
	} {
		if _, err := Scale(c.parts, c.f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// A capacity-windows phase whose admissions are too few to scale gets a
// window as much longer, if it still fits in the phase.
func TestScaleCapacityWindows(t *testing.T) {
	s := &sim.CapacityWindows{ResponseTime: sim.Fixed(time.Millisecond), Phases: []sim.Phase{
		{Duration: 20 * time.Second, Admit: 6, Window: time.Second},
		{Admit: 1000, Window: time.Second},
	}}
	got, err := Scale(Parts{Server: s, Workload: sim.Burst{Clients: 1000}}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	ph := got.Server.(*sim.CapacityWindows).Phases
	if ph[0].Admit != 6 || ph[0].Window != 10*time.Second || ph[1].Admit != 100 || ph[1].Window != time.Second {
		t.Errorf("scaled by 0.1: %+v", ph)
	}
	if _, err := Scale(Parts{Server: s, Workload: sim.Burst{Clients: 1000}}, 0.01); err == nil {
		t.Error("a 100 s window in a 20 s phase: no error")
	}
}

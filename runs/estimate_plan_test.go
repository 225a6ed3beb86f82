package runs

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

func TestAttemptBound(t *testing.T) {
	server := &sim.CapacityWindows{ResponseTime: sim.Fixed(100 * time.Millisecond)}
	for _, tt := range []struct {
		name string
		p    policies.Policy
		want float64
	}{
		{"max attempts", policies.Policy{MaxAttempts: 8, Deadline: time.Hour, Backoff: policies.FullJitter{Base: time.Second}}, 8},
		{"deadline, full jitter: response time only", policies.Policy{Deadline: 2 * time.Minute, Backoff: policies.FullJitter{Base: time.Second}}, 1201},
		{"deadline, constant 400ms", policies.Policy{Deadline: time.Minute, Backoff: policies.Constant{Wait: 400 * time.Millisecond}}, 121},
		{"deadline, exponential from 900ms", policies.Policy{Deadline: time.Minute, Backoff: policies.Exponential{Base: 900 * time.Millisecond, Cap: time.Hour}}, 61},
		{"smaller of the two", policies.Policy{MaxAttempts: 1000, Deadline: time.Minute, Backoff: policies.Exponential{Base: 900 * time.Millisecond}}, 61},
	} {
		p := sim.Policy{Rules: tt.p}
		if got := attemptBound(server, &p); got != tt.want {
			t.Errorf("%s: %g attempts, want %g", tt.name, got, tt.want)
		}
	}
	// A zero response time and no wait floor: one attempt per nanosecond.
	zero := &sim.CapacityWindows{ResponseTime: sim.Fixed(0)}
	p := sim.Policy{Rules: policies.Policy{Deadline: time.Second, Backoff: policies.FullJitter{Base: time.Second}}}
	if got := attemptBound(zero, &p); got != 1e9+1 {
		t.Errorf("zero floor: %g", got)
	}
}

// The examples: 50 M clients for 1000 h with no attempt limit is
// refused; so is the memory of a huge sweep; a long run only warns.
func TestEstimateLimits(t *testing.T) {
	s := &scenarios.Scenario{
		Server:   &sim.CapacityWindows{ResponseTime: sim.Fixed(kinds.DefaultResponseTime)},
		Workload: sim.Burst{Clients: kinds.MaxClients},
		Policies: []sim.Policy{{Rules: policies.Policy{Deadline: scenarios.MaxDuration, Backoff: policies.FullJitter{Base: kinds.DefaultBase, Cap: kinds.DefaultCap}}}},
	}
	if r := EstimateOf(s, 1).Refusal(); !strings.Contains(r, "engine events") {
		t.Errorf("50 M clients × 1000 h: refusal %q", r)
	}
	big := Estimate{Events: 1, Kept: 100 << 30}
	if r := big.Refusal(); !strings.Contains(r, "100 GiB of memory, over the limit of 64 GiB") {
		t.Errorf("memory: refusal %q", r)
	}
	long := Estimate{Events: 2e9, Workers: 2}
	if long.Refusal() != "" || !long.Long() || long.Time() != 400*time.Second {
		t.Errorf("2e9 events: refusal %q, long %v, time %v", long.Refusal(), long.Long(), long.Time())
	}
	sum := Estimate{Runs: 1, Events: 10, Memory: 5, Kept: 1}.Add(Estimate{Runs: 2, Events: 20, Memory: 3, Kept: 2})
	if sum.Runs != 3 || sum.Events != 30 || sum.Memory != 5 || sum.Kept != 3 {
		t.Errorf("Add: %+v", sum)
	}
}

// Each client process with an operation counts its retry layer: 128 B and
// 700 B per coordinator. Processes without an operation count nothing.
func TestEstimateCountsClientProcesses(t *testing.T) {
	memory := func(arrivals, processes int) float64 {
		s := &scenarios.Scenario{
			Server:   &sim.CapacityWindows{ResponseTime: sim.Fixed(kinds.DefaultResponseTime)},
			Workload: &sim.OpenLoop{Rates: sim.ConstantRate(float64(arrivals)), Until: time.Second, Regular: true, Processes: processes},
			Policies: []sim.Policy{
				{Name: "plain", Rules: policies.Policy{MaxAttempts: 3, Backoff: policies.Constant{}}},
				{Name: "budgeted", Coordinators: []machine.Spec{policies.BreakerConfig{}, policies.RetryThrottlingConfig{}},
					Rules: policies.Policy{MaxAttempts: 3, Backoff: policies.Constant{}}},
			},
		}
		e := EstimateOf(s, 1)
		return e.Memory / float64(e.Workers)
	}
	one := memory(100, 1)
	if got, want := memory(100, 1_000_000)-one, 100.0*(128+2*700); got != want {
		t.Errorf("100 arrivals over 1,000,000 processes: %g bytes for the processes, want %g", got, want)
	}
	if a, b := memory(100, 1_000_000), memory(100, 100); a != b {
		t.Errorf("processes without an operation count: %g bytes, %g with one process per arrival", a, b)
	}
	if got, want := memory(100_000, 1_000), memory(100_000, 1)+1_000*(128+2*700); got != want {
		t.Errorf("100,000 arrivals over 1,000 processes: %g bytes, want %g", got, want)
	}
}

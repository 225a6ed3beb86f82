package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// sumOfLevels checks that r's levels add up to r: every count, and the
// latencies and give-up times as multisets.
func sumOfLevels(t *testing.T, name string, r Result) {
	t.Helper()
	var sum Result
	for k, l := range r.ByPriority {
		if k > 0 && l.Priority >= r.ByPriority[k-1].Priority {
			t.Errorf("%s: levels out of order: %v after %v", name, l.Priority, r.ByPriority[k-1].Priority)
		}
		if l.Policy != r.Policy {
			t.Errorf("%s: level %v is of policy %q", name, l.Priority, l.Policy)
		}
		sum.Clients += l.Clients
		sum.Completed += l.Completed
		sum.Attempts += l.Attempts
		sum.Retries += l.Retries
		sum.GaveUp += l.GaveUp
		sum.Fallbacks += l.Fallbacks
		sum.Admitted += l.Admitted
		sum.Rejected += l.Rejected
		for k, n := range l.GaveUpBy {
			sum.GaveUpBy[k] += n
		}
		sum.Latencies = append(sum.Latencies, l.Latencies...)
		sum.GiveUps = append(sum.GiveUps, l.GiveUps...)
		sum.LastCompletion = max(sum.LastCompletion, l.LastCompletion)
		if !slices.IsSorted(l.Latencies) || !slices.IsSorted(l.GiveUps) {
			t.Errorf("%s: level %v's times are not sorted", name, l.Priority)
		}
	}
	slices.Sort(sum.Latencies)
	slices.Sort(sum.GiveUps)
	got := [...]int{sum.Clients, sum.Completed, sum.Attempts, sum.Retries, sum.GaveUp, sum.Fallbacks, sum.Admitted, sum.Rejected}
	want := [...]int{r.Clients, r.Completed, r.Attempts, r.Retries, r.GaveUp, r.Fallbacks, r.Admitted, r.Rejected}
	if got != want || sum.GaveUpBy != r.GaveUpBy || sum.LastCompletion != r.LastCompletion ||
		!slices.Equal(sum.Latencies, r.Latencies) || !slices.Equal(sum.GiveUps, r.GiveUps) {
		t.Errorf("%s: the levels add up to\n%v %v last %v\nthe run counted\n%v %v last %v", name, got, sum.GaveUpBy, sum.LastCompletion, want, r.GaveUpBy, r.LastCompletion)
	}
}

// Each level counts its own operations, and the levels add up to the run,
// with retries, give-ups for two reasons, fallbacks, hedges and layers.
func TestResultsByPriorityAddUp(t *testing.T) {
	server := &CapacityWindows{ResponseTime: Fixed(ms), Phases: []Phase{{Admit: 4, Window: sec, Reject: overloaded}}}
	retrying := policies.Policy{Backoff: policies.Constant{Wait: 300 * ms}, MaxAttempts: 4, Deadline: 1500 * time.Millisecond}
	ps := []Policy{
		{Name: "retrying", Rules: retrying},
		{Name: "fallback", Rules: retrying, Fallback: &Fallback{After: 2}},
		{Name: "layered", Rules: retrying, Layers: []Layer{{Name: "sdk", Rules: policies.Policy{Backoff: policies.Constant{Wait: 10 * ms}, MaxAttempts: 2}}}},
		{Name: "hedged", Rules: policies.Policy{Backoff: policies.Constant{Wait: 300 * ms}, MaxAttempts: 4},
			Coordinators: []machine.Spec{policies.HedgeConfig{Delay: ms / 2}}},
	}
	for _, p := range ps {
		r := mustRun(t, Config{Seed: 3, Server: server, Workload: prioritizedBurst{Burst{Clients: 30, Spread: 2 * sec}}, Policy: p})
		if len(r.ByPriority) != 3 || r.GaveUp == 0 || r.Completed == 0 {
			t.Fatalf("%s: %d levels, %d completed, %d gave up; want 3 levels, both outcomes", p.Name, len(r.ByPriority), r.Completed, r.GaveUp)
		}
		for _, l := range r.ByPriority {
			if l.Clients != 10 {
				t.Errorf("%s: level %v has %d operations, want 10 (every third)", p.Name, l.Priority, l.Clients)
			}
		}
		sumOfLevels(t, p.Name, r)
	}
	if r := mustRun(t, Config{Seed: 3, Server: server, Workload: Burst{Clients: 30}, Policy: ps[0]}); r.ByPriority != nil {
		t.Errorf("a workload without priorities has levels: %+v", r.ByPriority)
	}
}

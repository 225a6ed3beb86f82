package sim

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// Two client groups on one server that rejects everything: a foreground
// of 4 sessions of 3 turns (critical) with a policy of its own, 5
// attempts a call, and a background burst of 6 (sheddable) that runs the
// run's policy, 1 attempt. Each foreground session's first call gives up
// and fails it; every request carries its group's priority, and each
// group's attempts are its policy's.
func TestGroupsShareOneServerWithTheirOwnPolicies(t *testing.T) {
	reject := &CapacityWindows{ResponseTime: Fixed(ms), Phases: []Phase{{Reject: overloaded}}}
	fg := &Policy{Name: "fg", Rules: policies.Policy{Backoff: policies.Constant{Wait: 10 * ms}, MaxAttempts: 5}}
	w := &Groups{Members: []Group{
		{Name: "foreground", Workload: &AgentSessions{Sessions: 4, Turns: 3, InputTokens: 7}, Priority: PriorityCritical, Policy: fg},
		{Name: "background", Workload: Burst{Clients: 6}, Priority: PrioritySheddable},
	}}
	var log []exchange
	c := Config{Seed: 2, Server: recorder{reject, &log}, Workload: w, Policy: once}
	r := mustRun(t, c)
	perPrio := map[Priority]int{}
	for _, e := range log {
		perPrio[e.req.Priority]++
		if critical := e.req.Priority == PriorityCritical; critical != (e.req.InputTokens == 7) {
			t.Errorf("op %d: priority %v with %d input tokens", e.req.Op, e.req.Priority, e.req.InputTokens)
		}
	}
	if perPrio[PriorityCritical] != 4*5 || perPrio[PrioritySheddable] != 6 || len(perPrio) != 2 {
		t.Errorf("requests by priority %v, want 20 critical (4 calls × 5 attempts), 6 sheddable", perPrio)
	}
	if r.Clients != 10 || r.GaveUp != 10 || counter(r, "sessions.failed") != 4 || len(r.ByPriority) != 2 {
		t.Errorf("%d operations, %d gave up, counters %v, %d levels", r.Clients, r.GaveUp, r.Counters, len(r.ByPriority))
	}
	sumOfLevels(t, "groups", r)
	if again := mustRun(t, c); !reflect.DeepEqual(again, r) {
		t.Error("the same seed gave another run")
	}
	if got := w.PriorityLevels(); !reflect.DeepEqual(got, []Priority{PriorityCritical, PrioritySheddable}) {
		t.Errorf("levels %v", got)
	}
}

// A group's policy's deadline is its own: against a server that answers
// in 1 s, the foreground's 1.5 s deadline ends its operations at 1.5 s
// (one attempt, then its budget), the run's policy has none.
func TestGroupsKeepTheirOwnDeadlines(t *testing.T) {
	slow := &CapacityWindows{ResponseTime: Fixed(sec), Phases: []Phase{{Reject: overloaded}}}
	fg := &Policy{Name: "fg", Rules: policies.Policy{Backoff: policies.Constant{Wait: 100 * ms}, MaxAttempts: 10, Deadline: 1500 * time.Millisecond}}
	w := &Groups{Members: []Group{
		{Name: "fg", Workload: Burst{Clients: 2}, Priority: PriorityCritical, Policy: fg},
		{Name: "bg", Workload: Burst{Clients: 3}, Priority: PrioritySheddable},
	}}
	r := mustRun(t, Config{Seed: 1, Server: slow, Workload: w, Policy: Policy{Name: "two", Rules: policies.Policy{Backoff: policies.Constant{Wait: 100 * ms}, MaxAttempts: 2}}})
	crit, _ := r.OfPriority(PriorityCritical)
	shed, _ := r.OfPriority(PrioritySheddable)
	if crit.GaveUpBy[policies.StopDeadline] != 2 || crit.GiveUps[1] != 1500*ms || crit.Attempts != 4 ||
		shed.GaveUpBy[policies.StopAttempts] != 3 || shed.GiveUps[0] != 2100*ms {
		t.Errorf("critical: %d by deadline after %v, %d attempts; sheddable: %d by attempts after %v", crit.GaveUpBy[policies.StopDeadline], crit.GiveUps, crit.Attempts,
			shed.GaveUpBy[policies.StopAttempts], shed.GiveUps)
	}
}

// What groups cannot do is refused with its reason.
func TestGroupsRefuse(t *testing.T) {
	fixed := &Policy{Name: "fixed", Rules: once.Rules}
	layered := &Policy{Name: "layered", Rules: once.Rules, Layers: []Layer{{Name: "sdk", Rules: once.Rules}}}
	hedging := Policy{Name: "hedging", Rules: once.Rules, Coordinators: []machine.Spec{policies.HedgeConfig{Delay: ms}}}
	burst := Burst{Clients: 1}
	for _, tt := range []struct {
		w      *Groups
		policy Policy
		want   string
	}{
		{&Groups{}, once, "at least one group"},
		{&Groups{Members: []Group{{Name: "a", Workload: burst, Policy: layered}}}, once, `group "a": its policy "layered" has retry layers`},
		{&Groups{Members: []Group{{Name: "a", Workload: burst, Policy: fixed}}}, hedging, `policy "hedging" hedges, which the run does for every group, and some client groups have a policy of their own`},
		{&Groups{Members: []Group{{Name: "a", Workload: &OpenLoop{Rates: ConstantRate(1), Until: sec}}}}, once, "drawn afresh"},
		{&Groups{Members: []Group{{Name: "a", Workload: burst}, {Name: "a", Workload: burst}}}, once, "two groups are called"},
		{&Groups{Members: []Group{{Name: "a", Workload: &Groups{Members: []Group{{Name: "b", Workload: burst}}}}}}, once, "do not nest"},
	} {
		_, err := Run(Config{Seed: 1, Server: admitAll(ms), Workload: tt.w, Policy: tt.policy})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want %q", err, tt.want)
		}
	}
	// Without a group policy, the run's policy may hedge.
	if _, err := Run(Config{Seed: 1, Server: admitAll(ms), Workload: &Groups{Members: []Group{{Name: "a", Workload: burst}}}, Policy: hedging}); err != nil {
		t.Error(err)
	}
}

package machine_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies/machine"
)

var epoch = time.Unix(0, 0)

func at(d time.Duration, since time.Duration) machine.Moment {
	return machine.Moment{Now: epoch.Add(d), Since: since}
}

// The state machine alone, without a driver: the rules the two drivers share.
func TestOpSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	overloaded := machine.Outcome{Class: machine.Capacity, Status: 529}
	for _, tt := range []struct {
		name   string
		policy machine.Policy
		since  time.Duration // when the failed response arrives
		want   machine.Step
	}{
		{"retry after the backoff", machine.Policy{Backoff: machine.Constant{Wait: time.Second}, Deadline: 10 * time.Second},
			2 * time.Second, machine.Step{Kind: machine.StepWait, Delay: time.Second}},
		{"a wait past the budget stops", machine.Policy{Backoff: machine.Constant{Wait: time.Second}, Deadline: 10 * time.Second},
			9500 * time.Millisecond, machine.Step{Kind: machine.StepStop, Reason: machine.StopDeadline}},
		// A failure at the budget's very end leaves no time for even a retry
		// with no wait (which, with no time passing, would loop).
		{"no retry at the budget's end", machine.Policy{Backoff: machine.Constant{}, Deadline: 10 * time.Second},
			10 * time.Second, machine.Step{Kind: machine.StepStop, Reason: machine.StopDeadline}},
		{"attempts", machine.Policy{Backoff: machine.Constant{}, MaxAttempts: 1},
			0, machine.Step{Kind: machine.StepStop, Reason: machine.StopAttempts}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan := &machine.Plan{Policy: tt.policy}
			var op machine.Op
			op.Start(plan)
			if st := op.Before(plan, at(0, 0), nil, rng); st.Kind != machine.StepSend {
				t.Fatalf("Before = %+v, want send", st)
			}
			if got := op.After(plan, at(tt.since, tt.since), overloaded, true, nil, rng); got != tt.want {
				t.Errorf("After = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The fallback counts capacity failures over the whole operation, or, with
// Consecutive, only those in a row: a 500 between two 529s starts the count
// again.
func TestOpFallbackCount(t *testing.T) {
	capacity := machine.Outcome{Class: machine.Capacity, Status: 529}
	transient := machine.Outcome{Class: machine.Transient, Status: 500}
	for _, tt := range []struct {
		consecutive bool
		want        string
	}{{false, "big,big,big,small"}, {true, "big,big,big,big"}} {
		plan := &machine.Plan{Policy: machine.Policy{Backoff: machine.Constant{}},
			Fallback: &machine.ModelFallback{Primary: "big", Fallback: "small", After: 2, Consecutive: tt.consecutive}}
		var op machine.Op
		op.Start(plan)
		var models []string
		for i, out := range []machine.Outcome{capacity, transient, capacity, transient} {
			op.Before(plan, at(0, 0), nil, nil)
			models = append(models, op.Model(plan))
			if st := op.After(plan, at(time.Duration(i), 0), out, true, nil, nil); st.Kind != machine.StepWait {
				t.Fatalf("After = %+v", st)
			}
		}
		if got := strings.Join(models, ","); got != tt.want {
			t.Errorf("consecutive %v: models %s, want %s", tt.consecutive, got, tt.want)
		}
	}
}

// An operation keeps track of what each of up to MaxCoordinators
// coordinators holds for it: all of it is given back after the attempt.
func TestOpReleasesEveryCoordinator(t *testing.T) {
	plan := &machine.Plan{Policy: machine.Policy{Backoff: machine.Constant{}}}
	var limiters []*machine.Limiter
	for range machine.MaxCoordinators {
		l, _ := machine.NewLimiter(1, 0)
		limiters = append(limiters, l)
		plan.Coordinators = append(plan.Coordinators, l)
	}
	var op machine.Op
	op.Start(plan)
	if st := op.Before(plan, at(0, 0), nil, nil); st.Kind != machine.StepSend {
		t.Fatalf("Before = %+v, want send", st)
	}
	for i, l := range limiters {
		if l.InFlight() != 1 {
			t.Fatalf("limiter %d: %d in flight, want 1", i, l.InFlight())
		}
	}
	op.After(plan, at(time.Second, time.Second), machine.Outcome{}, false, nil, nil)
	for i, l := range limiters {
		if l.InFlight() != 0 {
			t.Errorf("limiter %d still holds a slot after the attempt", i)
		}
	}
}

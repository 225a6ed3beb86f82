package machine

import (
	"math/rand/v2"
	"testing"
	"time"
)

// A restarting fallback (Claude Code's): 3 capacity failures on the
// primary, the switch at once, then MaxAttempts more on the fallback with
// the backoff from its first retry: 3 + 11 = 14 attempts against an
// always-529 server, where the counting fallback stops at 11.
func TestFallbackRestart(t *testing.T) {
	for _, tc := range []struct {
		restart bool
		want    int
	}{{false, 11}, {true, 14}} {
		plan := Plan{Policy: Policy{Backoff: Exponential{Base: 500 * time.Millisecond, Factor: 2, Cap: 32 * time.Second}, MaxAttempts: 11},
			Fallback: &ModelFallback{Primary: "p", Fallback: "f", After: 3, Restart: tc.restart}}
		rng := rand.New(rand.NewPCG(1, 2))
		var op Op
		op.Start(&plan)
		var models []string
		var delays []time.Duration
		now := time.Unix(0, 0)
		for {
			if st := op.Before(&plan, Moment{Now: now}, nil, rng); st.Kind != StepSend {
				t.Fatalf("restart %v: Before gave %v", tc.restart, st.Kind)
			}
			models = append(models, op.Model(&plan))
			st := op.After(&plan, Moment{Now: now}, Outcome{Class: Capacity, Status: 529}, true, nil, rng)
			if st.Kind == StepStop {
				if st.Reason != StopAttempts {
					t.Fatalf("restart %v: stopped for %v", tc.restart, st.Reason)
				}
				break
			}
			delays = append(delays, st.Delay)
			now = now.Add(st.Delay)
		}
		if len(models) != tc.want {
			t.Fatalf("restart %v: %d attempts, want %d", tc.restart, len(models), tc.want)
		}
		if models[2] != "p" || models[3] != "f" {
			t.Errorf("restart %v: models %v: want the switch after the third attempt", tc.restart, models)
		}
		if !tc.restart {
			continue
		}
		// The switch sends at once; the fallback's retries wait 0.5 s, 1 s, ...
		if delays[2] != 0 || delays[3] != 500*time.Millisecond || delays[4] != time.Second {
			t.Errorf("delays %v: want 0 at the switch, then 500ms, 1s", delays)
		}
	}
}

// The switch happens even when the primary's attempts are spent
// (CLAUDE_CODE_MAX_RETRIES=2 made 3 + 3 requests), and not for a failure
// the policy does not retry.
func TestFallbackRestartAtTheLimit(t *testing.T) {
	plan := Plan{Policy: Policy{Backoff: Constant{Wait: time.Second}, MaxAttempts: 3},
		Fallback: &ModelFallback{Primary: "p", Fallback: "f", After: 3, Restart: true}}
	rng := rand.New(rand.NewPCG(1, 2))
	var op Op
	op.Start(&plan)
	n := 0
	for {
		op.Before(&plan, Moment{}, nil, rng)
		n++
		if st := op.After(&plan, Moment{}, Outcome{Class: Capacity, Status: 529}, true, nil, rng); st.Kind == StepStop {
			break
		}
	}
	if n != 6 {
		t.Errorf("%d attempts, want 3 + 3", n)
	}
	plan.Policy.NoCapacityRetries = true
	plan.Fallback = &ModelFallback{Primary: "p", Fallback: "f", After: 1, Restart: true}
	op.Start(&plan)
	op.Before(&plan, Moment{}, nil, rng)
	if st := op.After(&plan, Moment{}, Outcome{Class: Capacity, Status: 529}, true, nil, rng); st.Kind != StepStop || op.OnFallback() {
		t.Errorf("a capacity failure that is not retried: step %v, on the fallback %v", st.Kind, op.OnFallback())
	}
}

package runs

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// Hedges are attempts: bounded by a deadline alone, each attempt may send
// 1+MaxHedges copies; max_attempts counts the hedges already.
func TestAttemptBoundWithHedges(t *testing.T) {
	server := &sim.CapacityWindows{ResponseTime: sim.Fixed(100 * time.Millisecond)}
	hedge := []machine.Spec{policies.HedgeConfig{MaxHedges: 3}}
	p := sim.Policy{Rules: policies.Policy{Deadline: time.Minute, Backoff: policies.Constant{Wait: 400 * time.Millisecond}}, Coordinators: hedge}
	if got := attemptBound(server, &p); got != 4*121 {
		t.Errorf("deadline only: %g attempts, want %d", got, 4*121)
	}
	p.Rules.MaxAttempts = 8
	if got := attemptBound(server, &p); got != 8 {
		t.Errorf("max attempts 8: %g attempts, want 8", got)
	}
}

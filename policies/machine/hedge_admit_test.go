package machine_test

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies/machine"
)

// Each CopyAdmitter admits a hedge only if its share is there now, takes
// it then, and takes nothing when it refuses.
func TestCopyAdmitters(t *testing.T) {
	t0 := time.Unix(0, 0)
	sec := time.Second

	t.Run("pacer", func(t *testing.T) {
		p, _ := machine.NewPacer(machine.PacerConfig{})
		var _ machine.CopyAdmitter = p
		if !p.AdmitCopy(t0, machine.Ask{}) {
			t.Error("a pacer that knows no limits refused a hedge")
		}
		p.Update(t0, machine.RateLimits{Requests: machine.RateLimit{Limit: 60, Remaining: 1}})
		if !p.AdmitCopy(t0, machine.Ask{}) || p.AdmitCopy(t0, machine.Ask{}) {
			t.Error("one request left: want the first hedge admitted, the second refused")
		}
		if got := p.Limits(t0.Add(sec)).Requests.Remaining; got != 1 {
			t.Errorf("a second later %d left, want 1 (the refused hedge took nothing)", got)
		}
	})
	t.Run("throttle", func(t *testing.T) {
		th, _ := machine.NewThrottle(1, sec, 0)
		if !th.AdmitCopy(t0, machine.Ask{}) || th.AdmitCopy(t0, machine.Ask{}) {
			t.Error("one start a second: want the first hedge admitted, the second refused")
		}
		if at, err := th.Reserve(t0, time.Time{}); err != nil || !at.Equal(t0.Add(sec)) {
			t.Errorf("the next start at %v (%v), want 1s: the hedge took slot 0 and the refused one nothing", at.Sub(t0), err)
		}
	})
	t.Run("gate", func(t *testing.T) {
		var g machine.Gate
		if !g.AdmitCopy(t0, machine.Ask{}) {
			t.Error("an open gate refused a hedge")
		}
		g.Push(t0, sec)
		if g.AdmitCopy(t0, machine.Ask{}) || !g.AdmitCopy(t0.Add(sec), machine.Ask{}) {
			t.Error("want a hedge refused while the gate is closed, admitted once it opens")
		}
	})
	t.Run("cubic", func(t *testing.T) {
		c, _ := machine.NewCubicRate(machine.CubicRateConfig{})
		if !c.AdmitCopy(t0, machine.Ask{}) {
			t.Error("a cubic rate before any throttle refused a hedge")
		}
		c.Observe(t0, 1, machine.Outcome{Class: machine.RetryAfter})
		n := 0
		for c.AdmitCopy(t0, machine.Ask{}) && n < 1000 {
			n++
		}
		if n == 1000 {
			t.Error("a throttled cubic rate admits hedges without end")
		}
	})
}

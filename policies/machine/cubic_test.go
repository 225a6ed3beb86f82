package machine

import (
	"math"
	"testing"
	"time"
)

// A worked example of the adaptive send rate, with the default constants
// (beta 0.7, scale 0.4, smoothing 0.8, minimum 0.5/s), computed by hand.
func TestCubicRateWorked(t *testing.T) {
	l, _ := NewCubicRate(CubicRateConfig{})
	t0 := time.Unix(100, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * 1e9)) }
	ok := Outcome{}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %.9f, want %.9f", what, got, want)
		}
	}

	// Until the first throttle, nothing is limited.
	for _, s := range []float64{0, 0.25, 0.5} {
		if a := l.Admit(at(s), Ask{}); a.Kind != AdmitPass {
			t.Fatalf("before a throttle: %+v, want pass", a)
		}
		l.Observe(at(s), 1, ok)
	}
	// Three responses in the bucket [0, 0.5): 6/s, smoothed 0.8·6 = 4.8/s.
	near("measured rate", l.measured, 4.8)

	// A 429 at 0.75 s: the rate in use (4.8/s, the measured one: the
	// limiter was not enforcing yet) falls to 0.7·4.8 = 3.36/s; K = ∛(4.8·0.3/0.4).
	l.Observe(at(0.75), 1, Outcome{Class: RetryAfter, Status: 429})
	rate, enabled := l.Rate()
	if !enabled {
		t.Fatal("not enforcing after a throttle")
	}
	near("rate after the throttle", rate, 3.36)
	near("K", l.window, math.Cbrt(3.6))

	// The bucket held 0.375 tokens (refilled at 0.5/s from 0 s); the first
	// attempt waits (1 − 0.375)/3.36 s for its token, the next one
	// (1 + 0.625)/3.36 s.
	for _, want := range []float64{0.625 / 3.36, 1.625 / 3.36} {
		a := l.Admit(at(0.75), Ask{})
		if a.Kind != AdmitGrant {
			t.Fatalf("after the throttle: %+v, want a grant", a)
		}
		near("wait for a token", a.At.Sub(at(0.75)).Seconds(), want)
	}
	// A token past the operation's latest start stops it.
	if a := l.Admit(at(0.75), Ask{Latest: at(0.8)}); a.Kind != AdmitDeny || a.Reason != StopDeadline {
		t.Errorf("token after the latest start: %+v, want a deadline stop", a)
	}

	// A success at T + K: the cubic curve is back at Wmax = 4.8/s, but the
	// rate may not pass twice the measured one. Measured at 2.0 s: two
	// responses over [0.5, 2.0) → 4/3 per s, smoothed 0.8·4/3 + 0.2·4.8.
	tk := 0.75 + math.Cbrt(3.6)
	l.Observe(at(tk), 2, ok)
	measured := 0.8*4.0/3 + 0.2*4.8
	rate, _ = l.Rate()
	near("rate at T+K", rate, 2*measured)
}

// The rate never falls below MinFillRate, and capacity errors throttle only
// when asked to.
func TestCubicRateFloorAndClasses(t *testing.T) {
	l, _ := NewCubicRate(CubicRateConfig{})
	now := time.Unix(0, 0)
	l.Observe(now, 1, Outcome{Class: Capacity, Status: 529})
	if _, enabled := l.Rate(); enabled {
		t.Error("a 529 enabled the limiter without ThrottleOnCapacity")
	}
	l, _ = NewCubicRate(CubicRateConfig{ThrottleOnCapacity: true})
	for i := range 20 {
		l.Observe(now.Add(time.Duration(i)*time.Second), 1, Outcome{Class: Capacity, Status: 529})
	}
	if rate, enabled := l.Rate(); !enabled || rate != 0.5 {
		t.Errorf("after 20 throttles: rate %v (enabled %v), want the 0.5/s floor", rate, enabled)
	}
}

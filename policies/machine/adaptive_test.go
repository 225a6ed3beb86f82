package machine

import (
	"math/rand/v2"
	"testing"
	"time"
)

// draws is a random source whose Float64 draws are the given values, in
// turn; it counts the draws.
type draws struct {
	us []float64
	n  int
}

func (d *draws) Uint64() uint64 {
	u := d.us[d.n]
	d.n++
	return uint64(u * (1 << 53)) // Float64 keeps the low 53 bits and divides by 2^53
}

func TestAdaptiveRejectProbability(t *testing.T) {
	for _, tc := range []struct {
		k                 float64
		requests, accepts int
		p                 float64
	}{
		{2, 0, 0, 0},
		{2, 10, 10, 0},
		{2, 10, 5, 0},         // 10 − 2·5 = 0
		{2, 10, 4, 2.0 / 11},  // (10 − 8) / 11
		{2, 10, 0, 10.0 / 11}, // nothing accepted
		{2, 3, 1, 1.0 / 4},
		{1.5, 10, 4, 4.0 / 11},
		{1, 99, 0, 99.0 / 100},
	} {
		a, err := NewAdaptiveThrottle(AdaptiveThrottleConfig{K: tc.k})
		if err != nil {
			t.Fatal(err)
		}
		for i := range tc.requests {
			out := overloaded
			if i < tc.accepts {
				out = Outcome{}
			}
			a.Observe(t0, 1, out)
		}
		if got := a.RejectProbability(t0); got != tc.p {
			t.Errorf("K %v, %d requests, %d accepts: p = %v, want %v", tc.k, tc.requests, tc.accepts, got, tc.p)
		}
	}
	for _, bad := range []AdaptiveThrottleConfig{{K: -1}, {Window: -time.Second}, {Slots: -1}, {Window: 5, Slots: 10}} {
		if _, err := NewAdaptiveThrottle(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestAdaptiveAccepts(t *testing.T) {
	for _, tc := range []struct {
		rejections ClassSet
		out        Outcome
		accepted   bool
	}{
		{0, Outcome{}, true},
		{0, overloaded, false},
		{0, rateLimited, false},
		{0, serverError, true},
		{0, Outcome{Class: Terminal, Status: 400}, true},
		{Classes(Capacity, Transient), serverError, false},
		{Classes(Capacity, Transient), rateLimited, true},
	} {
		a, _ := NewAdaptiveThrottle(AdaptiveThrottleConfig{Rejections: tc.rejections})
		a.Observe(t0, 1, tc.out)
		// One request: p = (1 − 2·accepts) / 2.
		want := 0.5
		if tc.accepted {
			want = 0
		}
		if got := a.RejectProbability(t0); got != want {
			t.Errorf("rejections %v, %v: p = %v, want %v", tc.rejections, tc.out.Class, got, want)
		}
	}
}

// Adaptive throttling worked by hand, K = 2, a 2-minute window in 12 s
// slots: ten overloads make p = 10/11; a draw above p passes and records
// nothing, a draw below rejects and counts as a request (p = 11/12); once
// the window has forgotten them, p is 0 and nothing is drawn.
func TestAdaptiveThrottleByHand(t *testing.T) {
	a, _ := NewAdaptiveThrottle(AdaptiveThrottleConfig{})
	for range 10 {
		a.Observe(at(0), 1, overloaded)
	}
	src := &draws{us: []float64{0.95, 0.5}}
	rng := rand.New(src)
	if adm := a.Admit(at(time.Second), Ask{Rand: rng}); adm.Kind != AdmitPass {
		t.Fatalf("draw 0.95 against p = 10/11: %+v, want pass", adm)
	}
	if got := a.RejectProbability(at(time.Second)); got != 10.0/11 {
		t.Fatalf("a pass recorded something: p = %v", got)
	}
	adm := a.Admit(at(time.Second), Ask{Rand: rng, Retry: true})
	if adm.Kind != AdmitDeny || adm.Reason != StopThrottled || adm.Cause != ErrThrottled {
		t.Fatalf("draw 0.5 against p = 10/11: %+v, want a local rejection", adm)
	}
	if got := a.RejectProbability(at(time.Second)); got != 11.0/12 {
		t.Fatalf("after the rejection: p = %v, want 11/12", got)
	}
	// Six successes: 17 requests, 6 accepts: (17 − 12) / 18.
	for range 6 {
		a.Observe(at(12*time.Second), 1, Outcome{})
	}
	if got := a.RejectProbability(at(12 * time.Second)); got != 5.0/18 {
		t.Fatalf("after 6 successes: p = %v, want 5/18", got)
	}
	// At 2 min the first slot (0–12 s) is forgotten: 6 requests, 6 accepts.
	if got := a.RejectProbability(at(2 * time.Minute)); got != 0 {
		t.Fatalf("at 2 min: p = %v, want 0", got)
	}
	if adm := a.Admit(at(2*time.Minute), Ask{Rand: rng}); adm.Kind != AdmitPass || src.n != 2 {
		t.Fatalf("p = 0: %+v after %d draws; want a pass without a draw", adm, src.n)
	}
	// Without a random source it rejects when p ≥ 1/2.
	b, _ := NewAdaptiveThrottle(AdaptiveThrottleConfig{})
	b.Observe(t0, 1, overloaded)
	if adm := b.Admit(t0, Ask{}); adm.Kind != AdmitDeny {
		t.Errorf("p = 1/2 without Rand: %+v, want a rejection", adm)
	}
}

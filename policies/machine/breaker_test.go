package machine

import (
	"testing"
	"time"
)

func TestBreakerTrips(t *testing.T) {
	S, F, R, T := Outcome{}, overloaded, rateLimited, Outcome{Class: Terminal, Status: 400}
	for _, tc := range []struct {
		name     string
		cfg      BreakerConfig
		outcomes []Outcome
		open     bool
	}{
		{"default: 5 in a row", BreakerConfig{}, []Outcome{F, F, F, F, F}, true},
		{"default: 4 in a row", BreakerConfig{}, []Outcome{F, F, F, F}, false},
		{"a success breaks the row", BreakerConfig{}, []Outcome{F, F, F, S, F, F}, false},
		{"retry-after and terminal neither count nor break it", BreakerConfig{}, []Outcome{F, F, R, T, F, R, F, F}, true},
		{"timeouts and 500s are failures", BreakerConfig{}, []Outcome{timeoutOut, serverError, F, timeoutOut, serverError}, true},
		{"failures configurable", BreakerConfig{Failures: Classes(RetryAfter)}, []Outcome{R, R, R, R, F, R}, true},
		{"failures configurable: capacity no longer one", BreakerConfig{Failures: Classes(RetryAfter)}, []Outcome{F, F, F, F, F, F}, false},
		{"ratio: 2 of 4 reaches 50%", BreakerConfig{FailureRatio: 0.5, MinRequests: 4}, []Outcome{S, F, S, F}, true},
		{"ratio: 1 of 4 does not", BreakerConfig{FailureRatio: 0.5, MinRequests: 4}, []Outcome{S, S, S, F}, false},
		{"ratio: too few requests", BreakerConfig{FailureRatio: 0.5, MinRequests: 4}, []Outcome{F, F, F}, false},
		{"ratio only: no consecutive rule", BreakerConfig{FailureRatio: 0.9, MinRequests: 10}, []Outcome{F, F, F, F, F, F, F}, false},
		{"ratio ignores the neither classes", BreakerConfig{FailureRatio: 0.5, MinRequests: 4}, []Outcome{S, R, R, R, F, S}, false},
		{"both rules: consecutive first", BreakerConfig{ConsecutiveFailures: 2, FailureRatio: 0.9, MinRequests: 100}, []Outcome{S, F, F}, true},
	} {
		b, err := NewBreaker(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range tc.outcomes {
			b.Observe(at(time.Duration(i)*ms), 1, o)
		}
		if got := b.State(at(time.Second)) == BreakerOpen; got != tc.open {
			t.Errorf("%s: open %v, want %v", tc.name, got, tc.open)
		}
	}
	for _, bad := range []BreakerConfig{{ConsecutiveFailures: -1}, {FailureRatio: 1.5}, {FailureRatio: -0.1}, {OpenFor: -1}, {Probes: -1}, {Failures: Classes(Success)}} {
		if _, err := NewBreaker(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// The ratio window forgets: failures older than the window do not count.
func TestBreakerRatioWindow(t *testing.T) {
	b, _ := NewBreaker(BreakerConfig{FailureRatio: 0.5, MinRequests: 4, Window: 4 * time.Second, Slots: 4})
	b.Observe(at(0), 1, overloaded)
	b.Observe(at(0), 1, overloaded)
	for i := range 3 {
		b.Observe(at(4*time.Second+time.Duration(i)*ms), 1, Outcome{})
	}
	b.Observe(at(4*time.Second+time.Second/2), 1, overloaded) // 1 of 4 in the window
	if s := b.State(at(5 * time.Second)); s != BreakerClosed {
		t.Fatalf("state %v, want closed: the early failures are out of the window", s)
	}
}

// A breaker worked by hand: 3 failures in a row, open 10 s growing to 40 s,
// 2 probes.
func TestBreakerByHand(t *testing.T) {
	b, _ := NewBreaker(BreakerConfig{ConsecutiveFailures: 3, OpenFor: 10 * time.Second, MaxOpenFor: 40 * time.Second, Probes: 2})
	s := time.Second
	admit := func(d time.Duration) AdmitKind { return b.Admit(at(d), Ask{}).Kind }
	probe := func(d time.Duration, out Outcome) {
		b.Settle(at(d), Settlement{Sent: true, Outcome: out})
	}
	for i := range 3 {
		if k := admit(time.Duration(i) * s); k != AdmitPass {
			t.Fatalf("closed: %v", k)
		}
		b.Observe(at(time.Duration(i)*s), 1, overloaded)
	}
	// Opened at 2 s until 12 s.
	steps := []struct {
		name  string
		do    func()
		at    time.Duration
		state BreakerState
		admit AdmitKind // asked after do, at at; 255: not asked
	}{
		{"open", nil, 11 * s, BreakerOpen, AdmitDeny},
		{"outcomes while open are ignored", func() { b.Observe(at(11*s), 1, Outcome{}) }, 11 * s, BreakerOpen, 255},
		{"half-open: probe 1", nil, 12 * s, BreakerHalfOpen, AdmitGrant},
		{"probe 2", nil, 12 * s, BreakerHalfOpen, AdmitGrant},
		{"no 3rd probe", nil, 12 * s, BreakerHalfOpen, AdmitDeny},
		{"probe 2 unused frees its place", func() { b.Settle(at(12*s), Settlement{}) }, 12 * s, BreakerHalfOpen, AdmitGrant},
		{"a stray outcome is not a probe's", func() { b.Observe(at(13*s), 1, Outcome{}) }, 13 * s, BreakerHalfOpen, 255},
		{"probe 1 succeeds", func() { probe(13*s, Outcome{}) }, 13 * s, BreakerHalfOpen, AdmitDeny},
		{"probe 2 fails: open 20 s", func() { probe(14*s, overloaded) }, 33*s + s - 1, BreakerOpen, AdmitDeny},
		{"half-open at 34 s", nil, 34 * s, BreakerHalfOpen, AdmitGrant},
		{"fails: open 40 s", func() { probe(35*s, timeoutOut) }, 74*s + s - 1, BreakerOpen, 255},
		{"half-open at 75 s", nil, 75 * s, BreakerHalfOpen, AdmitGrant},
		{"fails: open 40 s (the cap)", func() { probe(75*s, serverError) }, 114*s + s - 1, BreakerOpen, 255},
		{"half-open at 115 s, 2 probes", func() { admit(115 * s) }, 115 * s, BreakerHalfOpen, AdmitGrant},
		{"a 429 probe counts as a success", func() { probe(116*s, rateLimited) }, 116 * s, BreakerHalfOpen, 255},
		{"a success: closed", func() { probe(116*s, Outcome{}) }, 116 * s, BreakerClosed, AdmitPass},
		{"a stale probe is ignored", func() { probe(116*s, overloaded) }, 116 * s, BreakerClosed, 255},
		{"counts start afresh", func() {
			b.Observe(at(117*s), 1, overloaded)
			b.Observe(at(117*s), 1, overloaded)
		}, 117 * s, BreakerClosed, 255},
		{"3rd failure: open 10 s again", func() { b.Observe(at(118*s), 1, overloaded) }, 128*s - 1, BreakerOpen, AdmitDeny},
		{"and half-open after it", nil, 128 * s, BreakerHalfOpen, AdmitGrant},
	}
	for _, st := range steps {
		if st.do != nil {
			st.do()
		}
		if got := b.State(at(st.at)); got != st.state {
			t.Fatalf("%s: state %v at %v, want %v", st.name, got, st.at, st.state)
		}
		if st.admit != 255 {
			a := b.Admit(at(st.at), Ask{})
			if a.Kind != st.admit || a.Kind == AdmitDeny && (a.Reason != StopCircuitOpen || a.Cause != ErrCircuitOpen) {
				t.Fatalf("%s: admission %+v, want %v", st.name, a, st.admit)
			}
		}
	}
}

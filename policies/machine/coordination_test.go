package machine

import (
	"errors"
	"testing"
	"time"
)

var t0 = time.Unix(1000, 0)

func at(d time.Duration) time.Time { return t0.Add(d) }

func TestGate(t *testing.T) {
	var g Gate
	if got := g.Ready(at(0)); !got.Equal(at(0)) {
		t.Fatalf("zero gate: ready at %v, want now", got)
	}
	g.Push(at(time.Second), 2*time.Second) // not before 3s
	g.Push(at(0), time.Second)             // earlier: no effect
	if got := g.Ready(at(1500 * ms)); !got.Equal(at(3 * time.Second)) {
		t.Fatalf("ready at %v, want 3s", got.Sub(t0))
	}
	if got := g.Ready(at(4 * time.Second)); !got.Equal(at(4 * time.Second)) {
		t.Fatalf("after the gate: ready at %v, want now (4s)", got.Sub(t0))
	}
}

// Six starts per second from t = 0 must land exactly on k/6 s, so that the
// seventh is exactly at 1 s and not a nanosecond early (no drift).
func TestThrottleSpacesStartsWithoutDrift(t *testing.T) {
	th, err := NewThrottle(6, time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 13 {
		got, err := th.Reserve(at(0), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		want := at(time.Duration(int64(k) * int64(time.Second) / 6))
		if !got.Equal(want) {
			t.Fatalf("start %d at %v, want %v", k, got.Sub(t0), want.Sub(t0))
		}
	}
}

func TestThrottleRestartsAfterIdle(t *testing.T) {
	th, _ := NewThrottle(2, time.Second, 0)
	th.Reserve(at(0), time.Time{})
	if got, _ := th.Reserve(at(10*time.Second), time.Time{}); !got.Equal(at(10 * time.Second)) {
		t.Fatalf("after idle: start at %v, want 10s", got.Sub(t0))
	}
	if got, _ := th.Reserve(at(10*time.Second), time.Time{}); !got.Equal(at(10*time.Second + 500*ms)) {
		t.Fatalf("second after idle: %v, want 10.5s", got.Sub(t0))
	}
}

func TestThrottleTooLateBooksNothing(t *testing.T) {
	th, _ := NewThrottle(1, time.Second, 0)
	th.Reserve(at(0), time.Time{}) // slot 0s; next free 1s
	if _, err := th.Reserve(at(0), at(500*ms)); !errors.Is(err, ErrTooLate) {
		t.Fatalf("err = %v, want ErrTooLate", err)
	}
	// The refused request must not have taken the 1s slot.
	if got, _ := th.Reserve(at(0), time.Time{}); !got.Equal(at(time.Second)) {
		t.Fatalf("next start %v, want 1s", got.Sub(t0))
	}
}

func TestThrottleQueueBound(t *testing.T) {
	th, _ := NewThrottle(1, time.Second, 2)
	for i := range 3 { // starts at 0s (now), 1s and 2s: two wait, the limit
		if _, err := th.Reserve(at(0), time.Time{}); err != nil {
			t.Fatalf("reservation %d: %v", i, err)
		}
	}
	if _, err := th.Reserve(at(0), time.Time{}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("err = %v, want ErrQueueFull", err)
	}
}

func TestNewThrottleRejectsBadSettings(t *testing.T) {
	for _, c := range []struct {
		count int
		per   time.Duration
		queue int
	}{{0, time.Second, 0}, {1, 0, 0}, {1, time.Second, -1}} {
		if _, err := NewThrottle(c.count, c.per, c.queue); err == nil {
			t.Errorf("NewThrottle(%d, %v, %d) accepted", c.count, c.per, c.queue)
		}
	}
}

func TestLimiterReleaseWithoutAcquirePanics(t *testing.T) {
	lim, _ := NewLimiter(2, 0)
	if err := lim.Acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	lim.ReleaseSlot()
	defer func() {
		if r := recover(); r == nil {
			t.Errorf("a second Release did not panic")
		} else if lim.InFlight() != 0 {
			t.Errorf("%d slots taken after the panic", lim.InFlight())
		}
	}()
	lim.ReleaseSlot()
}

// Many slots of a long period must not overflow: slot k is k·per/count
// exactly, in 128-bit arithmetic.
func TestThrottleLongPeriodsDoNotOverflow(t *testing.T) {
	th, _ := NewThrottle(1<<31-1, 1000*time.Hour, 0)
	var last time.Time
	for k := range 5000 {
		got, err := th.Reserve(at(0), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if k > 0 && !got.After(last) {
			t.Fatalf("slot %d at %v is not after slot %d at %v", k, got.Sub(t0), k-1, last.Sub(t0))
		}
		last = got
	}
	// Slot 4999 is 4999·1000h/(2^31−1) ≈ 8.38 s after the first.
	periods := 4999.0 // a variable, so the product is not a (too large) integer constant
	want := time.Duration(periods * float64(1000*time.Hour) / (1<<31 - 1))
	if d := last.Sub(t0); d < want-time.Microsecond || d > want+time.Microsecond {
		t.Fatalf("slot 4999 at %v, want about %v", d, want)
	}
}

// One response pushes a gate by at most MaxPush (DefaultMaxGatePush when 0,
// unbounded when negative); NotBefore shows the gate and Reset opens it.
func TestGatePushIsBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tt := range []struct {
		maxPush, wait, want time.Duration
	}{
		{0, 99999 * time.Hour, DefaultMaxGatePush},
		{0, 2 * time.Second, 2 * time.Second},
		{10 * time.Second, time.Hour, 10 * time.Second},
		{-1, time.Hour, time.Hour},
	} {
		g := &Gate{MaxPush: tt.maxPush}
		g.Push(now, tt.wait)
		if got := g.NotBefore().Sub(now); got != tt.want {
			t.Errorf("MaxPush %v, push %v: gate closed for %v, want %v", tt.maxPush, tt.wait, got, tt.want)
		}
		g.Reset()
		if !g.NotBefore().IsZero() || g.Ready(now) != now {
			t.Errorf("MaxPush %v: Reset left the gate closed until %v", tt.maxPush, g.NotBefore())
		}
	}
}

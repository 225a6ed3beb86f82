package policies_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// A gate that opens after the budget stops Do at once, before the first
// attempt or before a retry.
func TestDoGateOpensAfterBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := &policies.Gate{}
		gate.Push(time.Now(), 10*time.Second)
		err := policies.Do(t.Context(), newScript(step{rt, nil}).op, policies.WithGate(gate), policies.WithBudget(5*time.Second))
		if pe := stopped(t, err, policies.StopDeadline, 0); pe.Elapsed != 0 {
			t.Errorf("stopped after %v, want at once", pe.Elapsed)
		}
		var closed *policies.GateClosedError
		if !errors.As(err, &closed) || !closed.Until.Equal(gate.NotBefore()) || !strings.Contains(err.Error(), "gate closed until") {
			t.Errorf("error %v does not say the gate is closed until %v", err, gate.NotBefore())
		}

		gate = &policies.Gate{}
		start := time.Now()
		time.AfterFunc(500*time.Millisecond, func() { gate.Push(time.Now(), 10*time.Second) }) // a 429 elsewhere
		s := newScript(step{rt, httpErr(500, nil)}, step{rt, nil})
		err = policies.Do(t.Context(), s.op, policies.WithGate(gate), policies.WithBudget(5*time.Second),
			policies.WithBackoff(policies.Constant{Wait: time.Second}))
		pe := stopped(t, err, policies.StopDeadline, 1)
		if want := rt + time.Second; pe.Elapsed != want || time.Since(start) != want {
			t.Errorf("stopped after %v, want when the retry was due (%v)", pe.Elapsed, want)
		}
	})
}

// A throttle slot after the budget stops Do at once with ErrTooLate, and
// books nothing.
func TestDoThrottleSlotAfterBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		thr, _ := policies.NewThrottle(1, 10*time.Second, 0)
		now := time.Now()
		if _, err := thr.Reserve(now, time.Time{}); err != nil { // the slot at 0 is taken
			t.Fatal(err)
		}
		err := policies.Do(t.Context(), newScript(step{rt, nil}).op, policies.WithThrottle(thr), policies.WithBudget(5*time.Second))
		pe := stopped(t, err, policies.StopDeadline, 0)
		if pe.Elapsed != 0 || !errors.Is(err, policies.ErrTooLate) {
			t.Errorf("Do = %v after %v, want ErrTooLate at once", err, pe.Elapsed)
		}
		if next, err := thr.Reserve(now, time.Time{}); err != nil || !next.Equal(now.Add(10*time.Second)) {
			t.Errorf("next slot %v, %v; want 10s (Do booked nothing)", next.Sub(now), err)
		}
	})
}

// A gate closed by a retry-after while an attempt waits for its throttle
// slot sends the attempt back to the gate.
func TestDoGateClosesDuringThrottleWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := &policies.Gate{}
		thr, _ := policies.NewThrottle(1, 2*time.Second, 0)
		if _, err := thr.Reserve(time.Now(), time.Time{}); err != nil { // Do gets the slot at 2 s
			t.Fatal(err)
		}
		time.AfterFunc(time.Second, func() { gate.Push(time.Now(), 5*time.Second) }) // open at 6 s
		s := newScript(step{rt, nil})
		if err := policies.Do(t.Context(), s.op, policies.WithGate(gate), policies.WithThrottle(thr)); err != nil {
			t.Fatal(err)
		}
		if len(s.starts) != 1 || s.starts[0] != 6*time.Second {
			t.Errorf("attempt started at %v, want 6s (when the gate opened)", s.starts)
		}
	})
}

// The caller's cancellation ends a gate or throttle wait at once.
func TestDoCancelDuringGateAndThrottleWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := &policies.Gate{}
		gate.Push(time.Now(), 10*time.Second)
		thr, _ := policies.NewThrottle(1, 10*time.Second, 0)
		if _, err := thr.Reserve(time.Now(), time.Time{}); err != nil {
			t.Fatal(err)
		}
		for name, opt := range map[string]policies.Option{"gate": policies.WithGate(gate), "throttle": policies.WithThrottle(thr)} {
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(time.Second, cancel)
			start := time.Now()
			err := policies.Do(ctx, newScript(step{rt, nil}).op, opt)
			pe := stopped(t, err, policies.StopCancelled, 0)
			if time.Since(start) != time.Second || pe.Elapsed != time.Second || !errors.Is(err, context.Canceled) {
				t.Errorf("%s: Do = %v after %v, want cancelled at 1s", name, err, time.Since(start))
			}
		}
	})
}

// A request body that cannot be replayed for a retry ends the loop with the
// GetBody error (terminal); the retried response was already closed.
func TestTransportGetBodyFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &scriptedTransport{statuses: []int{500, 200}}
		req := post(t, "payload", true)
		errReplay := errors.New("body gone")
		req.GetBody = func() (io.ReadCloser, error) { return nil, errReplay }
		resp, err := newTransport(t, base).RoundTrip(req)
		if resp != nil {
			t.Fatalf("RoundTrip returned a response (%d) with a failed replay", resp.StatusCode)
		}
		stopped(t, err, policies.StopTerminal, 2)
		if !errors.Is(err, errReplay) {
			t.Errorf("error %v does not wrap the GetBody error", err)
		}
		if len(base.sent) != 1 || !base.bodies[0].closed.Load() {
			t.Errorf("%d requests sent; retried body closed %v", len(base.sent), base.bodies[0].closed.Load())
		}
	})
}

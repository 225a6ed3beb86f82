package policies_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

func TestWatchdogFires(t *testing.T) {
	const s = time.Second
	// A stall after 3 content events 1 s apart, the first 1 s after the
	// send; cut at 60 s.
	stall := machine.StreamTimeline{Faulted: true, Content: 3, First: s, Gap: s, End: 60 * s}
	for _, tc := range []struct {
		name    string
		w       machine.Watchdog
		t       machine.StreamTimeline
		at      time.Duration
		content int
		ok      bool
	}{
		{"off", machine.Watchdog{}, stall, 0, 0, false},
		{"healthy", machine.Watchdog{Idle: s / 10}, machine.StreamTimeline{}, 0, 0, false},
		{"stall after content", machine.Watchdog{Idle: 5 * s}, stall, 8 * s, 3, true},
		{"idle shorter than the gap", machine.Watchdog{Idle: s / 2, FirstByte: 2 * s}, stall, 1500 * time.Millisecond, 1, true},
		{"first byte too late", machine.Watchdog{Idle: 5 * s, FirstByte: s / 2}, stall, s / 2, 0, true},
		{"first byte only", machine.Watchdog{FirstByte: 2 * s}, stall, 0, 0, false},
		{"no content at all", machine.Watchdog{Idle: 5 * s}, machine.StreamTimeline{Faulted: true, End: 60 * s}, 5 * s, 0, true},
		{"cut before the watchdog", machine.Watchdog{Idle: 5 * s}, machine.StreamTimeline{Faulted: true, Content: 2, First: s, Gap: s, End: 3 * s}, 0, 0, false},
	} {
		at, n, ok := tc.w.Fires(tc.t)
		if at != tc.at || n != tc.content || ok != tc.ok {
			t.Errorf("%s: Fires = %v, %d, %v; want %v, %d, %v", tc.name, at, n, ok, tc.at, tc.content, tc.ok)
		}
	}
}

// StreamError classifies as a mid-stream failure only once content came.
func TestStreamErrorOutcome(t *testing.T) {
	now := time.Unix(0, 0)
	if out := policies.ClassifyError(&policies.StreamError{Content: 2, Err: context.Canceled}, now); out != (policies.Outcome{Class: policies.Transient, Status: 200}) || !out.MidStream() {
		t.Errorf("after content: %+v", out)
	}
	if out := policies.ClassifyError(&policies.StreamError{Stalled: true}, now); out != (policies.Outcome{Class: policies.Transient}) || out.MidStream() {
		t.Errorf("before content: %+v", out)
	}
}

// Do's watchdog ends a stream that stops sending content, though pings
// (which the operation does not report) keep coming, and retries.
func TestDoWatchdogEndsAStalledStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var ends []time.Duration
		op := func(ctx context.Context, a policies.Attempt) error {
			defer func() { ends = append(ends, time.Since(start)) }()
			for range 3 { // three content events, 1 s apart
				select {
				case <-time.After(time.Second):
					policies.ContentEvent(ctx)
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if a.Number > 1 {
				return nil
			}
			<-ctx.Done() // then only pings: nothing the watchdog counts
			if !errors.Is(context.Cause(ctx), policies.ErrStalled) {
				t.Errorf("cause %v, want ErrStalled", context.Cause(ctx))
			}
			return ctx.Err()
		}
		var retried []policies.RetryEvent
		err := policies.Do(t.Context(), op,
			policies.WithPolicy(policies.Policy{Backoff: policies.Constant{Wait: time.Second}, MaxAttempts: 3, StreamIdleTimeout: 5 * time.Second}),
			policies.WithHooks(policies.Hooks{OnRetryScheduled: func(ev policies.RetryEvent) { retried = append(retried, ev) }}))
		if err != nil {
			t.Fatal(err)
		}
		if len(ends) != 2 || ends[0] != 8*time.Second || ends[1] != 12*time.Second {
			t.Errorf("attempts ended at %v; want 8s (3 s of content + 5 s idle) and 12s", ends)
		}
		var se *policies.StreamError
		if len(retried) != 1 || !errors.As(retried[0].Err, &se) || !se.Stalled || se.Content != 3 || retried[0].Outcome.Status != 200 {
			t.Errorf("retries %+v; want one after a stall with 3 content events, status 200", retried)
		}
	})
}

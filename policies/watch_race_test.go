package policies

import (
	"context"
	"testing"

	"github.com/retrysim/retrysim/policies/machine"
)

// A content event that takes the lock while the idle timer's fire is
// already on its way wins: the stale fire does nothing (the generation it
// was armed with is gone), so the attempt is not ended as stalled though
// content just arrived.
func TestWatchdogStaleFireAfterAnEvent(t *testing.T) {
	ctx, stop := watched(context.Background(), machine.Watchdog{Idle: 1 << 62})
	wt := ctx.Value(progressKey{}).(*watch)
	wt.mu.Lock()
	stale := wt.gen // the timer due now was armed with this generation
	wt.mu.Unlock()
	wt.event()     // content arrives, taking the lock first
	wt.fire(stale) // then the expired timer's fire runs
	if ctx.Err() != nil {
		t.Errorf("the attempt was cancelled (%v) right after content arrived", context.Cause(ctx))
	}
	if n, fired := stop(); n != 1 || fired {
		t.Errorf("stop: %d events, fired %v; want 1, false", n, fired)
	}
}

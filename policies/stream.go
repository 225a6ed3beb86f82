package policies

import (
	"context"
	"sync"
	"time"

	"github.com/retrysim/retrysim/policies/machine"
)

// progressKey marks an attempt's context with its watchdog.
type progressKey struct{}

// ContentEvent tells the watchdog of the attempt whose context is ctx that
// a content event (a text delta, not a ping) arrived; it does nothing for
// a context without a watchdog. Safe for concurrent use.
func ContentEvent(ctx context.Context) {
	if w, ok := ctx.Value(progressKey{}).(*watch); ok {
		w.event()
	}
}

// watch is one attempt's watchdog in Do. Its timer runs on the real clock,
// as the attempt timeout's context does (testing/synctest fakes it).
type watch struct {
	idle    time.Duration
	cancel  context.CancelCauseFunc
	mu      sync.Mutex
	timer   *time.Timer // nil when no timer runs (FirstByte and Idle 0 after the first event)
	gen     uint64      // bumped by each content event: a fire armed before it is stale
	content int
	fired   bool
	stopped bool
}

// watched returns ctx with a watchdog that cancels it with ErrStalled, and
// a stop function that ends the watch and returns the content events seen
// and whether the watchdog fired.
func watched(ctx context.Context, w machine.Watchdog) (context.Context, func() (int, bool)) {
	wctx, cancel := context.WithCancelCause(ctx)
	wt := &watch{idle: w.Idle, cancel: cancel}
	first := w.FirstByte
	if first <= 0 {
		first = w.Idle
	}
	wctx = context.WithValue(wctx, progressKey{}, wt)
	wt.mu.Lock()
	wt.arm(first)
	wt.mu.Unlock()
	return wctx, func() (int, bool) {
		wt.mu.Lock()
		wt.stopped = true
		if wt.timer != nil {
			wt.timer.Stop()
		}
		n, f := wt.content, wt.fired
		wt.mu.Unlock()
		cancel(nil)
		return n, f
	}
}

func (w *watch) event() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fired || w.stopped {
		return
	}
	w.content++
	w.gen++ // a fire already on its way (its timer expired) must not count
	switch {
	case w.idle > 0:
		w.arm(w.idle)
	case w.timer != nil:
		w.timer.Stop()
		w.timer = nil
	}
}

// arm starts a timer that fires after d, for the current generation;
// w.mu is held.
func (w *watch) arm(d time.Duration) {
	if w.timer != nil {
		w.timer.Stop()
	}
	g := w.gen
	w.timer = time.AfterFunc(d, func() { w.fire(g) })
}

// fire ends the attempt as stalled, unless a content event came since the
// timer of generation gen was armed.
func (w *watch) fire(gen uint64) {
	w.mu.Lock()
	if w.stopped || w.fired || gen != w.gen {
		w.mu.Unlock()
		return
	}
	w.fired = true
	w.mu.Unlock()
	w.cancel(ErrStalled)
}

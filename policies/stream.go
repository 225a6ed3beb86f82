package policies

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Stream faults and the stream watchdog. A streamed answer sends content
// events (text deltas) and, beside them, events that carry no content
// (message_start, ping). A faulted stream stalls or is cut: it sends no
// bytes at all, or content for a while and then nothing, or only pings,
// until its connection is cut without message_stop. A byte-level read
// timeout (the SDKs') is reset by every ping, so a ping-only stream keeps
// it alive; the watchdog counts content events only.
//
// The watchdog (Policy.StreamIdleTimeout, Policy.StreamFirstByteTimeout)
// ends an attempt whose stream goes StreamIdleTimeout without a content
// event, or StreamFirstByteTimeout (StreamIdleTimeout if 0) from the send
// without its first; a content event that arrives exactly when the timer
// would fire resets it. The attempt then fails with a *StreamError: class
// Transient, status 200 if content had arrived (a mid-stream failure, so
// NoMidStreamRetries ends the operation there: retry only before the first
// content delta, what an interactive UI wants) or status 0 before (no
// answer yet, retried whatever NoMidStreamRetries says); without
// NoMidStreamRetries the whole request starts again (what an agent loop
// wants), and the content already received is wasted.

// StreamTimeline is how a faulted stream unfolds from the attempt's send,
// as the simulator's server models and serve's faults describe it.
type StreamTimeline struct {
	// Faulted says the stream stalls or is cut; Fires ignores a timeline
	// that is not. (The simulator gives a healthy stream as Faulted, with
	// End when its message_stop comes, to apply the watchdog to its gaps.)
	Faulted bool
	// Content is the number of content events before the stall or the
	// cut; the first comes First after the send, the next ones Gap apart.
	Content    int
	First, Gap time.Duration
	// End is when, after the send, the stream is cut (without message_stop).
	End time.Duration
	// Silent says not even the headers come before the cut; Pings, if > 0,
	// that a ping event comes every Pings once the content stops (neither
	// counts for the watchdog; they say how serve plays the fault).
	Silent bool
	Pings  time.Duration
}

// Last is when the last content event comes (0 if none).
func (t StreamTimeline) Last() time.Duration {
	if t.Content == 0 {
		return 0
	}
	return t.First + time.Duration(t.Content-1)*t.Gap
}

// Watchdog is the stream watchdog's settings (see Policy).
type Watchdog struct {
	Idle, FirstByte time.Duration
}

// Watchdog returns the policy's stream watchdog.
func (p Policy) Watchdog() Watchdog {
	return Watchdog{Idle: p.StreamIdleTimeout, FirstByte: p.StreamFirstByteTimeout}
}

// On reports whether the watchdog watches at all.
func (w Watchdog) On() bool { return w.Idle > 0 || w.FirstByte > 0 }

// Fires returns when, after the send, the watchdog ends an attempt whose
// stream unfolds as t, and how many content events had arrived; ok is
// false if it does not fire before t.End.
func (w Watchdog) Fires(t StreamTimeline) (at time.Duration, content int, ok bool) {
	if !t.Faulted || !w.On() {
		return 0, 0, false
	}
	first := w.FirstByte
	if first <= 0 {
		first = w.Idle
	}
	switch {
	case t.Content == 0 || first < t.First:
		if first > 0 && first < t.End && (t.Content == 0 || first < t.First) {
			return first, 0, true
		}
		if t.Content == 0 {
			return 0, 0, false
		}
	}
	if w.Idle <= 0 {
		return 0, 0, false
	}
	if t.Content > 1 && t.Gap > w.Idle {
		return t.First + w.Idle, 1, true
	}
	if last := t.Last(); last+w.Idle < t.End {
		return last + w.Idle, t.Content, true
	}
	return 0, 0, false
}

// StreamError is a streamed answer that ended without message_stop: cut
// by the server, or ended by the watchdog (Stalled). Content is the number
// of content events received before. ClassifyError makes it Transient,
// with status 200 if content had arrived and 0 before; an Operation that
// reads a stream should return one (wrapping what it read) when the
// stream ends early.
type StreamError struct {
	Content int
	Stalled bool
	Err     error
}

func (e *StreamError) Error() string {
	what := "the stream was cut"
	if e.Stalled {
		what = "the stream stalled (no content event within the watchdog's timeout)"
	}
	msg := fmt.Sprintf("%s after %d content events", what, e.Content)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *StreamError) Unwrap() error { return e.Err }

// Outcome is how the stream's end classifies.
func (e *StreamError) Outcome() Outcome {
	if e.Content > 0 {
		return Outcome{Class: Transient, Status: 200}
	}
	return Outcome{Class: Transient}
}

// ErrStalled is the cause of an attempt's context when the watchdog ends
// it.
var ErrStalled = errors.New("stream watchdog: no content event in time")

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
func watched(ctx context.Context, w Watchdog) (context.Context, func() (int, bool)) {
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

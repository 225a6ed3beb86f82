package machine

import (
	"fmt"
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

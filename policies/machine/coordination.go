package machine

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"time"
)

// Gate holds every worker on one API key until a not-before time. A
// retry-after from any worker pushes it; capacity errors do not (overload is
// global, not the key's quota). One response pushes it by at most MaxPush,
// so a bogus retry-after cannot lock the key for a day. The zero Gate is
// open and bounds pushes by DefaultMaxGatePush. Safe for concurrent use.
type Gate struct {
	// MaxPush bounds how far one response pushes the gate beyond its now;
	// 0 means DefaultMaxGatePush, a negative value no bound. The operation
	// that received the retry-after still waits all of it itself.
	MaxPush time.Duration

	mu        sync.Mutex
	notBefore time.Time
}

// DefaultMaxGatePush is the bound on one push of a Gate whose MaxPush is 0:
// rate limits are counted per minute, so no honest retry-after asks more.
const DefaultMaxGatePush = time.Minute

// Push moves the not-before time to max(current, now+min(wait, MaxPush)).
func (g *Gate) Push(now time.Time, wait time.Duration) {
	switch {
	case g.MaxPush == 0:
		wait = min(wait, DefaultMaxGatePush)
	case g.MaxPush > 0:
		wait = min(wait, g.MaxPush)
	}
	t := now.Add(wait)
	g.mu.Lock()
	if t.After(g.notBefore) {
		g.notBefore = t
	}
	g.mu.Unlock()
}

// Ready returns the earliest time at or after now at which a request may
// start: max(now, not-before).
func (g *Gate) Ready(now time.Time) time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.notBefore.After(now) {
		return g.notBefore
	}
	return now
}

// NotBefore returns the time before which the gate holds requests; the
// zero time if it was never pushed (or was reset).
func (g *Gate) NotBefore() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.notBefore
}

// Reset opens the gate now (e.g. by an operator who knows the key is fine).
// Workers already waiting for it wait out their sleep; later ones do not.
func (g *Gate) Reset() {
	g.mu.Lock()
	g.notBefore = time.Time{}
	g.mu.Unlock()
}

// GateClosedError is the cause of a StopDeadline when the gate opens only
// after the operation may start.
type GateClosedError struct {
	Until time.Time
}

func (e *GateClosedError) Error() string {
	return "gate closed until " + e.Until.Format(time.RFC3339Nano) + " (a retry-after on this key)"
}

// Admit holds the attempt until the gate opens.
func (g *Gate) Admit(now time.Time, a Ask) Admission {
	if open := g.Ready(now); open.After(now) {
		h := Admission{Kind: AdmitHold, At: open}
		if !startsBy(open, a.Latest) {
			// The hold will stop the operation: say why. (Only then, so
			// that a hold allocates nothing.)
			h.Cause = &GateClosedError{Until: open}
		}
		return h
	}
	return Admission{Kind: AdmitPass}
}

// AdmitCopy lets a hedge go only while the gate is open (CopyAdmitter).
func (g *Gate) AdmitCopy(now time.Time, _ Ask) bool { return !g.Ready(now).After(now) }

// Observe pushes the gate by a RetryAfter outcome's server wait.
func (g *Gate) Observe(now time.Time, _ int, out Outcome) {
	if out.Class == RetryAfter && out.ServerWait > 0 {
		g.Push(now, out.ServerWait)
	}
}

// Release does nothing: the gate holds nothing for an attempt.
func (g *Gate) Release(time.Time, Waiter, bool) {}

// ErrQueueFull is returned by Throttle.Reserve when its queue is full.
var ErrQueueFull = errors.New("throttle queue full")

// ErrTooLate is returned by Throttle.Reserve when the first free start is
// after the caller's latest acceptable start.
var ErrTooLate = errors.New("no throttle slot before the deadline")

// Throttle spaces request starts at Count per Per, first attempts and retries
// alike, in the order the requests ask (FIFO). Slot k after an idle period
// starts at anchor + k·Per/Count, computed in integer nanoseconds from the
// anchor so spacing never drifts. Safe for concurrent use.
type Throttle struct {
	count    int64
	per      time.Duration
	maxQueue int

	mu     sync.Mutex
	anchor time.Time // start of the current busy period
	next   int64     // index of the next free slot after anchor
	busy   bool
}

// GateConfig is the Spec of a Gate with the default bound on pushes.
type GateConfig struct{}

// Validate accepts every GateConfig.
func (GateConfig) Validate() error { return nil }

// NewCoordinator returns an open Gate.
func (GateConfig) NewCoordinator() (Coordinator, error) { return &Gate{}, nil }

// Rescale returns the GateConfig: its bound on pushes is not configured.
func (c GateConfig) Rescale(func(time.Duration) time.Duration) Spec { return c }

// ThrottleConfig is the Spec of a Throttle: Count starts per Per, at most
// MaxQueue waiting (0 means unbounded).
type ThrottleConfig struct {
	Count    int
	Per      time.Duration
	MaxQueue int
}

// Validate reports a count or period that is not positive, or a negative
// queue bound.
func (c ThrottleConfig) Validate() error {
	if c.Count <= 0 || c.Per <= 0 || c.MaxQueue < 0 {
		return errors.New("throttle needs count > 0, per > 0, max queue >= 0")
	}
	return nil
}

// NewCoordinator returns a fresh Throttle.
func (c ThrottleConfig) NewCoordinator() (Coordinator, error) {
	return NewThrottle(c.Count, c.Per, c.MaxQueue)
}

// Rescale returns the ThrottleConfig with its period passed through f.
func (c ThrottleConfig) Rescale(f func(time.Duration) time.Duration) Spec {
	c.Per = f(c.Per)
	return c
}

// NewThrottle returns a throttle admitting count starts per period. maxQueue
// bounds how many requests may be waiting for their start, a new one
// included; 0 means no bound.
func NewThrottle(count int, per time.Duration, maxQueue int) (*Throttle, error) {
	if count <= 0 || per <= 0 || maxQueue < 0 {
		return nil, fmt.Errorf("throttle needs count > 0, per > 0 and max queue >= 0 (got %d per %v, queue %d)", count, per, maxQueue)
	}
	return &Throttle{count: int64(count), per: per, maxQueue: maxQueue}, nil
}

// slot returns the start of slot k: anchor + k·per/count, in 128-bit
// integer arithmetic so that long periods and many slots cannot overflow;
// an offset past the largest Duration saturates.
func (t *Throttle) slot(k int64) time.Time {
	hi, lo := bits.Mul64(uint64(k), uint64(t.per))
	if hi >= uint64(t.count) {
		return t.anchor.Add(math.MaxInt64)
	}
	q, _ := bits.Div64(hi, lo, uint64(t.count))
	if q > math.MaxInt64 {
		return t.anchor.Add(math.MaxInt64)
	}
	return t.anchor.Add(time.Duration(q))
}

// Reserve books the first free start at or after now. It fails, booking
// nothing, with ErrTooLate when that start is after latest (a zero latest
// means no limit) and with ErrQueueFull when maxQueue starts already wait.
func (t *Throttle) Reserve(now, latest time.Time) (time.Time, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.busy || t.slot(t.next).Before(now) {
		// Idle: the schedule restarts at now.
		t.anchor, t.next, t.busy = now, 0, true
	}
	start := t.slot(t.next)
	if t.maxQueue > 0 {
		// Requests that would be waiting for a start, this one included.
		// Float to avoid overflow; multiplication and division only, so every
		// platform rounds the same way.
		waiting := float64(start.Sub(now)) * float64(t.count) / float64(t.per)
		if waiting > float64(t.maxQueue) {
			return time.Time{}, ErrQueueFull
		}
	}
	if !startsBy(start, latest) {
		return time.Time{}, ErrTooLate
	}
	t.next++
	return start, nil
}

// Admit books the attempt's start (AdmitGrant at the slot). A full queue
// stops the operation with StopQueueFull, a slot after Ask.Latest with
// StopDeadline.
func (t *Throttle) Admit(now time.Time, a Ask) Admission {
	slot, err := t.Reserve(now, a.Latest)
	switch {
	case errors.Is(err, ErrQueueFull):
		return Admission{Kind: AdmitDeny, Reason: StopQueueFull, Cause: err}
	case err != nil:
		return Admission{Kind: AdmitDeny, Reason: StopDeadline, Cause: err}
	}
	return Admission{Kind: AdmitGrant, At: slot}
}

// AdmitCopy books a start for a hedge only if the first free start is now
// (CopyAdmitter): a hedge is a request start like any other, but it does
// not wait for a later slot.
func (t *Throttle) AdmitCopy(now time.Time, _ Ask) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.busy || t.slot(t.next).Before(now) {
		t.anchor, t.next, t.busy = now, 0, true
	}
	if t.slot(t.next).After(now) {
		return false
	}
	t.next++
	return true
}

// Observe does nothing: a throttle spaces starts whatever they return.
func (t *Throttle) Observe(time.Time, int, Outcome) {}

// Release does nothing: a booked start that goes unused is not given back
// (the schedule moves on, as a slot missed in real time would).
func (t *Throttle) Release(time.Time, Waiter, bool) {}

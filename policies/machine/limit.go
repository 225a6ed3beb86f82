package machine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ErrLimitQueueFull is returned by Limiter.Acquire (and given as the cause of
// StopQueueFull) when every slot is taken and the wait queue already holds
// its maximum.
var ErrLimitQueueFull = errors.New("in-flight limit: wait queue full")

// Limiter bounds the attempts in flight at once across every operation that
// shares it, with a bounded FIFO queue of waiters. A freed slot passes
// straight to the first waiter that can still use it, so a newcomer cannot
// overtake the queue. As a Coordinator it blocks (AdmitBlock) and wakes
// waiters through their Waiter; Acquire and Release serve callers outside
// Do. Safe for concurrent use.
type Limiter struct {
	max      int
	maxQueue int

	mu       sync.Mutex
	inFlight int
	queue    []limitWaiter // FIFO from head
	head     int
	// unslotted holds the waiters woken without a slot (their latest start
	// passed) until they are given back: a Release for one of them frees
	// nothing, however late the operation learnt of its wake.
	unslotted map[Waiter]struct{}
}

type limitWaiter struct {
	w      Waiter
	latest time.Time // zero: no bound
}

// LimitConfig is the Spec of a Limiter: MaxInFlight attempts at once
// (> 0), at most MaxQueue waiting (0 means unbounded).
type LimitConfig struct {
	MaxInFlight int
	MaxQueue    int
}

// Validate reports a bound on attempts that is not positive, or a negative
// queue bound.
func (c LimitConfig) Validate() error {
	if c.MaxInFlight <= 0 || c.MaxQueue < 0 {
		return errors.New("in-flight limit needs max in flight > 0, max queue >= 0")
	}
	return nil
}

// NewCoordinator returns a fresh Limiter.
func (c LimitConfig) NewCoordinator() (Coordinator, error) {
	return NewLimiter(c.MaxInFlight, c.MaxQueue)
}

// Rescale returns the LimitConfig, which has no durations.
func (c LimitConfig) Rescale(func(time.Duration) time.Duration) Spec { return c }

// Queues reports that a Limiter queues operations.
func (LimitConfig) Queues() bool { return true }

// NewLimiter returns a limiter allowing maxInFlight attempts at once (> 0).
// maxQueue bounds how many callers may wait for a slot; 0 means no bound.
func NewLimiter(maxInFlight, maxQueue int) (*Limiter, error) {
	if maxInFlight <= 0 || maxQueue < 0 {
		return nil, fmt.Errorf("limiter needs max in flight > 0 and max queue >= 0 (got %d, queue %d)", maxInFlight, maxQueue)
	}
	return &Limiter{max: maxInFlight, maxQueue: maxQueue}, nil
}

// Admit takes a free slot (AdmitGrant), queues the operation (AdmitBlock),
// or stops it with StopQueueFull when the queue is full. Waiters whose
// latest start has passed are woken without a slot and do not count.
func (l *Limiter) Admit(now time.Time, a Ask) Admission {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.unslotted) > 0 {
		// A driver that asks again without giving the waiter back (Op always
		// gives it back first) has seen its wake without a slot.
		delete(l.unslotted, a.Waiter)
	}
	if l.inFlight < l.max && l.waiting() == 0 {
		l.inFlight++
		return Admission{Kind: AdmitGrant, At: now}
	}
	if l.maxQueue > 0 && l.waiting() >= l.maxQueue {
		l.expire(now)
		if l.waiting() >= l.maxQueue {
			return Admission{Kind: AdmitDeny, Reason: StopQueueFull, Cause: ErrLimitQueueFull}
		}
	}
	l.queue = append(l.queue, limitWaiter{w: a.Waiter, latest: a.Latest})
	return Admission{Kind: AdmitBlock}
}

// TracksUnslotted marks the Limiter as an UnslottedTracker.
func (l *Limiter) TracksUnslotted() {}

// Observe does nothing: the slot is given back by Release.
func (l *Limiter) Observe(time.Time, int, Outcome) {}

// Release takes w out of the queue if it is still waiting, and forgets it
// if it was woken without a slot (it holds nothing); otherwise it frees w's
// slot, handing it to the first waiter that can still use it. Which of the
// three applies is decided here, under the limiter's lock, so it does not
// depend on when the operation saw its wake. It panics if no slot is taken:
// a Release without its grant would let more attempts run than the limit.
func (l *Limiter) Release(now time.Time, w Waiter, _ bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w != nil {
		for i := l.head; i < len(l.queue); i++ {
			if l.queue[i].w == w {
				l.queue = append(l.queue[:i], l.queue[i+1:]...)
				l.compact()
				return
			}
		}
		if _, ok := l.unslotted[w]; ok {
			delete(l.unslotted, w)
			return
		}
	}
	if l.inFlight == 0 {
		panic("policies: Limiter.Release without a matching Acquire")
	}
	for l.waiting() > 0 {
		next := l.queue[l.head]
		l.queue[l.head] = limitWaiter{}
		l.head++
		l.compact()
		if !startsBy(now, next.latest) {
			l.wakeUnslotted(now, next.w) // too late to use a slot
			continue
		}
		next.w.Wake(now, true) // the slot passes to it
		return
	}
	l.inFlight--
}

func (l *Limiter) waiting() int { return len(l.queue) - l.head }

// compact drops the consumed head of the queue once it is half the slice.
func (l *Limiter) compact() {
	if l.head > 0 && l.head*2 >= len(l.queue) {
		n := copy(l.queue, l.queue[l.head:])
		clear(l.queue[n:])
		l.queue, l.head = l.queue[:n], 0
	}
}

// expire wakes, without a slot, every waiter whose latest start is before
// now, and takes it out of the queue.
func (l *Limiter) expire(now time.Time) {
	kept := l.queue[:l.head]
	for _, q := range l.queue[l.head:] {
		if !startsBy(now, q.latest) {
			l.wakeUnslotted(now, q.w)
			continue
		}
		kept = append(kept, q)
	}
	clear(l.queue[len(kept):])
	l.queue = kept
	l.compact()
}

// wakeUnslotted wakes w without a slot and remembers that it holds none
// until it is given back (Release) or asks again (Admit).
func (l *Limiter) wakeUnslotted(now time.Time, w Waiter) {
	if l.unslotted == nil {
		l.unslotted = make(map[Waiter]struct{})
	}
	l.unslotted[w] = struct{}{}
	w.Wake(now, false)
}

// Acquire takes a slot for a caller outside Do, waiting until one is free
// or ctx is done. It fails at once with ErrLimitQueueFull when the queue is
// full, and with ctx.Err() when ctx ends first. Every successful Acquire
// must be paired with one Release.
func (l *Limiter) Acquire(ctx context.Context) error {
	w := NewChanWaiter()
	switch a := l.Admit(time.Time{}, Ask{Waiter: w}); a.Kind {
	case AdmitGrant:
		return nil
	case AdmitDeny:
		return a.Cause
	}
	select {
	case <-w.ch:
		return nil // a waiter without a latest start is always granted
	case <-ctx.Done():
		// Leaves the queue, or gives back the slot if it was granted meanwhile.
		l.Release(time.Time{}, w, false)
		return ctx.Err()
	}
}

// ReleaseSlot frees a slot taken by Acquire. It panics if no slot is taken.
func (l *Limiter) ReleaseSlot() { l.Release(time.Time{}, nil, true) }

// InFlight returns the number of slots taken now.
func (l *Limiter) InFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inFlight
}

// ChanWaiter is the Waiter of a driver that runs an operation in a
// goroutine (Do): a channel with room for the one wake an operation can
// receive per wait.
type ChanWaiter struct{ ch chan bool }

// NewChanWaiter returns a ChanWaiter with an empty channel.
func NewChanWaiter() *ChanWaiter { return &ChanWaiter{ch: make(chan bool, 1)} }

// Wake sends the wake; granted says whether it brings what was queued for.
func (w *ChanWaiter) Wake(_ time.Time, granted bool) { w.ch <- granted }

// Woken is the channel a wake arrives on.
func (w *ChanWaiter) Woken() <-chan bool { return w.ch }

// Drain takes a wake that arrived after the goroutine stopped waiting, and
// reports whether it granted a slot.
func (w *ChanWaiter) Drain() bool {
	select {
	case g := <-w.ch:
		return g
	default:
		return false
	}
}

// ModelFallback switches an operation to a fallback model after repeated
// capacity failures: once an operation has seen After capacity failures
// (529, 503, an overloaded_error mid-stream), its remaining attempts use
// Fallback. Rate limits (429) never count: another model does not lift a
// quota. With Sticky set, the switch also holds for every later operation
// that shares this value. Safe for concurrent use; share it by pointer.
type ModelFallback struct {
	// Primary is the model an operation starts with.
	Primary string
	// Fallback is the model used after the switch.
	Fallback string
	// After is the number of capacity failures within one operation that
	// triggers the switch; 0 means 3.
	After int
	// Sticky keeps later operations on Fallback once any operation switched.
	Sticky bool
	// Consecutive counts only capacity failures in a row: any other failure
	// (a rate limit, a transient error) starts the count again. Without it
	// the count runs over the whole operation.
	Consecutive bool
	// Restart starts the operation's retries again on Fallback, as Claude
	// Code does: the first attempt on it is sent at once, and it has
	// Policy.MaxAttempts attempts of its own, its backoff starting again
	// from the first retry's. The switch happens even when the primary's
	// attempts are spent. Without it the switch keeps counting: the
	// operation's attempts and backoff go on across both models.
	Restart bool

	switched atomic.Bool
}

// DefaultFallbackAfter is the number of capacity failures that switches
// models when ModelFallback.After is 0.
const DefaultFallbackAfter = 3

func (f *ModelFallback) after() int {
	if f.After <= 0 {
		return DefaultFallbackAfter
	}
	return f.After
}

// StartModel returns the model a new operation starts with: Primary, or
// Fallback if the switch is sticky and has happened.
func (f *ModelFallback) StartModel() string {
	if f.Sticky && f.switched.Load() {
		return f.Fallback
	}
	return f.Primary
}

// ShouldSwitch reports whether an operation on model current that has seen
// capacityFailures capacity failures should move to Fallback now. It records
// the switch for sticky use when it says yes.
func (f *ModelFallback) ShouldSwitch(current string, capacityFailures int) bool {
	if current == f.Fallback || capacityFailures < f.after() {
		return false
	}
	f.switched.Store(true)
	return true
}

// pending returns how many waiters the limiter keeps track of: queued, or
// woken without a slot and not yet given back. For tests.
func (l *Limiter) pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting() + len(l.unslotted)
}

package policies

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrLimitQueueFull is returned by Limiter.Acquire when every slot is taken
// and the wait queue already holds its maximum.
var ErrLimitQueueFull = errors.New("in-flight limit: wait queue full")

// Limiter bounds the attempts in flight at once across every goroutine that
// shares it, with a bounded queue of waiters. Waiters are served roughly in
// arrival order. Safe for concurrent use.
type Limiter struct {
	slots    chan struct{}
	maxQueue int64
	waiting  atomic.Int64
}

// NewLimiter returns a limiter allowing maxInFlight attempts at once (> 0).
// maxQueue bounds how many callers may wait for a slot; 0 means no bound.
func NewLimiter(maxInFlight, maxQueue int) (*Limiter, error) {
	if maxInFlight <= 0 || maxQueue < 0 {
		return nil, fmt.Errorf("limiter needs max in flight > 0 and max queue >= 0 (got %d, queue %d)", maxInFlight, maxQueue)
	}
	return &Limiter{slots: make(chan struct{}, maxInFlight), maxQueue: int64(maxQueue)}, nil
}

// Acquire takes a slot, waiting until one is free or ctx is done. It fails
// at once with ErrLimitQueueFull when the queue is full, and with ctx.Err()
// when ctx ends first. Every successful Acquire must be paired with one
// Release.
func (l *Limiter) Acquire(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	default:
	}
	if n := l.waiting.Add(1); l.maxQueue > 0 && n > l.maxQueue {
		l.waiting.Add(-1)
		return ErrLimitQueueFull
	}
	defer l.waiting.Add(-1)
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release frees a slot taken by Acquire. It panics if no slot is taken: a
// Release without its Acquire would let more attempts run than the limit
// (as semaphore.Weighted does, it fails loudly instead).
func (l *Limiter) Release() {
	select {
	case <-l.slots:
	default:
		panic("policies: Limiter.Release without a matching Acquire")
	}
}

// InFlight returns the number of slots taken now.
func (l *Limiter) InFlight() int { return len(l.slots) }

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

package sim

import (
	"fmt"
	"math"
	"time"
)

// CoDel is controlled delay on a queue's waiting requests. A request that
// fails its test leaves the queue failed, with the queue's Reject, and
// takes no worker time. Rule says which test, and when it is made.
// Facebook's "Fail at Scale" (ACM Queue, 2015) gives Target 5 ms and
// Interval 100 ms.
type CoDel struct {
	Target, Interval time.Duration
	Rule             CoDelRule
}

// CoDelRule is when and how controlled delay decides a request.
type CoDelRule uint8

const (
	// CoDelAtDequeue, the default, is Fail at Scale's test made when a
	// request reaches the head of the queue (when a worker would take it),
	// as CoDel decides: if the queue has not been empty for the last
	// Interval, a request that has waited more than Target is dropped
	// then; otherwise one that has waited more than Interval.
	CoDelAtDequeue CoDelRule = iota
	// CoDelAtArrival is the same test made when the request arrives, as
	// Fail at Scale's pseudocode sets a request's timeout when it is
	// queued: the request keeps that limit while it waits and leaves the
	// queue when it is reached.
	CoDelAtArrival
	// CoDelControlLaw is the control law of Nichols and Jacobson (RFC
	// 8289), applied at each dequeue: once waits have been at least
	// Target for Interval, the queue drops the request at the head, then
	// the next at intervals of Interval/√count for as long as waits stay
	// at least Target (see controlLaw).
	CoDelControlLaw
	codelRules
)

// String returns the rule's name in a scenario file: dequeue, arrival or
// control-law.
func (r CoDelRule) String() string {
	if r < codelRules {
		return [...]string{"dequeue", "arrival", "control-law"}[r]
	}
	return fmt.Sprintf("CoDelRule(%d)", uint8(r))
}

func (c CoDel) validate() error {
	switch {
	case c == CoDel{}:
		return nil
	case !(c.Target > 0 && c.Interval >= c.Target):
		return fmt.Errorf("queue: controlled delay needs a target > 0 and an interval >= it (got %v, %v)", c.Target, c.Interval)
	case c.Rule >= codelRules:
		return fmt.Errorf("queue: unknown controlled-delay rule %d", c.Rule)
	}
	return nil
}

// limit is Fail at Scale's wait limit for a queue that has not been empty
// for stood.
func (c CoDel) limit(stood time.Duration) time.Duration {
	if stood >= c.Interval {
		return c.Target
	}
	return c.Interval
}

// controlLaw is RFC 8289's dequeue state machine, fed one dequeue at a
// time in time order: a request's start (or the moment it would start),
// as the queue decides it. The RFC's check that at most one packet is
// left queued is left out: it would depend on requests that arrive after
// this one, which a first-come, first-served queue does not know when it
// decides a request at its arrival. A worker that finds the queue empty
// resets the state as the RFC's empty dequeue does; a request served at
// once (no wait) has the same effect, so it needs no case of its own.
type controlLaw struct {
	target, interval time.Duration
	firstAbove       time.Duration // 0: waits are below target
	dropNext         time.Duration
	count, lastCount int
	dropping         bool
	lastDrop         time.Duration // when the last dequeue dropped (after != lawServed)
	after            lawStep       // what the last dequeue did
}

// lawStep is what a dequeue did, which the next dequeue at the same
// moment continues (the RFC drops and dequeues again within one call).
type lawStep uint8

const (
	lawServed    lawStep = iota
	lawFirstDrop         // entered the dropping state: the next request is served
	lawDrop              // dropped in the dropping state: the next is tested again
)

// dequeue reports whether the request that arrived at arrived and reaches
// the head at now is dropped.
func (l *controlLaw) dequeue(now, arrived time.Duration) bool {
	step := lawServed
	if l.after != lawServed {
		if arrived <= l.lastDrop {
			step = l.after // it was waiting behind the drop: the same dequeue goes on
		} else {
			// The drop left the queue empty: the RFC's empty dequeue.
			l.firstAbove, l.dropping = 0, false
		}
	}
	ok := l.okToDrop(now, now-arrived)
	drop := false
	switch {
	case step == lawFirstDrop:
		// Served whatever its wait; the dropping state goes on.
	case step == lawDrop || l.dropping:
		if !ok {
			l.dropping = false
			break
		}
		if step == lawDrop {
			l.dropNext = l.next(l.dropNext, l.count)
		}
		if now >= l.dropNext {
			drop = true
			l.count++
			l.after = lawDrop
		}
	case ok:
		drop = true
		l.dropping = true
		// Start from the drop rate that last controlled the queue if it
		// went back above target soon after (RFC 8289, section 5.5).
		delta := l.count - l.lastCount
		l.count = 1
		if delta > 1 && now-l.dropNext < 16*l.interval {
			l.count = delta
		}
		l.dropNext = l.next(now, l.count)
		l.lastCount = l.count
		l.after = lawFirstDrop
	}
	if drop {
		l.lastDrop = now
	} else {
		l.after = lawServed
	}
	return drop
}

// okToDrop is the RFC's dodequeue: true once waits have been at least
// target for interval.
func (l *controlLaw) okToDrop(now, wait time.Duration) bool {
	switch {
	case wait < l.target:
		l.firstAbove = 0
	case l.firstAbove == 0:
		l.firstAbove = now + l.interval
	case now >= l.firstAbove:
		return true
	}
	return false
}

// next is the control law: t + interval/√count.
func (l *controlLaw) next(t time.Duration, count int) time.Duration {
	return t + time.Duration(float64(l.interval)/math.Sqrt(float64(count)))
}

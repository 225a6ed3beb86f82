package sim

import "time"

// PoolObserver is told of every request a pool sent to a member, at its
// arrival (when the member decided it): the member's index in
// Pool.Members and whether its answer was a failure (any class but
// success). Requests the pool answered itself, with every member out, are
// not told. It is called from the run's goroutine; nothing it does may
// reach the run.
type PoolObserver func(at time.Duration, member int, failed bool)

// Observed returns a copy of p whose runs tell observe of each request
// sent to a member, for per-member timelines; p itself is not changed.
// The copy shares p's members, which runs only read.
func (p *Pool) Observed(observe PoolObserver) *Pool {
	c := *p
	c.observe = observe
	return &c
}

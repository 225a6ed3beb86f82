package sim

import "time"

// PoolObserver is told of every request a pool decided, at its arrival:
// the index in Pool.Members of the member it went to, and whether the
// answer was a failure (any class but success). A request the pool
// answered itself with 429, every member being cooled down, has member
// -1 (the counter pool.unavailable). It is called from the run's
// goroutine; nothing it does may reach the run.
type PoolObserver func(at time.Duration, member int, failed bool)

// Observed returns a copy of p whose runs tell observe of each request
// they decide, for per-member timelines; p itself is not changed.
// The copy shares p's members, which runs only read.
func (p *Pool) Observed(observe PoolObserver) *Pool {
	c := *p
	c.observe = observe
	return &c
}

// AllOut reports whether every member of p may be out at once, so that
// the pool answers requests itself (a cooldown).
func (p *Pool) AllOut() bool { return p.Cooldown.on() }

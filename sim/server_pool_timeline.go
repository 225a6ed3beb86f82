package sim

import "time"

// PoolObserver is told of every request a pool decided, at its arrival:
// the index in Pool.Members of the member it went to, and whether the
// answer was a failure (any class but success). A request the pool
// answered itself with 429, every member being cooled down, has member
// -1 (the counter pool.unavailable). It is called from the run's
// goroutine; nothing it does may reach the run.
type PoolObserver func(at time.Duration, member int, failed bool)

// MemberModel is a server model made of named members (a pool) whose runs
// can tell an observer which member each request went to: what per-member
// timelines need, without naming the kind.
type MemberModel interface {
	ServerModel
	// MemberNames are the members' names, in the order PoolObserver
	// numbers them.
	MemberNames() []string
	// AllOut reports whether every member may be out at once, so that the
	// model answers requests itself (member -1).
	AllOut() bool
	// Observed returns a copy of the model whose runs tell observe of each
	// request they decide; the model itself is not changed.
	Observed(observe PoolObserver) ServerModel
}

var _ MemberModel = (*Pool)(nil)

// MemberNames implements MemberModel.
func (p *Pool) MemberNames() []string {
	names := make([]string, len(p.Members))
	for i, m := range p.Members {
		names[i] = m.Name
	}
	return names
}

// Observed returns a copy of p whose runs tell observe of each request
// they decide, for per-member timelines; p itself is not changed.
// The copy shares p's members, which runs only read.
func (p *Pool) Observed(observe PoolObserver) ServerModel {
	c := *p
	c.observe = observe
	return &c
}

// AllOut reports whether every member of p may be out at once, so that
// the pool answers requests itself (a cooldown).
func (p *Pool) AllOut() bool { return p.Cooldown.on() }

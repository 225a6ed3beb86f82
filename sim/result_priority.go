package sim

import (
	"slices"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// PriorityResult is what one run measured of the operations of one
// priority: every count and time of Result, over those operations only.
// Counters, Events, Recovery and Waited are the run's and stay zero here.
type PriorityResult struct {
	Priority Priority
	Result
}

// OfPriority returns what the run measured of the operations of priority
// p, and false when the workload gave none that priority (or none at all:
// a run without priorities has no ByPriority).
func (r *Result) OfPriority(p Priority) (*Result, bool) {
	for i := range r.ByPriority {
		if r.ByPriority[i].Priority == p {
			return &r.ByPriority[i].Result, true
		}
	}
	return nil, false
}

// PriorityLevels is an optional interface of a Workload that gives its
// operations priorities (through itself or its Chain, as Prioritizer):
// the priorities they may have, highest first; none when it gives none.
// Reports list their metrics by priority (by_priority.critical.completed)
// for these levels.
type PriorityLevels interface {
	PriorityLevels() []Priority
}

// PriorityLevels returns the priorities the shares give, highest first:
// the default too when they leave some operations.
func (ps PriorityShares) PriorityLevels() []Priority {
	if len(ps) == 0 {
		return nil
	}
	var out []Priority
	sum := 0.0
	for _, p := range ps {
		out = append(out, p.Priority)
		sum += p.Share
	}
	if sum < 1-1e-9 {
		out = append(out, PriorityDefault)
	}
	return sortedLevels(out...)
}

// sortedLevels returns ps without repeats, highest first.
func sortedLevels(ps ...Priority) []Priority {
	out := slices.Clone(ps)
	slices.SortFunc(out, func(a, b Priority) int { return int(b) - int(a) })
	return slices.Compact(out)
}

// levels splits a run's counts by priority: the engine counts each event
// in the run's Result and, through levels, in its operation's level's.
type levels struct {
	prio  Prioritizer
	index [2*MaxPriority + 1]int8 // priority + MaxPriority → position in res, -1 for none yet
	res   []PriorityResult
}

// newLevels returns the levels of a run whose operations p gives
// priorities, or nil when p is nil.
func newLevels(p Prioritizer) *levels {
	if p == nil {
		return nil
	}
	l := &levels{prio: p}
	for i := range l.index {
		l.index[i] = -1
	}
	return l
}

// of returns the result of operation i's level; nil for a run without
// priorities (l nil). Levels appear in the order they are first met and
// are put in order by finish.
func (l *levels) of(i int) *Result {
	if l == nil {
		return nil
	}
	p := l.prio.Priority(i)
	k := &l.index[int(p)+MaxPriority]
	if *k < 0 {
		*k = int8(len(l.res))
		l.res = append(l.res, PriorityResult{Priority: p})
	}
	return &l.res[*k].Result
}

// finish counts the operations of each level that started (the first
// started of ops) and those that sent an attempt, works out each level's
// retries, sorts its times, and returns the levels, highest priority
// first.
func (l *levels) finish(ops []operation, started int, policy string) []PriorityResult {
	if l == nil {
		return nil
	}
	first := make(map[Priority]int)
	for i := range started {
		r := l.of(i)
		r.Clients++
		if ops[i].op.Attempts() > 0 {
			first[l.prio.Priority(i)]++
		}
	}
	for k := range l.res {
		r := &l.res[k]
		r.Policy = policy
		r.Retries = r.Attempts - first[r.Priority]
		slices.Sort(r.Latencies)
		slices.Sort(r.GiveUps)
	}
	slices.SortFunc(l.res, func(a, b PriorityResult) int { return int(b.Priority) - int(a.Priority) })
	return l.res
}

// The counts of Result the engine makes as a run goes, each in one place
// so that the run's totals and its levels' count alike.

func (r *Result) sent() { r.Attempts++ }

func (r *Result) decided(class policies.Class) {
	if class == policies.Success {
		r.Admitted++
	} else {
		r.Rejected++
	}
}

func (r *Result) completed(latency, at time.Duration) {
	r.Completed++
	r.Latencies = append(r.Latencies, latency)
	r.LastCompletion = max(r.LastCompletion, at)
}

func (r *Result) gaveUp(reason policies.StopReason, after time.Duration) {
	r.GaveUp++
	r.GaveUpBy[reason]++
	r.GiveUps = append(r.GiveUps, after)
}

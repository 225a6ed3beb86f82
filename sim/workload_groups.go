package sim

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// Group is one client group of a Groups workload: a workload of its own
// whose operations share the run's server with the other groups'.
type Group struct {
	Name     string
	Workload Workload
	// Priority is the priority of the group's operations, unless Shares
	// or the workload itself (PriorityLevels) give them others.
	Priority Priority
	// Shares, if set, give the group's operations priorities by share.
	Shares PriorityShares
	// Policy, if set, is the group's own policy, whatever policy the run
	// compares; nil: the group runs the run's policy.
	Policy *Policy
}

// Groups is a workload of client groups sharing one server, each with its
// priority and, optionally, a policy of its own (a foreground agent with
// Claude Code's policy beside background work whose policy is compared).
// Its operations are its groups': first every group's leaders (the
// operations that start on their own), group after group, then the
// operations the groups' chains start, numbered as they start. A group
// may be any workload but an open loop or one split over processes
// (whose operations are drawn per run, or whose plans are per process)
// or another Groups; a group's own policy may not hedge, watch streams,
// or have retry layers, and the run's policy may do none of these either
// when a group has its own: hedging, the watchdog and layers are the
// run's, so they would reach every group.
type Groups struct {
	Members []Group
	// leaders holds each group's count of leaders, worked out once
	// (a chain's Leaders is known only from a chain).
	once    sync.Once
	leaders []int
}

// Validate checks every group and what a group cannot be.
func (w *Groups) Validate() error {
	if len(w.Members) == 0 {
		return fmt.Errorf("groups: needs at least one group")
	}
	total := 0
	names := map[string]bool{}
	for _, g := range w.Members {
		if g.Workload == nil {
			return fmt.Errorf("group %q: no workload", g.Name)
		}
		if _, ok := g.Workload.(fixedPolicies); ok {
			return fmt.Errorf("group %q: groups do not nest", g.Name)
		}
		if _, ok := g.Workload.(StartDrawer); ok {
			return fmt.Errorf("group %q: its operations are drawn afresh for each run (an open loop), which a group does not support yet", g.Name)
		}
		if s, ok := g.Workload.(ProcessSplit); ok && s.ClientProcesses() > 1 {
			return fmt.Errorf("group %q: a group cannot split its operations over client processes", g.Name)
		}
		if names[g.Name] {
			return fmt.Errorf("groups: two groups are called %q", g.Name)
		}
		names[g.Name] = true
		if err := g.Workload.Validate(); err != nil {
			return fmt.Errorf("group %q: %w", g.Name, err)
		}
		if err := g.Shares.Validate(); err != nil {
			return fmt.Errorf("group %q: %w", g.Name, err)
		}
		if own, ok := g.Workload.(PriorityLevels); ok && own.PriorityLevels() != nil && (g.Priority != PriorityDefault || len(g.Shares) > 0) {
			return fmt.Errorf("group %q: its workload gives its operations priorities itself; the group's would have no effect", g.Name)
		}
		if g.Priority < -MaxPriority || g.Priority > MaxPriority {
			return fmt.Errorf("group %q: priority %d is not within ±%d", g.Name, g.Priority, MaxPriority)
		}
		if p := g.Policy; p != nil {
			if err := fixedPolicyProblem(p); err != "" {
				return fmt.Errorf("group %q: its policy %q %s", g.Name, p.Name, err)
			}
		}
		if total += g.Workload.Operations(); total > MaxOperations {
			return fmt.Errorf("groups: %d operations or more; at most %d are supported", total, MaxOperations)
		}
	}
	return nil
}

// fixedPolicyProblem says what a policy does that is the run's, not one
// group's, to do ("" for none): see Groups.
func fixedPolicyProblem(p *Policy) string {
	switch {
	case len(p.Layers) > 0:
		return "has retry layers, which wrap the run's server for every group"
	case p.Rules.Watchdog().On():
		return "watches streams, which the run does for every group"
	}
	for _, s := range p.Coordinators {
		if _, ok := s.(policies.HedgeConfig); ok {
			return "hedges, which the run does for every group"
		}
	}
	return ""
}

// Operations is the sum of the groups'.
func (w *Groups) Operations() int {
	n := 0
	for _, g := range w.Members {
		n += g.Workload.Operations()
	}
	return n
}

// leadersOf returns how many operations of each group start on their own.
func (w *Groups) leadersOf() []int {
	w.once.Do(func() {
		w.leaders = make([]int, len(w.Members))
		for k, g := range w.Members {
			w.leaders[k] = g.Workload.Operations()
			if c, ok := g.Workload.(Chained); ok {
				w.leaders[k] = min(c.NewChain().Leaders(), w.leaders[k])
			}
		}
	})
	return w.leaders
}

// Start returns leader i's start, as its group's workload gives it.
func (w *Groups) Start(i int, rng *rand.Rand) time.Duration {
	for k, n := range w.leadersOf() {
		if i >= n {
			i -= n
			continue
		}
		return w.Members[k].Workload.Start(i, rng)
	}
	return 0
}

// FixedPolicies returns the groups' own policies, in group order, and
// whether some group has one.
func (w *Groups) FixedPolicies() ([]*Policy, bool) {
	var ps []*Policy
	for _, g := range w.Members {
		if g.Policy != nil {
			ps = append(ps, g.Policy)
		}
	}
	return ps, len(ps) > 0
}

// PriorityLevels returns every priority a group gives, highest first.
func (w *Groups) PriorityLevels() []Priority {
	var all []Priority
	for _, g := range w.Members {
		all = append(all, g.levels()...)
	}
	return sortedLevels(all...)
}

// levels returns the priorities g gives its operations.
func (g *Group) levels() []Priority {
	if l, ok := g.Workload.(PriorityLevels); ok && l.PriorityLevels() != nil {
		return l.PriorityLevels()
	}
	if len(g.Shares) > 0 {
		return g.Shares.PriorityLevels()
	}
	return []Priority{g.Priority}
}

// NewChain returns the groups' state of one run.
func (w *Groups) NewChain() Chain {
	n := w.Operations()
	c := &groupsChain{w: w, group: make([]int16, n), local: make([]int32, n), members: make([]groupRun, len(w.Members))}
	fixed := 0
	for k := range w.Members {
		g := &w.Members[k]
		m := &c.members[k]
		m.policy = -1
		if g.Policy != nil {
			m.policy = fixed
			fixed++
		}
		if ch, ok := g.Workload.(Chained); ok {
			m.chain = ch.NewChain()
		}
		m.sizer, _ = g.Workload.(TokenSizer)
		if s, ok := m.chain.(TokenSizer); ok {
			m.sizer = s
		}
		switch p, ok := m.chain.(Prioritizer); {
		case ok:
			m.prio = p
		case len(g.Shares) > 0:
			m.prio = g.Shares
		}
		if p, ok := g.Workload.(Prioritizer); ok && m.prio == nil {
			m.prio = p
		}
		m.started = w.leadersOf()[k]
		for j := range m.started {
			c.group[c.next], c.local[c.next] = int16(k), int32(j)
			c.next++
		}
	}
	c.leaders = c.next
	return c
}

// groupRun is one group's state in a run.
type groupRun struct {
	chain   Chain // nil for a workload that is not chained
	sizer   TokenSizer
	prio    Prioritizer // nil: the group's Priority
	policy  int         // index in FixedPolicies; -1 for the run's
	started int         // the group's operations started so far
}

type groupsChain struct {
	w       *Groups
	members []groupRun
	group   []int16 // operation → its group
	local   []int32 // operation → its index in its group's workload
	leaders int
	next    int // the next operation to start
}

func (c *groupsChain) Leaders() int { return c.leaders }

// Next asks the chain of the ended operation's group for its next one,
// and numbers it as the run's next.
func (c *groupsChain) Next(ended int, at time.Duration, completed bool, rng *rand.Rand) (int, time.Duration, bool) {
	k := c.group[ended]
	m := &c.members[k]
	if m.chain == nil {
		return 0, 0, false
	}
	local, start, ok := m.chain.Next(int(c.local[ended]), at, completed, rng)
	if !ok {
		return 0, 0, false
	}
	if local != m.started {
		// The engine's check, for the group's own numbering.
		return c.next + 1, start, true
	}
	m.started++
	i := c.next
	c.next++
	c.group[i], c.local[i] = k, int32(local)
	return i, start, true
}

// Tokens sizes operation i's request as its group's workload does.
func (c *groupsChain) Tokens(i int) (input, output int) {
	if s := c.members[c.group[i]].sizer; s != nil {
		return s.Tokens(int(c.local[i]))
	}
	return 0, 0
}

// Priority is operation i's priority in its group.
func (c *groupsChain) Priority(i int) Priority {
	k := c.group[i]
	if p := c.members[k].prio; p != nil {
		return p.Priority(int(c.local[i]))
	}
	return c.w.Members[k].Priority
}

// PolicyOf returns the index of operation i's group's own policy among
// FixedPolicies, or -1 when it runs the run's policy.
func (c *groupsChain) PolicyOf(i int) int { return c.members[c.group[i]].policy }

// ReportCounters adds what the groups' chains count, group by group.
func (c *groupsChain) ReportCounters(cs *Counters) {
	for k := range c.members {
		if r, ok := c.members[k].chain.(CounterReporter); ok {
			r.ReportCounters(cs)
		}
	}
}

// fixedPolicies is the optional interface of a workload some of whose
// operations run a policy of their own (Groups); policyChooser is its
// chain's, which says which operation runs which.
type fixedPolicies interface {
	FixedPolicies() ([]*Policy, bool)
}

type policyChooser interface {
	PolicyOf(i int) int
}

// planFixed builds the plans of the workload's own policies, if it has
// some (runner.fixed).
func (r *runner) planFixed(cfg *Config) error {
	r.fixed, r.choose = r.fixed[:0], nil
	w, ok := cfg.Workload.(fixedPolicies)
	if !ok {
		return nil
	}
	ps, some := w.FixedPolicies()
	if !some {
		return nil
	}
	if r.choose, ok = r.chain.(policyChooser); !ok {
		return fmt.Errorf("workload %T has policies of its own but does not say which operation runs which", cfg.Workload)
	}
	for _, p := range ps {
		plan, err := p.Plan(cfg.Hooks)
		if err != nil {
			return err
		}
		r.fixed = append(r.fixed, plan)
	}
	return nil
}

// fixedAny reports whether f holds for one of the workload's own
// policies (with its plan).
func (r *runner) fixedAny(cfg *Config, f func(*Policy, *machine.Plan) bool) bool {
	if len(r.fixed) == 0 {
		return false
	}
	ps, _ := cfg.Workload.(fixedPolicies).FixedPolicies()
	for k := range r.fixed {
		if f(ps[k], &r.fixed[k]) {
			return true
		}
	}
	return false
}

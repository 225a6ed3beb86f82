package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// Pool is a pool of member servers behind a load balancer: every request
// goes to one member, chosen by the Balancer when the request arrives, and
// that member decides it as it would alone. Each member is any server
// model with its own state, phases and random stream; the pool counts,
// per member, the requests it sent there and those that failed.
//
// A member's outstanding requests are those it has answered with a
// response that has not reached its client yet (the response's At is
// after now); a response due at the very instant of an arrival no longer
// counts. The balancers that read it (least-outstanding,
// power-of-two) see what a proxy sees: the member's own answers, including
// fast failures, which leave nothing outstanding.
type Pool struct {
	// Members are the servers, in order; at least one, at most
	// MaxPoolMembers, with distinct names.
	Members []PoolMember
	// Balancer chooses a member for each request.
	Balancer Balancer
	// Ejection, if set (Consecutive > 0), takes a member out of the
	// rotation after that many consecutive failed responses, as Envoy's
	// outlier detection does (see Ejection).
	Ejection Ejection
	// Cooldown, if set (AllowedFails or FailureRate > 0), cools a member
	// down after failures, as LiteLLM's router does (see Cooldown); not
	// with Ejection.
	Cooldown Cooldown

	observe PoolObserver // set on a copy by Observed
}

// PoolMember is one server of a Pool.
type PoolMember struct {
	// Name names the member in its counters (pool.NAME.requests): letters,
	// digits, '-' and '_', at most 32 characters.
	Name   string
	Server ServerModel
}

// MaxPoolMembers bounds a Pool's members.
const MaxPoolMembers = 1024

// Balancer is how a Pool chooses a member.
type Balancer int

const (
	// RoundRobin sends requests to the members in turn.
	RoundRobin Balancer = iota
	// Random sends each request to a member drawn uniformly from the
	// pool's own random stream.
	Random
	// LeastOutstanding sends each request to a member with the fewest
	// outstanding requests; ties go to the first such member in round
	// robin order, so that an idle pool is used evenly.
	LeastOutstanding
	// PowerOfTwo draws two distinct members at random and sends the
	// request to the one with fewer outstanding requests (the first drawn
	// on a tie): Mitzenmacher's "power of two choices".
	PowerOfTwo
)

// Balancers lists every balancer with its name in a scenario file, in
// order.
var Balancers = []struct {
	Balancer Balancer
	Name     string
	About    string
}{
	{RoundRobin, "round-robin", "the members in turn"},
	{Random, "random", "a member drawn at random"},
	{LeastOutstanding, "least-outstanding", "a member with the fewest outstanding requests"},
	{PowerOfTwo, "power-of-two", "the less loaded of two members drawn at random"},
}

// String returns the balancer's name.
func (b Balancer) String() string {
	for _, x := range Balancers {
		if x.Balancer == b {
			return x.Name
		}
	}
	return fmt.Sprintf("balancer(%d)", int(b))
}

// Ejection is Envoy-style outlier ejection: after Consecutive failed
// responses in a row (any class but success) from one member, counted in
// the order the responses reach their clients, the member is ejected for
// For: the balancer chooses among the other members. While MaxEjected
// members are out, no more are ejected (Envoy's max_ejection_percent,
// here a count; 0 means all but one, the most allowed). What a member
// answers while it is out does not count, and its count starts again at
// 0 when it returns.
type Ejection struct {
	Consecutive int
	For         time.Duration
	MaxEjected  int
}

// Cooldown is a LiteLLM-style cooldown of a member (a "deployment"),
// decided at each failed response, counted when responses reach their
// clients, in one of two modes:
//
//   - by count (AllowedFails > 0, LiteLLM's allowed_fails): a member's
//     failures are counted, and the count is forgotten For after the
//     last one counted; the failure that takes it past AllowedFails
//     cools the member down;
//   - by rate (FailureRate > 0, LiteLLM's default, 0.5): the member's
//     successes and failures in the current minute of the clock (t / 1m)
//     are counted; a failure after which failures are more than
//     FailureRate of them, with at least 2 responses this minute, cools
//     the member down.
//
// A cooled member is out for For (LiteLLM's cooldown_time, default 5 s);
// what it answers meanwhile does not count, and it comes back with its
// counts at 0. Unlike ejection every member may be out at once: the pool
// then answers every request at once with 429, retry-after the time until
// the first member is back, as LiteLLM's router raises a rate-limit error
// when no deployment is available.
type Cooldown struct {
	AllowedFails int
	FailureRate  float64
	For          time.Duration
}

func (c Cooldown) on() bool { return c.AllowedFails > 0 || c.FailureRate > 0 }

// Validate reports the first problem that would make the model meaningless.
func (p *Pool) Validate() error {
	if len(p.Members) == 0 || len(p.Members) > MaxPoolMembers {
		return fmt.Errorf("pool: needs between 1 and %d members (got %d)", MaxPoolMembers, len(p.Members))
	}
	if p.Balancer < 0 || int(p.Balancer) >= len(Balancers) {
		return fmt.Errorf("pool: unknown balancer %d", int(p.Balancer))
	}
	switch e := p.Ejection; {
	case e.Consecutive < 0 || e.For < 0 || e.MaxEjected < 0:
		return fmt.Errorf("pool: negative ejection setting %+v", e)
	case e.Consecutive > 0 && e.For == 0:
		return fmt.Errorf("pool: ejection needs a time out (For > 0)")
	case e.MaxEjected >= len(p.Members) && e.Consecutive > 0:
		return fmt.Errorf("pool: at most %d of %d members may be ejected (got %d)", len(p.Members)-1, len(p.Members), e.MaxEjected)
	}
	switch c := p.Cooldown; {
	case c.AllowedFails < 0 || c.For < 0 || !(c.FailureRate >= 0 && c.FailureRate < 1):
		return fmt.Errorf("pool: cooldown needs allowed fails >= 0, a failure rate in [0, 1) and a time >= 0 (got %+v)", c)
	case c.AllowedFails > 0 && c.FailureRate > 0:
		return fmt.Errorf("pool: a cooldown counts failures or their rate, not both")
	case c.on() && c.For == 0:
		return fmt.Errorf("pool: cooldown needs a time (For > 0)")
	case c.on() && p.Ejection.Consecutive > 0:
		return fmt.Errorf("pool: choose ejection or cooldown, not both")
	}
	for i, m := range p.Members {
		if err := CheckMemberName(m.Name); err != nil {
			return fmt.Errorf("pool: member %d: %w", i, err)
		}
		if slices.ContainsFunc(p.Members[:i], func(o PoolMember) bool { return o.Name == m.Name }) {
			return fmt.Errorf("pool: two members are called %q", m.Name)
		}
		if m.Server == nil {
			return fmt.Errorf("pool: member %q has no server model", m.Name)
		}
		if err := m.Server.Validate(); err != nil {
			return fmt.Errorf("pool: member %q: %w", m.Name, err)
		}
		if DecidesLater(m.Server) {
			// Its pending requests would reach the engine through a pool
			// that cannot decide them.
			return fmt.Errorf("pool: member %q: the %T model decides requests after they arrive; it cannot be a pool member", m.Name, m.Server)
		}
	}
	return nil
}

func CheckMemberName(name string) error {
	if name == "" || len(name) > 32 {
		return fmt.Errorf("a member needs a name of 1 to 32 characters (got %q)", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("member name %q: only letters, digits, '-' and '_'", name)
		}
	}
	return nil
}

// MidStreamFailures holds when a member's does (MidStreamer).
func (p *Pool) MidStreamFailures() bool {
	return slices.ContainsFunc(p.Members, func(m PoolMember) bool { return FailsMidStream(m.Server) })
}

// NewServer returns the pool's state for one run. Each member, and the
// balancer, draws from its own stream, seeded from rng in member order:
// a member's draws do not depend on how many requests the others get.
func (p *Pool) NewServer(rng *rand.Rand) Server {
	sub := func() *rand.Rand { return rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())) }
	s := &poolState{model: p, members: make([]poolMember, len(p.Members))}
	for i, m := range p.Members {
		s.members[i] = poolMember{server: m.Server.NewServer(sub())}
	}
	s.rng = sub()
	s.maxEjected = p.Ejection.MaxEjected
	if s.maxEjected == 0 {
		s.maxEjected = len(p.Members) - 1
	}
	if p.Cooldown.on() {
		s.maxEjected = len(p.Members)
	}
	return s
}

type poolState struct {
	model      *Pool
	members    []poolMember
	rng        *rand.Rand // the balancer's
	next       int        // round robin's next member
	ejected    int        // members out now (ejected or cooled down)
	maxEjected int
	pending    responseHeap // responses on their way, for ejection or cooldown
	allOut     int          // requests answered 429 because every member was out
}

type poolMember struct {
	server      Server
	outstanding durationHeap // when each outstanding response reaches its client
	// Ejection and cooldown state: failures counted so far (in a row,
	// or by a cooldown), successes this minute and the minute (by
	// rate), when a count by number is forgotten, and until when the
	// member is out (0: in).
	failures, successes int
	minute              int64
	forget              time.Duration
	ejectedUntil        time.Duration
	stats               poolMemberStats
}

// poolMemberStats counts a member's requests, failed responses, and times
// it was ejected or cooled down.
type poolMemberStats struct{ Requests, Failed, Ejections int }

// pendingResponse is a response on its way to its client, for ejection.
type pendingResponse struct {
	at     time.Duration
	member int32
	failed bool
}

// Arrive chooses a member and lets it decide the request.
func (s *poolState) Arrive(now time.Duration, req Request) Response {
	s.observe(now)
	i := s.choose(now)
	if i < 0 {
		s.allOut++
		if s.model.observe != nil {
			s.model.observe(now, -1, true)
		}
		return Response{Outcome: policies.Outcome{Class: policies.RetryAfter, Status: 429, ServerWait: s.firstBack() - now}, At: now, Ticket: poolTicket(ownTicket, -1, len(s.members))}
	}
	m := &s.members[i]
	resp := m.server.Arrive(now, req)
	at := max(resp.At, now)
	m.outstanding.push(at)
	failed := resp.Outcome.Class != policies.Success
	m.stats.Requests++
	if failed {
		m.stats.Failed++
	}
	if s.model.observe != nil {
		s.model.observe(now, i, failed)
	}
	if s.tracks() {
		s.pending.push(pendingResponse{at: at, member: int32(i), failed: failed})
	}
	resp.Ticket = poolTicket(resp.Ticket, i, len(s.members))
	return resp
}

// tracks reports whether the pool follows its members' failures.
func (s *poolState) tracks() bool { return s.model.Ejection.Consecutive > 0 || s.model.Cooldown.on() }

// firstBack is when the first member that is out comes back.
func (s *poolState) firstBack() time.Duration {
	first := time.Duration(0)
	for i := range s.members {
		if u := s.members[i].ejectedUntil; u > 0 && (first == 0 || u < first) {
			first = u
		}
	}
	return first
}

// observe brings the members' state to now: responses that reached their
// clients at or before now are no longer outstanding, and (with
// ejection) count towards ejection in the order they arrived.
func (s *poolState) observe(now time.Duration) {
	for i := range s.members {
		m := &s.members[i]
		for len(m.outstanding) > 0 && m.outstanding[0] <= now {
			m.outstanding.pop()
		}
	}
	if !s.tracks() {
		return
	}
	for len(s.pending) > 0 && s.pending[0].at <= now {
		r := s.pending.pop()
		s.returnEjected(r.at)
		m := &s.members[r.member]
		if m.ejectedUntil > 0 {
			continue // what an ejected member answered before does not count again
		}
		if out, d := s.judge(m, r); out && s.ejected < s.maxEjected {
			m.ejectedUntil, m.failures, m.successes = r.at+d, 0, 0
			m.stats.Ejections++
			s.ejected++
		}
	}
	s.returnEjected(now)
}

// judge counts response r of member m and says whether m goes out, and
// for how long.
func (s *poolState) judge(m *poolMember, r pendingResponse) (bool, time.Duration) {
	if e := s.model.Ejection; e.Consecutive > 0 {
		if !r.failed {
			m.failures = 0
			return false, 0
		}
		m.failures++
		return m.failures >= e.Consecutive, e.For
	}
	c := s.model.Cooldown
	if c.AllowedFails > 0 {
		if !r.failed {
			return false, 0
		}
		if m.forget <= r.at {
			m.failures = 0
		}
		if m.failures+1 > c.AllowedFails {
			return true, c.For
		}
		m.failures++
		m.forget = r.at + c.For
		return false, 0
	}
	if minute := int64(r.at / time.Minute); minute != m.minute {
		m.minute, m.failures, m.successes = minute, 0, 0
	}
	if !r.failed {
		m.successes++
		return false, 0
	}
	m.failures++
	total := m.failures + m.successes
	return total > 1 && float64(m.failures) > c.FailureRate*float64(total), c.For
}

// returnEjected brings back the members whose ejection ended by now.
func (s *poolState) returnEjected(now time.Duration) {
	if s.ejected == 0 {
		return
	}
	for i := range s.members {
		if m := &s.members[i]; m.ejectedUntil > 0 && m.ejectedUntil <= now {
			m.ejectedUntil = 0
			s.ejected--
		}
	}
}

// in reports whether member i may be chosen (it is not ejected).
func (s *poolState) in(i int) bool { return s.members[i].ejectedUntil == 0 }

// choose returns the member for a request arriving at now.
func (s *poolState) choose(now time.Duration) int {
	n := len(s.members)
	avail := n - s.ejected
	if avail == 0 {
		return -1
	}
	switch s.model.Balancer {
	case Random:
		return s.nthIn(s.rng.IntN(avail))
	case PowerOfTwo:
		if avail == 1 {
			return s.nthIn(0)
		}
		a := s.rng.IntN(avail)
		b := s.rng.IntN(avail - 1)
		if b >= a {
			b++
		}
		i, j := s.nthIn(a), s.nthIn(b)
		if len(s.members[j].outstanding) < len(s.members[i].outstanding) {
			return j
		}
		return i
	case LeastOutstanding:
		best := -1
		for k := range n {
			i := (s.next + k) % n
			if s.in(i) && (best < 0 || len(s.members[i].outstanding) < len(s.members[best].outstanding)) {
				best = i
			}
		}
		s.next = (best + 1) % n
		return best
	}
	for {
		i := s.next
		s.next = (s.next + 1) % n
		if s.in(i) {
			return i
		}
	}
}

// nthIn returns the k-th member that is in (0-based), in member order.
func (s *poolState) nthIn(k int) int {
	if s.ejected == 0 {
		return k
	}
	for i := range s.members {
		if s.in(i) {
			if k == 0 {
				return i
			}
			k--
		}
	}
	panic("sim: pool has fewer members in than it counts")
}

// ReportCounters reports what the members counted (summed under their
// own names, such as server.wasted), then the pool's: per member
// pool.NAME.requests, pool.NAME.failed and, with ejection,
// pool.NAME.ejections (with a cooldown, pool.NAME.cooldowns);
// pool.requests (all that reached a member), pool.busiest_requests (the
// most any member got), pool.ejections or pool.cooldowns, and with a
// cooldown pool.unavailable (requests answered 429 with every member out).
func (s *poolState) ReportCounters(c *Counters) {
	for i := range s.members {
		reportCounters(s.members[i].server, c)
	}
	total, busiest := 0, 0
	for i, m := range s.members {
		name := "pool." + s.model.Members[i].Name
		c.Add(name+".requests", int64(m.stats.Requests))
		c.Add(name+".failed", int64(m.stats.Failed))
		switch {
		case s.model.Ejection.Consecutive > 0:
			c.Add(name+".ejections", int64(m.stats.Ejections))
		case s.model.Cooldown.on():
			c.Add(name+".cooldowns", int64(m.stats.Ejections))
		}
		total += m.stats.Requests
		busiest = max(busiest, m.stats.Requests)
	}
	c.Add("pool.requests", int64(total))
	c.Add("pool.busiest_requests", int64(busiest))
	ej := 0
	for _, m := range s.members {
		ej += m.stats.Ejections
	}
	switch {
	case s.model.Ejection.Consecutive > 0:
		c.Add("pool.ejections", int64(ej))
	case s.model.Cooldown.on():
		c.Add("pool.cooldowns", int64(ej))
		c.Add("pool.unavailable", int64(s.allOut))
	}
}

// Capacity sums the members' capacities (CapacityProfile), as requests
// per second; nil when a member has none.
func (p *Pool) Capacity() []CapacityStep {
	profiles := make([][]CapacityStep, len(p.Members))
	for i, m := range p.Members {
		cp, ok := ModelAs[CapacityProfile](m.Server)
		if !ok {
			return nil
		}
		if profiles[i] = cp.Capacity(); len(profiles[i]) == 0 {
			return nil
		}
	}
	return combineCapacity(profiles, func(rates []float64) float64 {
		sum := 0.0
		for _, r := range rates {
			sum += r
		}
		return sum
	})
}

// combineCapacity merges step profiles into one, in requests per second:
// at every step of any profile, combine gives the rate from the rates of
// each profile there.
func combineCapacity(profiles [][]CapacityStep, combine func(rates []float64) float64) []CapacityStep {
	var ats []time.Duration
	for _, p := range profiles {
		for _, st := range p {
			ats = append(ats, st.At)
		}
	}
	slices.Sort(ats)
	ats = slices.Compact(ats)
	rates := make([]float64, len(profiles))
	var out []CapacityStep
	for _, at := range ats {
		for i, p := range profiles {
			rates[i] = rateAt(p, at)
		}
		r := combine(rates)
		if len(out) > 0 && out[len(out)-1].Requests == r {
			continue
		}
		out = append(out, CapacityStep{At: at, Requests: r, Per: time.Second})
	}
	return out
}

// rateAt is a profile's capacity at t, in requests per second (0 before
// its first step).
func rateAt(steps []CapacityStep, t time.Duration) float64 {
	r := 0.0
	for _, st := range steps {
		if st.At > t {
			break
		}
		r = 0
		if st.Per > 0 {
			r = st.Requests * float64(time.Second) / float64(st.Per)
		}
	}
	return r
}

// responseHeap is a binary min-heap of pending responses by time, ties by
// member (deterministic).
type responseHeap []pendingResponse

func (h responseHeap) less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	return h[a].member < h[b].member
}

func (h *responseHeap) push(r pendingResponse) {
	*h = append(*h, r)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

// pop removes and returns the earliest response; the heap must not be empty.
func (h *responseHeap) pop() pendingResponse {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && s.less(r, c) {
			c = r
		}
		if !s.less(c, i) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

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

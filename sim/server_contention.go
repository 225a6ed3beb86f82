package sim

import (
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// Contention is one row under optimistic concurrency, as in the AWS
// Architecture Blog's backoff study ("Exponential Backoff And Jitter"):
// every attempt reads the row's version, then writes with that version, and
// the write succeeds only if no other write committed since the read. Each
// message (the read's request and response, the write's request and
// response) takes its own network delay.
//
// The rules, for an attempt sent at t: four delays d1 (read request), d2
// (read response), d3 (write request) and d4 (write response) are drawn, in
// this order, from Network, at arrival. The read happens at r = t+d1 and
// sees every write committed before r (and, when d1 = 0, those committed
// at r before the attempt arrived); the client gets its answer at
// t+d1+d2 and sends the write at once, which reaches the server at
// w = t+d1+d2+d3. At w the write commits if no write it did not see
// committed in [r, w], and otherwise is a conflict (409,
// policies.Transient); the response reaches the client at w+d4. Writes due at the same instant are decided in
// the order their attempts arrived: the first commits, the others conflict.
// A client that stopped waiting (Request.GiveUpAt > 0) before t+d1+d2 never
// sends the write: only the read counts. A write that arrives after its
// client stopped waiting is still decided, and may commit.
//
// The decision at w depends on writes decided between the attempt's arrival
// and w, so Arrive leaves the write pending (Response.Pending) and Decide
// makes it.
type Contention struct {
	// Network is every message's one-way delay.
	Network Distribution
}

// Conflict is the answer to a write that lost the race: 409, transient.
var Conflict = Rejection{Status: http.StatusConflict, Class: policies.Transient}

// Validate reports a missing or invalid network delay.
func (c *Contention) Validate() error {
	return validateDistribution("contention: network", c.Network)
}

// NewServer returns the state of one run.
func (c *Contention) NewServer(rng *rand.Rand) Server {
	return &contentionState{network: forRun(c.Network), rng: rng, lastCommit: -1}
}

type contentionState struct {
	network Distribution // the model's, forRun
	rng     *rand.Rand
	// lastCommit is the time of the latest commit; -1 before the first.
	// Commits happen in time order, so a write read at r (after its
	// arrival) conflicts iff lastCommit >= r; one read at its arrival
	// conflicts iff commits grew since.
	lastCommit time.Duration
	commits    int // commits so far
	// pending holds the writes on their way, by ticket; free lists the
	// tickets whose writes were decided, for reuse. Both grow to the most
	// writes on their way at once, and no further.
	pending []pendingWrite
	free    []int32
	stats   contentionStats
}

// pendingWrite is a write on its way to the server.
type pendingWrite struct {
	read time.Duration // when its read happened
	back time.Duration // its response's network delay
	// atArrival is true when the read happened at the attempt's arrival
	// (no delay before it): it then saw the seen commits made so far,
	// those of its own instant included.
	atArrival bool
	seen      int
}

// Arrive performs the read and sends the write, whose decision is due when
// it reaches the server.
func (s *contentionState) Arrive(now time.Duration, req Request) Response {
	d1 := s.network.Sample(s.rng)
	d2 := s.network.Sample(s.rng)
	d3 := s.network.Sample(s.rng)
	d4 := s.network.Sample(s.rng)
	s.stats.Reads++
	read := now + d1
	sent := read + d2
	if req.GiveUpAt > 0 && req.GiveUpAt < sent {
		// The client has gone before the read's answer: no write. The
		// engine cuts this answer at GiveUpAt (it comes after it), and
		// counts it as rejected.
		return Response{Outcome: policies.Outcome{Class: policies.Transient}, At: sent}
	}
	t := takeTicket(&s.free, &s.pending)
	s.pending[t] = pendingWrite{read: read, back: d4, atArrival: d1 == 0, seen: s.commits}
	return Response{Pending: true, At: sent + d3, Ticket: t}
}

// Decide decides the write with the ticket, arriving at now.
func (s *contentionState) Decide(now time.Duration, ticket int32) Response {
	p := s.pending[ticket]
	s.free = append(s.free, ticket)
	s.stats.Writes++
	if p.atArrival && s.commits > p.seen || !p.atArrival && s.lastCommit >= p.read {
		s.stats.Conflicts++
		return Response{Outcome: Conflict.Outcome(), At: now + p.back}
	}
	s.lastCommit = now
	s.commits++
	return Response{At: now + p.back}
}

// contentionStats counts the reads and the writes that reached the server
// (an attempt is a read, then a write unless its client stopped waiting
// before the read's answer) and the writes that failed because another
// write committed after their read. Writes − Conflicts writes committed.
type contentionStats struct{ Reads, Writes, Conflicts int }

// ReportCounters reports the reads, writes and conflicts of the run:
// server.reads, server.writes and server.conflicts.
func (s *contentionState) ReportCounters(c *Counters) { s.stats.report(c) }

// report adds the counts to c.
func (st contentionStats) report(c *Counters) {
	c.Add("server.reads", int64(st.Reads))
	c.Add("server.writes", int64(st.Writes))
	c.Add("server.conflicts", int64(st.Conflicts))
}

// TimeScale is a contention server's timeline bucket: 100 ms, about ten
// message delays of the AWS study (its runs take 2 to 60 s).
func (c *Contention) TimeScale() time.Duration { return 100 * time.Millisecond }

// takeTicket returns a ticket for a request a server decides later: the
// last freed one, or a new slot at the end of items.
func takeTicket[T any](free *[]int32, items *[]T) int32 {
	if n := len(*free); n > 0 {
		t := (*free)[n-1]
		*free = (*free)[:n-1]
		return t
	}
	var zero T
	*items = append(*items, zero)
	return int32(len(*items) - 1)
}

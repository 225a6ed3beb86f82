package sim

import (
	"fmt"
	"time"
)

// PriorityOrder makes a Queue serve by priority: a free worker takes the
// oldest waiting request of the highest priority waiting (first come,
// first served within a level), and a full queue (QueueLimit) sheds the
// lowest priority first: a request that finds it full evicts the newest
// waiting request of the lowest priority below its own, and is rejected
// only when none is below it.
//
// A request that finds a worker free and nobody waiting is served at
// once. One that waits is left pending (Response.Pending): its start
// depends on requests that arrive later. With a queue limit (or
// DropAbandoned) every waiting request is looked at each time a worker is
// free, so long queues cost events; an evicted request's Reject reaches
// its client then, at the next time a worker is free after the eviction,
// not at the eviction itself (a pending request cannot be answered
// before its decision's time): a delay of at most the gap between two
// workers coming free. Without either, nothing leaves the queue but by a
// pick, and a request with k requests ahead of it cannot start before
// the (k+1)-th pick, whose time is known while the queue stands (the
// workers' free times, with the service draws made ahead in the order
// the starts will use them, as adaptive LIFO's forecast does): it sleeps
// until then.
type PriorityOrder struct {
	// On turns priority order on.
	On bool
}

// validate refuses the disciplines priority order does not combine with.
func (p PriorityOrder) validate(lifo AdaptiveLIFO, codel CoDel) error {
	switch {
	case !p.On:
		return nil
	case lifo.On():
		return fmt.Errorf("queue: priority order and adaptive LIFO are two orders; choose one")
	case codel.Interval > 0:
		return fmt.Errorf("queue: priority order with controlled delay is not modelled (which level's wait would the control law read?)")
	}
	return nil
}

// prioState is a priority-ordered queue's state in one run: the workers
// as in queueState, and the waiting requests in one line per priority.
type prioState struct {
	queueState
	reqs    []prioRequest // by ticket
	tickets []int32       // tickets free for reuse
	levels  []prioLevel   // highest priority first
	waiting int
	evicted int
	fc      pickForecast
}

type prioRequest struct {
	state  lifoStage // lifoGone: evicted
	p      Priority
	pos    int64 // its place in its level's line, counted from the level's first ever
	giveUp time.Duration
	at     time.Duration // once decided: when its answer reaches the client
}

// prioLevel is the line of one priority: tickets oldest first, from head;
// front is the place of line[head] (prioRequest.pos).
type prioLevel struct {
	p     Priority
	line  []int32
	head  int
	front int64
}

// Arrive serves a request at once when a worker is free and nobody waits;
// otherwise it queues it, evicting a lower one or rejecting it when full.
func (s *prioState) Arrive(now time.Duration, req Request) Response {
	s.advance(now)
	if s.startAt(now) == now { // nobody waits: advance left no free worker else
		return Response{At: s.serve(now, req.GiveUpAt)}
	}
	if limit := s.model.QueueLimit; limit > 0 && s.waiting >= limit {
		low := s.lowest()
		if low == nil || low.p >= req.Priority {
			s.stats.QueueFull++
			return Response{Outcome: s.reject.Outcome(), At: now + s.model.RejectAfter}
		}
		t := low.line[len(low.line)-1] // the newest of the lowest
		if low.line = low.line[:len(low.line)-1]; low.head == len(low.line) {
			low.line, low.head = low.line[:0], 0
		}
		s.reqs[t].state = lifoGone
		s.waiting--
		s.evicted++
	}
	t := takeTicket(&s.tickets, &s.reqs)
	l := s.level(req.Priority)
	s.reqs[t] = prioRequest{p: req.Priority, giveUp: req.GiveUpAt, pos: l.front + int64(len(l.line)-l.head)}
	l.line = append(l.line, t)
	s.waiting++
	return Response{Pending: true, At: s.wake(t), Ticket: t}
}

// Decide answers request t if a worker took it, skipped it or it was
// evicted by now; otherwise it leaves it pending until the next time a
// worker is free.
func (s *prioState) Decide(now time.Duration, t int32) Response {
	s.advance(now)
	r := &s.reqs[t]
	switch r.state {
	case lifoServed:
		s.tickets = append(s.tickets, t)
		return Response{At: r.at}
	case lifoSkipped:
		s.tickets = append(s.tickets, t)
		return Response{Outcome: s.reject.Outcome(), At: r.at}
	case lifoGone:
		s.tickets = append(s.tickets, t)
		return Response{Outcome: s.reject.Outcome(), At: now}
	}
	return Response{Pending: true, At: s.wake(t), Ticket: t}
}

// wake is the earliest time a worker may take waiting request t: the next time a worker is free, or, when nothing but a
// pick removes a waiting request, the pick after those of the requests
// ahead of it.
func (s *prioState) wake(t int32) time.Duration {
	free := s.nextFree()
	if s.model.QueueLimit > 0 || s.model.DropAbandoned || s.model.noForecast {
		return free
	}
	p := s.reqs[t].p
	ahead := 0
	for i := range s.levels {
		l := &s.levels[i]
		if l.p == p {
			ahead += int(s.reqs[t].pos - l.front)
			break
		}
		ahead += len(l.line) - l.head
	}
	s.fc.from(free, s.free, s.phase)
	at := s.fc.pick(ahead, s.service, s.rng)
	if s.phase < len(s.model.Phases)-1 {
		at = min(at, s.phaseEnd) // a phase change may add workers
	}
	return at
}

// advance lets the workers free at or before now take waiting requests,
// the highest priority first, the oldest first within it.
func (s *prioState) advance(now time.Duration) {
	for s.waiting > 0 {
		at := s.nextFree()
		if at > now {
			return
		}
		l := s.highest()
		t := l.line[l.head]
		l.front++
		if l.head++; l.head == len(l.line) {
			l.line, l.head = l.line[:0], 0
		}
		s.waiting--
		r := &s.reqs[t]
		if s.model.DropAbandoned && r.giveUp > 0 && at > r.giveUp {
			s.stats.Dropped++
			r.state, r.at = lifoSkipped, at
			continue
		}
		r.state, r.at = lifoServed, s.serve(at, r.giveUp)
	}
}

// level returns the line of priority p, adding it in order.
func (s *prioState) level(p Priority) *prioLevel {
	i := 0
	for i < len(s.levels) && s.levels[i].p > p {
		i++
	}
	if i == len(s.levels) || s.levels[i].p != p {
		s.levels = append(s.levels, prioLevel{})
		copy(s.levels[i+1:], s.levels[i:])
		s.levels[i] = prioLevel{p: p}
	}
	return &s.levels[i]
}

// highest and lowest return the highest and lowest lines with a request
// waiting; nil if none.
func (s *prioState) highest() *prioLevel {
	for i := range s.levels {
		if l := &s.levels[i]; l.head < len(l.line) {
			return l
		}
	}
	return nil
}

func (s *prioState) lowest() *prioLevel {
	for i := len(s.levels) - 1; i >= 0; i-- {
		if l := &s.levels[i]; l.head < len(l.line) {
			return l
		}
	}
	return nil
}

// serve gives the worker free first a request at at, drawing its
// service, and returns when its answer is done.
func (s *prioState) serve(at, giveUp time.Duration) time.Duration {
	return s.work(at, s.fc.take(at, s.service, s.rng), giveUp)
}

// ReportCounters reports the queue's counters and server.priority_evicted,
// the waiting requests evicted for higher ones.
func (s *prioState) ReportCounters(c *Counters) {
	s.queueState.ReportCounters(c)
	c.Add("server.priority_evicted", int64(s.evicted))
}

package sim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"
)

// AdaptiveLIFO is the queue discipline of Facebook's "Fail at Scale":
// while the queue is not congested, workers take the oldest waiting
// request (first come, first served); once the queue has not been empty
// for Interval, they take the newest, whose client is the likeliest to
// still be waiting, and the old ones wait on (and time out). The state is
// read at each pick: a worker freed at t serves newest first iff requests
// have waited without a break since t − Interval or earlier.
//
// A request that finds a worker free and nobody waiting is served at
// once, as under first come, first served. One that waits is left pending
// (Response.Pending): its start depends on requests that arrive later,
// so the queue decides it at each time a worker may take it (the next
// time a worker is free, or its CoDelAtArrival limit) and leaves it
// pending again until one does. With controlled delay or DropAbandoned,
// each waiting request is thus looked at once per pick while it waits
// (long queues cost events); without, a forecast of the picks wakes it
// only at the first pick that could take it (pickForecast).
type AdaptiveLIFO struct {
	// Interval > 0 turns the discipline on; 0 means first come, first
	// served.
	Interval time.Duration
}

// On reports whether the discipline is adaptive LIFO.
func (a AdaptiveLIFO) On() bool { return a.Interval > 0 }

func (a AdaptiveLIFO) validate() error {
	if a.Interval < 0 {
		return fmt.Errorf("queue: adaptive LIFO needs an interval > 0 (got %v)", a.Interval)
	}
	return nil
}

// lifoState is an adaptive-LIFO queue's state in one run: the workers as
// in queueState, and the requests waiting, in arrival order.
type lifoState struct {
	queueState
	reqs    []lifoRequest // by ticket
	tickets []int32       // tickets free for reuse
	// line holds the waiting requests in arrival order from line[head]; an
	// entry is stale once its request left the queue (codel drop).
	line    []lifoEntry
	head    int
	front   int64         // pos of line[head]
	waiting int           // requests waiting (live entries of line)
	since   time.Duration // with waiting > 0: the queue has not been empty since
	seq     uint64        // arrivals that waited so far
	// LIFO counts the picks made newest first.
	lifo int
	fc   pickForecast
}

// pickForecast saves wake-ups (adaptive LIFO's, and the priority
// queue's: PriorityOrder) when nothing removes a waiting request but a
// pick (no controlled delay, no DropAbandoned): the line then has no holes,
// and a request with m requests older and n newer than it is taken at the
// (m+1)-th pick if that comes before the queue is congested, else n picks
// after the first congested one, or later (see wake). The pick times
// are known while the queue does not empty: the workers' free times, with
// the service times drawn ahead in the order the picks will use them (the
// draws are the ones start would make, so the run is the same). A request
// then sleeps until that pick (or the next phase change) instead of waking
// at every pick.
type pickForecast struct {
	ahead   []time.Duration // service draws made ahead, for the next starts in order
	picks   []time.Duration // the next pick times, from now, while the queue stands
	sim     durationHeap    // the workers' free times after picks
	phase   int             // the phase picks was computed in
	invalid bool
}

// from starts the forecast anew from the workers' free times, unless it
// still holds: made in this phase, its next pick at free.
func (f *pickForecast) from(free time.Duration, workers durationHeap, phase int) {
	if f.invalid || f.phase != phase || len(f.picks) == 0 || f.picks[0] != free {
		f.picks = f.picks[:0]
		f.sim = append(f.sim[:0], workers...)
		f.phase, f.invalid = phase, false
	}
}

// pick returns the time of the j-th pick from now (0: the next), as long
// as the queue stands, extending the forecast as needed.
func (f *pickForecast) pick(j int, service Distribution, rng *rand.Rand) time.Duration {
	for len(f.picks) <= j {
		n := len(f.picks)
		for len(f.ahead) <= n {
			f.ahead = append(f.ahead, service.Sample(rng))
		}
		at := f.sim[0]
		f.picks = append(f.picks, at)
		f.sim.replaceTop(at + f.ahead[n])
	}
	return f.picks[j]
}

// take returns the service time of a request a worker starts at at: the
// first draw made ahead, or a new draw; a start the forecast did not
// expect ends it.
func (f *pickForecast) take(at time.Duration, service Distribution, rng *rand.Rand) time.Duration {
	if len(f.ahead) == 0 {
		f.invalid = true
		return service.Sample(rng)
	}
	d := f.ahead[0]
	f.ahead = f.ahead[1:]
	if len(f.picks) > 0 && f.picks[0] == at {
		f.picks = f.picks[1:]
	} else {
		f.invalid = true
	}
	return d
}

// lifoRequest is a request the queue has left pending.
type lifoRequest struct {
	state   lifoStage
	seq     uint64        // its place in line (lifoEntry.seq)
	pos     int64         // its place from the line's front, while it waits (with the forecast: front + the requests older)
	giveUp  time.Duration // Request.GiveUpAt
	arrived time.Duration
	dropAt  time.Duration // its controlled-delay limit (CoDelAtArrival); 0 for none
	at      time.Duration // once taken: when its answer reaches the client
}

type lifoStage uint8

const (
	lifoWaiting lifoStage = iota
	lifoServed            // a worker took it; answered at at
	lifoSkipped           // failed at its turn (at): DropAbandoned or controlled delay
	lifoGone              // dropped at its controlled-delay limit (CoDelAtArrival)
)

type lifoEntry struct {
	ticket int32
	seq    uint64
}

// Arrive serves a request at once when a worker is free and nobody waits;
// otherwise it rejects it (queue full) or leaves it waiting.
func (s *lifoState) Arrive(now time.Duration, req Request) Response {
	s.advance(now)
	if s.startAt(now) == now { // nobody waits: advance left no free worker else
		if s.model.CoDel.Rule == CoDelControlLaw && s.model.CoDel.Interval > 0 {
			s.law.dequeue(now, now) // no wait: it only resets the law
		}
		return Response{At: s.start(now, req.GiveUpAt)}
	}
	if limit := s.model.QueueLimit; limit > 0 && s.waiting >= limit {
		s.stats.QueueFull++
		return Response{Outcome: s.reject.Outcome(), At: now + s.model.RejectAfter}
	}
	if s.waiting == 0 {
		s.since = now
	}
	r := lifoRequest{seq: s.seq, giveUp: req.GiveUpAt, arrived: now, pos: s.front + int64(len(s.line)-s.head)}
	if c := s.model.CoDel; c.Interval > 0 && c.Rule == CoDelAtArrival {
		r.dropAt = now + c.limit(now-s.since)
	}
	t := takeTicket(&s.tickets, &s.reqs)
	s.reqs[t] = r
	s.line = append(s.line, lifoEntry{ticket: t, seq: s.seq})
	s.seq++
	s.waiting++
	return s.pending(t, s.wake(&s.reqs[t]))
}

// pending leaves request t waiting until the next time a worker is free
// (free) or its controlled-delay limit, whichever comes first.
func (s *lifoState) pending(t int32, free time.Duration) Response {
	at := free
	if d := s.reqs[t].dropAt; d > 0 && d < at {
		at = d
	}
	return Response{Pending: true, At: at, Ticket: t}
}

// Decide answers request t if a worker took it (or skipped it) by now,
// drops it at its controlled-delay limit, or leaves it pending.
func (s *lifoState) Decide(now time.Duration, t int32) Response {
	s.advance(now)
	r := &s.reqs[t]
	switch r.state {
	case lifoServed:
		s.tickets = append(s.tickets, t)
		return Response{At: r.at}
	case lifoSkipped:
		s.tickets = append(s.tickets, t)
		return Response{Outcome: s.reject.Outcome(), At: r.at}
	}
	if r.dropAt > 0 && now >= r.dropAt {
		r.state = lifoGone
		if s.waiting--; s.waiting == 0 {
			s.line, s.head = s.line[:0], 0
		}
		s.stats.CoDelDropped++
		s.tickets = append(s.tickets, t)
		return Response{Outcome: s.reject.Outcome(), At: now}
	}
	return s.pending(t, s.wake(r))
}

// wake is the earliest time a worker may take the waiting request r: the
// next time a worker is free, or a later pick by the forecast.
func (s *lifoState) wake(r *lifoRequest) time.Duration {
	free := s.nextFree()
	if s.model.CoDel.Interval > 0 || s.model.DropAbandoned || s.model.noForecast {
		return free
	}
	s.fc.from(free, s.free, s.phase)
	// Picks before the queue has stood for the interval (congested) take
	// the oldest, later ones the newest, until the queue empties: r goes
	// after its older requests if that comes first, else after the picks
	// up to congested and then its newer ones (more may arrive).
	older := int(r.pos - s.front)
	newer := s.waiting - 1 - older
	congested := s.since + s.model.LIFO.Interval
	var k int
	switch {
	case s.forecast(0) >= congested:
		k = newer
	case s.forecast(older) < congested:
		k = older
	default:
		k = sort.Search(older, func(j int) bool { return s.fc.picks[j] >= congested }) + newer
	}
	at := s.forecast(k)
	if s.phase < len(s.model.Phases)-1 {
		at = min(at, s.phaseEnd) // a phase change may add workers
	}
	return at
}

// forecast returns the time of the j-th pick from now (pickForecast.pick).
func (s *lifoState) forecast(j int) time.Duration { return s.fc.pick(j, s.service, s.rng) }

// nextFree is the earliest time a worker is free, after the phase changes
// before it (startAt's rules: no request starts before it).
func (s *queueState) nextFree() time.Duration { return s.startAt(0) }

// advance lets the workers free at or before now take waiting requests:
// the newest while the queue is congested, else the oldest. Every waiting
// request is pending until the next time a worker is free, so a pick is
// never missed: the picks due now are made at the first event of now.
func (s *lifoState) advance(now time.Duration) {
	for s.waiting > 0 {
		at := s.nextFree()
		if at > now {
			return
		}
		stood := at - s.since
		newest := stood >= s.model.LIFO.Interval
		t := s.take(newest)
		r := &s.reqs[t]
		if s.codelDrops(at, stood, r.arrived) {
			s.stats.CoDelDropped++
			r.state, r.at = lifoSkipped, at
			continue
		}
		if s.model.DropAbandoned && r.giveUp > 0 && at > r.giveUp {
			s.stats.Dropped++
			r.state, r.at = lifoSkipped, at
			continue
		}
		if newest {
			s.lifo++
		}
		r.state, r.at = lifoServed, s.start(at, r.giveUp)
	}
}

// codelDrops reports whether controlled delay decided at its pick drops a
// request that arrived at arrived, picked at at from a queue that has not
// been empty for stood.
func (s *lifoState) codelDrops(at, stood, arrived time.Duration) bool {
	switch c := s.model.CoDel; {
	case c.Interval == 0:
		return false
	case c.Rule == CoDelAtDequeue:
		return at-arrived > c.limit(stood)
	case c.Rule == CoDelControlLaw:
		return s.law.dequeue(at, arrived)
	}
	return false
}

// take removes the newest or the oldest waiting request from the line.
func (s *lifoState) take(newest bool) int32 {
	for {
		var e lifoEntry
		if newest {
			e = s.line[len(s.line)-1]
			s.line = s.line[:len(s.line)-1]
		} else {
			e = s.line[s.head]
			s.head++
			s.front++
		}
		if r := &s.reqs[e.ticket]; r.seq == e.seq && r.state == lifoWaiting {
			s.waiting--
			if s.waiting == 0 {
				s.line, s.head = s.line[:0], 0
			} else if s.head > len(s.line)/2 {
				n := copy(s.line, s.line[s.head:])
				s.line, s.head = s.line[:n], 0
			}
			return e.ticket
		}
	}
}

// start gives the worker free first a request at at, and returns when
// its answer is done.
func (s *lifoState) start(at, giveUp time.Duration) time.Duration {
	return s.work(at, s.fc.take(at, s.service, s.rng), giveUp)
}

// ReportCounters reports the queue's counters and server.lifo, the
// requests taken newest first.
func (s *lifoState) ReportCounters(c *Counters) {
	s.queueState.ReportCounters(c)
	c.Add("server.lifo", int64(s.lifo))
}

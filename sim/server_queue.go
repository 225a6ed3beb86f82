package sim

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// Queue is a server with a fixed number of workers serving requests first
// come, first served: latency grows with load. Every arriving request takes
// the worker that becomes free first; if all are busy it waits its turn,
// possibly in a bounded queue. Because service is first come, first served,
// a request's start and completion are known when it arrives:
//
//	start      = max(arrival, the earliest time a worker is free)
//	completion = start + Service draw
//
// The response is a success at completion; the engine cuts it at the
// client's attempt timeout or budget end if that comes first (the work is
// then wasted: the counter server.wasted). See docs/scenarios.md for the exact
// rules, including how concurrency phases apply.
type Queue struct {
	// Concurrency is the number of workers; used when Phases is empty, and
	// must then be > 0 (and 0 when Phases is set).
	Concurrency int
	// Phases, if set, change the number of workers over time, one after the
	// other from t = 0, to model an incident; the last lasts forever.
	Phases []WorkerPhase
	// Service is the time a worker takes for one request.
	Service Distribution
	// QueueLimit, if > 0, is the most requests that may wait for a worker;
	// a request that would have to wait when QueueLimit are waiting is
	// rejected at once with Reject. 0 means the queue has no bound.
	QueueLimit int
	// Reject is the outcome of a request rejected because the queue is
	// full, or skipped by DropAbandoned. The zero Rejection means 529,
	// Capacity.
	Reject Rejection
	// RejectAfter is when a queue-full rejection reaches the client, after
	// the request's arrival (>= 0).
	RejectAfter time.Duration
	// DropAbandoned skips a request whose client has stopped waiting
	// before the request's start (start > Request.GiveUpAt): it takes no
	// worker time. Without it the server works on such requests anyway.
	DropAbandoned bool
	// CoDel, if set (Interval > 0), bounds the time requests wait, as
	// controlled delay does (see CoDel, server_queue_codel.go).
	CoDel CoDel
	// LIFO, if on, serves the newest waiting request first while the
	// queue is congested (see AdaptiveLIFO); off, the queue is first
	// come, first served.
	LIFO AdaptiveLIFO
	// Priority, if on, serves the highest priority first and sheds the
	// lowest first (see PriorityOrder).
	Priority PriorityOrder

	// observe, set on a copy by ObservedService, is told of the work done.
	observe ServiceObserver

	// noForecast turns the adaptive-LIFO forecast off (pickForecast); only
	// tests set it (withoutLIFOForecast, export_test.go), to check that
	// the forecast changes nothing but the events.
	noForecast bool
}

// WorkerPhase is one stretch of a Queue's concurrency.
type WorkerPhase struct {
	// Duration is the phase's length; 0 in the last phase means "forever".
	Duration time.Duration
	// Concurrency is the number of workers during the phase (>= 0; > 0 in
	// the last phase).
	Concurrency int
}

// MaxConcurrency bounds a Queue's workers in any phase.
const MaxConcurrency = 1 << 20

// overloaded is the default rejection: 529, Capacity.
var overloaded = Rejection{Status: 529, Class: policies.Capacity}

// orOverloaded returns r, or 529 Capacity for the zero Rejection.
func (r Rejection) orOverloaded() Rejection {
	if r == (Rejection{}) {
		return overloaded
	}
	return r
}

// Validate reports the first problem that would make the model meaningless.
func (q *Queue) Validate() error {
	switch {
	case len(q.Phases) == 0 && (q.Concurrency <= 0 || q.Concurrency > MaxConcurrency):
		return fmt.Errorf("queue: concurrency must be between 1 and %d (got %d)", MaxConcurrency, q.Concurrency)
	case len(q.Phases) > 0 && q.Concurrency != 0:
		return fmt.Errorf("queue: set concurrency or phases, not both")
	case q.QueueLimit < 0:
		return fmt.Errorf("queue: negative queue limit %d", q.QueueLimit)
	case q.RejectAfter < 0:
		return fmt.Errorf("queue: negative reject-after %v", q.RejectAfter)
	case q.Reject != (Rejection{}) && q.Reject.Class == policies.Success:
		return fmt.Errorf("queue: a rejection cannot be a success")
	}
	if err := q.CoDel.validate(); err != nil {
		return err
	}
	if err := q.LIFO.validate(); err != nil {
		return err
	}
	if err := q.Priority.validate(q.LIFO, q.CoDel); err != nil {
		return err
	}
	if err := validateDistribution("queue: service time", q.Service); err != nil {
		return err
	}
	if err := validateWorkerPhases(q.Phases); err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	return nil
}

func validateWorkerPhases(phases []WorkerPhase) error {
	for i, p := range phases {
		last := i == len(phases)-1
		switch {
		case p.Duration < 0:
			return fmt.Errorf("phase %d: negative duration %v", i, p.Duration)
		case p.Duration == 0 && !last:
			return fmt.Errorf("phase %d: only the last phase may last forever (duration 0)", i)
		case p.Concurrency < 0 || p.Concurrency > MaxConcurrency:
			return fmt.Errorf("phase %d: concurrency must be between 0 and %d (got %d)", i, MaxConcurrency, p.Concurrency)
		case p.Concurrency == 0 && last:
			return fmt.Errorf("phase %d: the last phase needs concurrency > 0 (requests would wait forever)", i)
		}
	}
	return nil
}

// NewServer returns the workers' state of one run.
func (q *Queue) NewServer(rng *rand.Rand) Server {
	s := &queueState{model: q, rng: rng, service: forRun(q.Service), reject: q.Reject.orOverloaded()}
	s.law = controlLaw{target: q.CoDel.Target, interval: q.CoDel.Interval}
	most := q.Concurrency
	for _, p := range q.Phases {
		most = max(most, p.Concurrency)
	}
	s.free = make(durationHeap, 0, most)
	if len(q.Phases) == 0 {
		for range q.Concurrency {
			s.free = append(s.free, 0) // all equal: a valid heap
		}
	} else {
		s.phaseEnd = q.Phases[0].Duration
		s.setWorkers(0, q.Phases[0].Concurrency)
	}
	if q.LIFO.On() {
		return &lifoState{queueState: *s}
	}
	if q.Priority.On {
		return &prioState{queueState: *s}
	}
	if q.QueueLimit > 0 {
		s.waiting = make(durationHeap, 0, min(q.QueueLimit, 1<<16))
	}
	return s
}

// queueState is a Queue's state in one run.
type queueState struct {
	model    *Queue
	rng      *rand.Rand
	service  Distribution // forRun(model.Service)
	reject   Rejection
	free     durationHeap  // when each worker is free (taking no new request before)
	waiting  durationHeap  // starts of the requests waiting (only with a queue limit)
	phase    int           // index of the current phase (with Phases)
	phaseEnd time.Duration // when the current phase ends; unused in the last
	// With CoDel: the queue is empty from queuedUntil on (the latest time
	// a request arrived so far waits until), and has not been empty since
	// queuedSince.
	queuedUntil, queuedSince time.Duration
	law                      controlLaw // with CoDelControlLaw
	stats                    queueStats
}

// setWorkers changes the number of workers to n at time at: new workers are
// free from at; removed workers are those that become free soonest (idle
// ones first), so that from at on a request starts only when fewer than n
// requests are in service. Work already given to a removed worker is done.
func (s *queueState) setWorkers(at time.Duration, n int) {
	for len(s.free) < n {
		s.free.push(at)
	}
	for len(s.free) > n {
		s.free.pop()
	}
}

// startAt returns when a request arriving at now starts, applying first
// every phase change at or before that start. Service is first come, first
// served, so no later arrival starts earlier: a change at T <= start is
// applied to the workers as they are at T, even when T is after now (a
// change reaches requests already waiting, as it would in a real queue).
// With no worker left (a phase with 0), every change up to the next worker
// is applied.
func (s *queueState) startAt(now time.Duration) time.Duration {
	phases := s.model.Phases
	last := len(phases) - 1
	for {
		if len(s.free) > 0 && (s.phase >= last || max(now, s.free[0]) < s.phaseEnd) {
			return max(now, s.free[0])
		}
		at := s.phaseEnd
		s.phase++
		s.phaseEnd += phases[s.phase].Duration
		s.setWorkers(at, phases[s.phase].Concurrency)
	}
}

// Arrive decides a request arriving at now (see Queue).
func (s *queueState) Arrive(now time.Duration, req Request) Response {
	start := s.startAt(now)
	// leave is when the request leaves the queue: at its start, or, when
	// controlled delay drops it (codelDrop), at its limit or at the start.
	leave, codelDrop := start, false
	c := s.model.CoDel
	if c.Interval > 0 {
		leave, codelDrop = s.codel(now, start)
	}
	if limit := s.model.QueueLimit; limit > 0 {
		for len(s.waiting) > 0 && s.waiting[0] <= now {
			s.waiting.pop()
		}
		if start > now {
			if len(s.waiting) >= limit {
				s.stats.QueueFull++
				return Response{Outcome: s.reject.Outcome(), At: now + s.model.RejectAfter}
			}
			s.waiting.push(leave)
		}
	}
	if c.Interval > 0 {
		if c.Rule == CoDelControlLaw {
			codelDrop = s.law.dequeue(start, now)
		} else if start > now {
			if s.queuedUntil <= now {
				s.queuedSince = now
			}
			s.queuedUntil = max(s.queuedUntil, leave)
		}
		if codelDrop {
			// It leaves the queue failed and takes no worker time.
			s.stats.CoDelDropped++
			return Response{Outcome: s.reject.Outcome(), At: leave}
		}
	}
	if s.model.DropAbandoned && req.GiveUpAt > 0 && start > req.GiveUpAt {
		// The client has gone when the request's turn comes: it is skipped
		// then and the worker takes the next one. The client sees its own
		// timeout; the engine cuts this response at GiveUpAt.
		s.stats.Dropped++
		return Response{Outcome: s.reject.Outcome(), At: start}
	}
	return Response{At: s.work(start, s.service.Sample(s.rng), req.GiveUpAt)}
}

// codel returns when a request arriving at now, whose turn comes at start,
// leaves the queue, and whether Fail at Scale's test drops it (with the
// control law, leave is start and the law decides once the request is
// accepted). A request that waits is dequeued at its start: service is
// first come, first served and a drop takes no worker time. The queue has
// not been empty from queuedSince (or now) until then, since the request
// itself waits from now on: so the test at dequeue is known at arrival.
func (s *queueState) codel(now, start time.Duration) (leave time.Duration, drop bool) {
	c := s.model.CoDel
	if start == now || c.Rule == CoDelControlLaw {
		return start, false
	}
	since := s.queuedSince
	if s.queuedUntil <= now {
		since = now // the queue was empty until this request
	}
	if c.Rule == CoDelAtArrival {
		if limit := c.limit(now - since); start-now > limit {
			return now + limit, true
		}
		return start, false
	}
	return start, start-now > c.limit(start-since)
}

// queueStats is what a queue counts in a run.
type queueStats struct {
	// Served counts requests given worker time; BusyTime is the worker
	// time they took.
	Served   int
	BusyTime time.Duration
	// Wasted counts requests served though their client had stopped
	// waiting before the response (its attempt timeout or budget end);
	// WastedTime is the worker time they took.
	Wasted     int
	WastedTime time.Duration
	// Dropped counts requests skipped (DropAbandoned) because their client
	// had gone before their turn came.
	Dropped int
	// QueueFull counts requests rejected because the queue was full.
	QueueFull int
	// Cancelled counts requests cancelled (Canceller) before their answer:
	// the queue fixed their start and end when they arrived, so it
	// finishes them anyway.
	Cancelled int
	// CoDelDropped counts requests that controlled delay failed.
	CoDelDropped int
}

// Cancel counts a request cancelled before its answer (see queueStats).
func (s *queueState) Cancel(now time.Duration, resp Response) {
	if resp.At > now {
		s.stats.Cancelled++
	}
}

// ReportCounters reports what the queue counted: server.served,
// server.busy_time, server.wasted, server.wasted_time, server.dropped,
// server.queue_full, server.cancelled (when a hedge cancelled a request),
// and with CoDel server.codel_dropped.
func (s *queueState) ReportCounters(c *Counters) {
	s.stats.report(c)
	if s.model.CoDel.Interval > 0 {
		c.Add("server.codel_dropped", int64(s.stats.CoDelDropped))
	}
}

// report adds the counts to c.
func (st queueStats) report(c *Counters) {
	c.Add("server.served", int64(st.Served))
	c.Add("server.busy_time", int64(st.BusyTime))
	c.Add("server.wasted", int64(st.Wasted))
	c.Add("server.wasted_time", int64(st.WastedTime))
	c.Add("server.dropped", int64(st.Dropped))
	c.Add("server.queue_full", int64(st.QueueFull))
	if st.Cancelled > 0 { // only runs that hedge cancel
		c.Add("server.cancelled", int64(st.Cancelled))
	}
}

// durationHeap is a binary min-heap of durations.
type durationHeap []time.Duration

func (h *durationHeap) push(d time.Duration) {
	*h = append(*h, d)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p] <= d {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = d
}

// pop removes the smallest value; the heap must not be empty.
func (h *durationHeap) pop() {
	s := *h
	n := len(s) - 1
	last := s[n]
	*h = s[:n]
	if n > 0 {
		h.siftDown(last)
	}
}

// replaceTop replaces the smallest value with d; the heap must not be empty.
func (h *durationHeap) replaceTop(d time.Duration) { h.siftDown(d) }

// siftDown puts d at the root and moves it down to its place.
func (h durationHeap) siftDown(d time.Duration) {
	n := len(h)
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r] < h[c] {
			c = r
		}
		if d <= h[c] {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = d
}

// Capacity returns, per phase of workers, the requests the workers can
// serve per second at the mean service time; nil when the mean is not
// known (a Distribution of another type) or is 0.
func (q *Queue) Capacity() []CapacityStep {
	mean, ok := MeanOf(q.Service)
	if !ok || mean <= 0 {
		return nil
	}
	perSecond := func(workers int) float64 { return float64(workers) * float64(time.Second) / float64(mean) }
	if len(q.Phases) == 0 {
		return []CapacityStep{{Requests: perSecond(q.Concurrency), Per: time.Second}}
	}
	var steps []CapacityStep
	at := time.Duration(0)
	for _, p := range q.Phases {
		steps = append(steps, CapacityStep{At: at, Requests: perSecond(p.Concurrency), Per: time.Second})
		if p.Duration == 0 {
			break
		}
		at += p.Duration
	}
	return steps
}

// WorkerPhasesFromCSV reads "start,concurrency" rows into a queue's worker phases (see server_trace.go). The
// last row's concurrency must be > 0.
func WorkerPhasesFromCSV(r io.Reader) ([]WorkerPhase, error) {
	rows, err := readTrace(r, "concurrency")
	if err != nil {
		return nil, err
	}
	phases := make([]WorkerPhase, len(rows))
	for i, row := range rows {
		if row.value > MaxConcurrency {
			return nil, fmt.Errorf("capacity trace: line %d: concurrency %d is more than %d", row.line, row.value, MaxConcurrency)
		}
		phases[i] = WorkerPhase{Duration: row.duration, Concurrency: row.value}
	}
	if last := rows[len(rows)-1]; last.value == 0 {
		return nil, fmt.Errorf("capacity trace: line %d: the last concurrency must be > 0 (it holds for ever)", last.line)
	}
	return phases, nil
}

var _ ServiceModel = (*Queue)(nil)

// MeanService implements ServiceModel.
func (q *Queue) MeanService() (time.Duration, bool) { return MeanOf(q.Service) }

// ObservedService implements ServiceModel.
func (q *Queue) ObservedService(observe ServiceObserver) ServerModel {
	c := *q
	c.observe = observe
	return &c
}

// served tells the model's observer, if any, of a worker's time from start
// to done for a request whose client stops waiting at giveUp (0: never).
// work gives the worker free first a request at start for service, and
// returns when its answer is done (wasted if after giveUp, when > 0).
func (s *queueState) work(start, service, giveUp time.Duration) time.Duration {
	done := start + service
	s.free.replaceTop(done)
	s.stats.Served++
	s.stats.BusyTime += service
	if giveUp > 0 && done > giveUp {
		s.stats.Wasted++
		s.stats.WastedTime += service
	}
	s.served(start, done, giveUp)
	return done
}

func (s *queueState) served(start, done, giveUp time.Duration) {
	if f := s.model.observe; f != nil {
		f(start, done, giveUp > 0 && done > giveUp)
	}
}

package sim

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/policies"
)

// lifoAnswer is what a driven request received: when, and whether a success.
type lifoAnswer struct {
	At time.Duration
	OK bool
}

// driveQueue plays arrivals (times in order) against s as the engine does:
// a pending request is decided at the time its answer named, events in
// (time, insertion) order; it returns each arrival's answer and how many
// times Decide was called.
func driveQueue(t *testing.T, s Server, arrivals []time.Duration) ([]lifoAnswer, int) {
	t.Helper()
	type pend struct {
		at     time.Duration
		seq    int
		req    int
		ticket int32
	}
	answers := make([]lifoAnswer, len(arrivals))
	var q []pend
	seq, decides := 0, 0
	settle := func(i int, now time.Duration, r Response) {
		if r.At < now {
			t.Fatalf("request %d: answer at %v, before %v", i, r.At, now)
		}
		if r.Pending {
			p := pend{r.At, seq, i, r.Ticket}
			seq++
			k, _ := slices.BinarySearchFunc(q, p, func(a, b pend) int {
				if a.at != b.at {
					return cmp.Compare(a.at, b.at)
				}
				return cmp.Compare(a.seq, b.seq)
			})
			q = slices.Insert(q, k, p)
			return
		}
		answers[i] = lifoAnswer{r.At, r.Outcome.Class == policies.Success}
	}
	next := 0
	for next < len(arrivals) || len(q) > 0 {
		if len(q) > 0 && (next == len(arrivals) || q[0].at <= arrivals[next]) {
			p := q[0]
			q = q[1:]
			decides++
			settle(p.req, p.at, s.(Decider).Decide(p.at, p.ticket))
			continue
		}
		settle(next, arrivals[next], s.Arrive(arrivals[next], Request{}))
		next++
	}
	return answers, decides
}

// Worked by hand: one worker, 10 ms per request. A arrives at 0 to an
// empty queue and is served at once; B, C, D (1, 2, 3 ms) and E (12 ms)
// wait. At 10 ms the queue has stood 9 ms, less than the 15 ms interval:
// the oldest, B, goes first. From 20 ms it has stood 15 ms or more: the
// newest goes first, E, then D, then C. First come, first served (a long
// interval) serves them in arrival order.
func TestQueueLIFOServesNewestWhenCongested(t *testing.T) {
	ms := time.Millisecond
	arrivals := []time.Duration{0, 1 * ms, 2 * ms, 3 * ms, 12 * ms}
	for _, c := range []struct {
		interval time.Duration
		want     []time.Duration // answers of A, B, C, D, E
		lifo     int64
	}{
		{15 * ms, []time.Duration{10 * ms, 20 * ms, 50 * ms, 40 * ms, 30 * ms}, 3},
		{time.Hour, []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms, 50 * ms}, 0},
	} {
		q := &Queue{Concurrency: 1, Service: Fixed(10 * ms), LIFO: AdaptiveLIFO{Interval: c.interval}}
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		s := q.NewServer(ServerRand(1))
		if r := s.Arrive(0, Request{}); r.Pending || r.At != 10*ms {
			t.Fatalf("interval %v: arrival to an empty queue: %+v, want served at once (answer at 10ms)", c.interval, r)
		}
		got, _ := driveQueue(t, s, arrivals[1:])
		for i, a := range got {
			if !a.OK || a.At != c.want[i+1] {
				t.Errorf("interval %v: request %c: %+v, want success at %v", c.interval, 'B'+i, a, c.want[i+1])
			}
		}
		cs := countersOf(s.(CounterReporter).ReportCounters)
		if v, _ := cs.Get("server.lifo"); v != c.lifo {
			t.Errorf("interval %v: server.lifo %d, want %d", c.interval, v, c.lifo)
		}
		if v, _ := cs.Get("server.served"); v != 5 {
			t.Errorf("interval %v: server.served %d, want 5", c.interval, v)
		}
	}
}

// With a long interval the discipline is first come, first served: over a
// random run with two workers, every answer is the plain queue's (the
// service draws are made in the same order, at each start), without
// controlled delay and with each of its rules (decided at the picks here,
// at arrival by the plain queue).
func TestQueueLIFOLongIntervalIsFIFO(t *testing.T) {
	ms := time.Millisecond
	rng := ServerRand(9)
	var arrivals []time.Duration
	now := time.Duration(0)
	for range 2000 {
		now += time.Duration(rng.ExpFloat64() * float64(4*ms))
		arrivals = append(arrivals, now)
	}
	codels := []CoDel{{}}
	for _, r := range []CoDelRule{CoDelAtDequeue, CoDelAtArrival, CoDelControlLaw} {
		codels = append(codels, CoDel{Target: 5 * ms, Interval: 20 * ms, Rule: r})
	}
	for _, c := range codels {
		fifo := &Queue{Concurrency: 2, Service: Fixed(9 * ms), CoDel: c}
		lifo := &Queue{Concurrency: 2, Service: Fixed(9 * ms), CoDel: c, LIFO: AdaptiveLIFO{Interval: time.Hour}}
		f := fifo.NewServer(ServerRand(1))
		want := make([]lifoAnswer, len(arrivals))
		failed := 0
		for i, a := range arrivals {
			r := f.Arrive(a, Request{})
			want[i] = lifoAnswer{r.At, r.Outcome.Class == policies.Success}
			if !want[i].OK {
				failed++
			}
		}
		got, decides := driveQueue(t, lifo.NewServer(ServerRand(1)), arrivals)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("codel %+v: request %d (arrived %v): answer %v, first come first served %v", c, i, arrivals[i], got[i], want[i])
			}
		}
		if decides == 0 || c.Interval > 0 && failed == 0 {
			t.Fatalf("codel %+v: %d decisions, %d failed: the test shows nothing", c, decides, failed)
		}
	}
}

// Controlled delay with adaptive LIFO: a request waits at most its limit,
// then fails, and a request waiting beyond its client's give-up is skipped
// with DropAbandoned. One worker, 10 ms each; codel 5 ms/20 ms.
func TestQueueLIFOCoDelAndDrops(t *testing.T) {
	ms := time.Millisecond
	// 0: served at once (10); 2: waits, taken at 10 (20); 4: taken at 20
	// (30), the queue having stood 18 ms; 6: decided at arrival, its limit
	// is 20 ms and it fails at 26 ms, the worker busy until 30; decided at
	// its pick (30 ms), the queue has stood 28 ms and it has waited 24 ms,
	// more than the 5 ms target: it fails at 30.
	for rule, failAt := range map[CoDelRule]time.Duration{CoDelAtArrival: 26 * ms, CoDelAtDequeue: 30 * ms} {
		q := &Queue{Concurrency: 1, Service: Fixed(10 * ms), CoDel: CoDel{Target: 5 * ms, Interval: 20 * ms, Rule: rule}, LIFO: AdaptiveLIFO{Interval: 100 * ms}}
		s := q.NewServer(ServerRand(1))
		got, _ := driveQueue(t, s, []time.Duration{0, 2 * ms, 4 * ms, 6 * ms})
		want := []lifoAnswer{{10 * ms, true}, {20 * ms, true}, {30 * ms, true}, {failAt, false}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: answers %v, want %v", rule, got, want)
		}
		if v, _ := countersOf(s.(CounterReporter).ReportCounters).Get("server.codel_dropped"); v != 1 {
			t.Errorf("%v: codel_dropped %d, want 1", rule, v)
		}
	}

	q := &Queue{Concurrency: 1, Service: Fixed(10 * ms), DropAbandoned: true, LIFO: AdaptiveLIFO{Interval: 100 * ms}}
	s := q.NewServer(ServerRand(1))
	s.Arrive(0, Request{})
	r := s.Arrive(1*ms, Request{GiveUpAt: 5 * ms})
	if !r.Pending || r.At != 10*ms {
		t.Fatalf("a waiting request: %+v, want pending until 10ms", r)
	}
	if r = s.(Decider).Decide(10*ms, r.Ticket); r.Pending || r.Outcome.Class == policies.Success || r.At != 10*ms {
		t.Errorf("a request whose client left at 5ms, its turn at 10ms: %+v, want skipped then", r)
	}
}

// A queue limit counts the requests waiting.
func TestQueueLIFOQueueLimit(t *testing.T) {
	ms := time.Millisecond
	q := &Queue{Concurrency: 1, Service: Fixed(10 * ms), QueueLimit: 1, RejectAfter: ms, LIFO: AdaptiveLIFO{Interval: 100 * ms}}
	s := q.NewServer(ServerRand(1))
	s.Arrive(0, Request{})
	if r := s.Arrive(1*ms, Request{}); !r.Pending {
		t.Fatalf("the first to wait: %+v, want pending", r)
	}
	if r := s.Arrive(2*ms, Request{}); r.Pending || r.Outcome.Class == policies.Success || r.At != 3*ms {
		t.Errorf("one waiting, limit 1: %+v, want rejected at 3ms", r)
	}
}

// lifoMetastable is the metastability experiment with adaptive LIFO and
// controlled delay on the queue, 3 immediate retries, 1 s timeouts.
func lifoMetastable(seed uint64) Config {
	return Config{Seed: seed,
		Server: &Queue{Service: Exponential{Mean: 100 * ms}, CoDel: CoDel{Target: 5 * ms, Interval: 100 * ms}, LIFO: AdaptiveLIFO{Interval: 100 * ms},
			Phases: []WorkerPhase{{Duration: 20 * sec, Concurrency: 10}, {Duration: 10 * sec, Concurrency: 5}, {Concurrency: 10}}},
		Workload: &OpenLoop{Rates: ConstantRate(70), Until: 60 * sec},
		Policy: Policy{Name: "immediate", Rules: policies.Policy{
			Backoff: policies.Constant{}, MaxAttempts: 4, AttemptTimeout: sec}},
	}
}

// Through the engine: a run is deterministic, every attempt is decided
// once (admitted or rejected), and the queue took some requests newest
// first during the incident.
func TestQueueLIFORunDeterministic(t *testing.T) {
	a := mustRun(t, lifoMetastable(1))
	b := mustRun(t, lifoMetastable(1))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs of the same seed differ")
	}
	if a.Admitted+a.Rejected != a.Attempts {
		t.Errorf("admitted %d + rejected %d != attempts %d", a.Admitted, a.Rejected, a.Attempts)
	}
	if counter(a, "server.lifo") == 0 || counter(a, "server.codel_dropped") == 0 {
		t.Errorf("lifo %d, codel_dropped %d: want both > 0 in the incident", counter(a, "server.lifo"), counter(a, "server.codel_dropped"))
	}
	t.Logf("completed %d of %d, attempts %d, lifo %d, codel_dropped %d, wasted %d", a.Completed, a.Clients, a.Attempts,
		counter(a, "server.lifo"), counter(a, "server.codel_dropped"), counter(a, "server.wasted"))
}

func TestQueueLIFOValidate(t *testing.T) {
	q := &Queue{Concurrency: 1, Service: Fixed(time.Millisecond), LIFO: AdaptiveLIFO{Interval: -1}}
	if err := q.Validate(); err == nil {
		t.Error("a negative interval validates")
	}
	q.LIFO.Interval = time.Millisecond
	if !DecidesLater(q) {
		t.Error("an adaptive-LIFO queue does not say it decides later")
	}
	if DecidesLater(&Queue{Concurrency: 1, Service: Fixed(time.Millisecond)}) {
		t.Error("a first come, first served queue says it decides later")
	}
}

// The forecast (pickForecast) saves wake-ups and changes nothing else: a
// run with it equals a run without, event count aside; with two phases of
// workers, retries and timeouts, and a fixed service time (picks at the
// same instant).
func TestQueueLIFOForecastChangesNothing(t *testing.T) {
	for _, service := range []Distribution{Exponential{Mean: 100 * ms}, Fixed(100 * ms)} {
		cfg := lifoMetastable(3)
		q := cfg.Server.(*Queue)
		q.CoDel, q.Service = CoDel{}, service
		if racetest.Enabled {
			cfg.Workload = &OpenLoop{Rates: ConstantRate(70), Until: 26 * sec}
		}
		with := mustRun(t, cfg)
		without, err := Run(withoutLIFOForecast(cfg))
		if err != nil {
			t.Fatal(err)
		}
		if with.Events >= without.Events {
			t.Errorf("service %v: %d events with the forecast, %d without: it saves none", service, with.Events, without.Events)
		}
		t.Logf("service %v: events %d with the forecast, %d without; lifo %d", service, with.Events, without.Events, counter(with, "server.lifo"))
		with.Events = without.Events
		if !reflect.DeepEqual(with, without) {
			t.Errorf("service %v: the forecast changes the run: completed %d vs %d, attempts %d vs %d", service, with.Completed, without.Completed, with.Attempts, without.Attempts)
		}
	}
}

// checkedQueue runs a queue and fails the test on an answer before the
// time it is given (a pick the queue made while the request slept), or a
// pending answer that does not move time on.
type checkedQueue struct {
	*Queue
	t *testing.T
}

func (c checkedQueue) NewServer(rng *rand.Rand) Server {
	return &checkedServer{c.Queue.NewServer(rng).(*lifoState), c.t}
}

type checkedServer struct {
	*lifoState
	t *testing.T
}

func (s *checkedServer) Arrive(now time.Duration, req Request) Response {
	return s.check("Arrive", now, s.lifoState.Arrive(now, req))
}

func (s *checkedServer) Decide(now time.Duration, ticket int32) Response {
	r := s.check("Decide", now, s.lifoState.Decide(now, ticket))
	if r.Pending && r.At == now {
		s.t.Fatalf("Decide at %v: pending again at the same time", now)
	}
	return r
}

func (s *checkedServer) check(what string, now time.Duration, r Response) Response {
	if r.At < now {
		s.t.Fatalf("%s at %v: answer at %v, in the past", what, now, r.At)
	}
	return r
}

// Every discipline variant, through the engine with timeouts and retries:
// no answer comes before its decision, and every attempt is decided once.
func TestQueueLIFONeverAnswersLate(t *testing.T) {
	for _, v := range []struct {
		name string
		set  func(q *Queue)
	}{
		{"lifo", func(q *Queue) { q.CoDel = CoDel{} }},
		{"lifo+codel", func(q *Queue) {}},
		{"lifo+codel at arrival", func(q *Queue) { q.CoDel.Rule = CoDelAtArrival }},
		{"lifo+codel control law", func(q *Queue) { q.CoDel.Rule = CoDelControlLaw }},
		{"lifo+drop", func(q *Queue) { q.CoDel, q.DropAbandoned = CoDel{}, true }},
		{"lifo+limit", func(q *Queue) { q.CoDel, q.QueueLimit = CoDel{}, 20 }},
		{"lifo, fixed service", func(q *Queue) { q.CoDel, q.Service = CoDel{}, Fixed(100*ms) }},
		{"lifo, 2 workers", func(q *Queue) {
			q.CoDel, q.Phases = CoDel{}, []WorkerPhase{{Duration: 5 * sec, Concurrency: 2}, {Duration: 5 * sec, Concurrency: 0}, {Concurrency: 8}}
		}},
	} {
		seeds, until := uint64(2), 35*sec
		if racetest.Enabled {
			seeds, until = 1, 26*sec
		}
		for seed := uint64(1); seed <= seeds; seed++ {
			cfg := lifoMetastable(seed)
			q := *cfg.Server.(*Queue)
			v.set(&q)
			cfg.Server = checkedQueue{&q, t}
			cfg.Workload = &OpenLoop{Rates: ConstantRate(70), Until: until}
			r := mustRun(t, cfg)
			if r.Admitted+r.Rejected != r.Attempts {
				t.Errorf("%s, seed %d: admitted %d + rejected %d != attempts %d", v.name, seed, r.Admitted, r.Rejected, r.Attempts)
			}
		}
	}
}

package sim

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// drivePriorities plays requests arriving at the given times (in order)
// against s as the engine does, decisions at the times they name, in
// (time, insertion) order; it returns each request's final answer.
func drivePriorities(t *testing.T, s Server, at []time.Duration, reqs []Request) []Response {
	t.Helper()
	answers, _ := drivePrioritiesCounting(t, s, at, reqs)
	return answers
}

// drivePrioritiesCounting is drivePriorities, and how many decisions it asked for.
func drivePrioritiesCounting(t *testing.T, s Server, at []time.Duration, reqs []Request) ([]Response, int) {
	t.Helper()
	decides := 0
	type pend struct {
		at     time.Duration
		req    int
		ticket int32
	}
	answers := make([]Response, len(at))
	var q []pend // kept in (time, insertion) order
	settle := func(i int, now time.Duration, r Response) {
		if r.At < now {
			t.Fatalf("request %d: answer at %v, before %v", i, r.At, now)
		}
		if !r.Pending {
			answers[i] = r
			return
		}
		k := len(q)
		for k > 0 && q[k-1].at > r.At {
			k--
		}
		q = append(q[:k], append([]pend{{r.At, i, r.Ticket}}, q[k:]...)...)
	}
	next := 0
	for next < len(at) || len(q) > 0 {
		if len(q) > 0 && (next == len(at) || q[0].at <= at[next]) {
			p := q[0]
			q = q[1:]
			decides++
			settle(p.req, p.at, s.(Decider).Decide(p.at, p.ticket))
			continue
		}
		settle(next, at[next], s.Arrive(at[next], reqs[next]))
		next++
	}
	return answers, decides
}

// Worked by hand: one worker, 10 ms a request. A (default) finds it free;
// B (sheddable), C (default), D (critical), E (default) wait, arriving at
// 1…4 ms. Each pick takes the highest priority, the oldest within it:
// D at 10 ms, C at 20, E at 30, B at 40.
func TestQueuePriorityOrder(t *testing.T) {
	ms := time.Millisecond
	q := &Queue{Concurrency: 1, Service: Fixed(10 * ms), Priority: PriorityOrder{On: true}}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	at := []time.Duration{0, 1 * ms, 2 * ms, 3 * ms, 4 * ms}
	reqs := []Request{{}, {Priority: PrioritySheddable}, {}, {Priority: PriorityCritical}, {}}
	got := drivePriorities(t, q.NewServer(ServerRand(1)), at, reqs)
	want := []time.Duration{10 * ms, 50 * ms, 30 * ms, 20 * ms, 40 * ms}
	for i, r := range got {
		if r.Outcome.Class != policies.Success || r.At != want[i] {
			t.Errorf("request %c: %+v, want a success at %v", 'A'+i, r, want[i])
		}
	}
}

// A full queue sheds the lowest priority first. One worker, 10 ms, at most
// 2 waiting: A is served; B and C (sheddable) fill the queue; D (critical)
// evicts C, the newest sheddable, whose 529 reaches it at 10 ms, the next
// time a worker is free; E (sheddable) finds nothing below it and is
// rejected at once; F (default) evicts B. Then D at 10 ms, F at 20.
func TestQueuePriorityEvictsTheLowest(t *testing.T) {
	ms := time.Millisecond
	q := &Queue{Concurrency: 1, Service: Fixed(10 * ms), QueueLimit: 2, Priority: PriorityOrder{On: true}}
	s := q.NewServer(ServerRand(1))
	at := []time.Duration{0, 1 * ms, 2 * ms, 3 * ms, 4 * ms, 5 * ms}
	shed := Request{Priority: PrioritySheddable}
	reqs := []Request{{}, shed, shed, {Priority: PriorityCritical}, shed, {}}
	got := drivePriorities(t, s, at, reqs)
	for i, w := range []struct {
		ok bool
		at time.Duration
	}{{true, 10 * ms}, {false, 10 * ms}, {false, 10 * ms}, {true, 20 * ms}, {false, 4 * ms}, {true, 30 * ms}} {
		if r := got[i]; (r.Outcome.Class == policies.Success) != w.ok || r.At != w.at {
			t.Errorf("request %c: %+v, want success %v at %v", 'A'+i, r, w.ok, w.at)
		}
	}
	cs := countersOf(s.(CounterReporter).ReportCounters)
	for name, want := range map[string]int64{"server.priority_evicted": 2, "server.queue_full": 1, "server.served": 3} {
		if v, _ := cs.Get(name); v != want {
			t.Errorf("%s = %d, want %d", name, v, want)
		}
	}
}

// With one priority the order is first come, first served: over a random
// run with two workers and a queue limit, every answer is the plain
// queue's (service draws in the same order, at each start).
func TestQueuePriorityOneLevelIsFIFO(t *testing.T) {
	ms := time.Millisecond
	rng := ServerRand(9)
	var at []time.Duration
	now := time.Duration(0)
	for range 3000 {
		now += time.Duration(rng.ExpFloat64() * float64(4*ms))
		at = append(at, now)
	}
	reqs := make([]Request, len(at))
	plain := &Queue{Concurrency: 2, Service: Exponential{Mean: 9 * ms}, QueueLimit: 3}
	prio := *plain
	prio.Priority.On = true
	f := plain.NewServer(ServerRand(1))
	got := drivePriorities(t, prio.NewServer(ServerRand(1)), at, reqs)
	full := 0
	for i := range at {
		want := f.Arrive(at[i], reqs[i])
		if got[i].At != want.At || got[i].Outcome != want.Outcome {
			t.Fatalf("request %d (arrived %v): %+v, first come first served %+v", i, at[i], got[i], want)
		}
		if want.Outcome.Class != policies.Success {
			full++
		}
	}
	if full == 0 {
		t.Fatal("the queue was never full: the test shows less than it should")
	}
}

func TestQueuePriorityValidate(t *testing.T) {
	on := PriorityOrder{On: true}
	for _, q := range []*Queue{
		{Concurrency: 1, Service: Fixed(1), Priority: on, LIFO: AdaptiveLIFO{Interval: time.Second}},
		{Concurrency: 1, Service: Fixed(1), Priority: on, CoDel: CoDel{Target: 5 * time.Millisecond, Interval: 100 * time.Millisecond}},
	} {
		if q.Validate() == nil {
			t.Errorf("%+v: no error", q)
		}
	}
}

// Without a queue limit a waiting request sleeps until the forecast pick
// that could take it: over random arrivals of three priorities, two
// workers and random service, every answer is the one of a queue that
// looks at every waiting request at each pick, in far fewer decisions;
// with one priority, every answer is the plain queue's.
func TestQueuePriorityForecastChangesNothing(t *testing.T) {
	ms := time.Millisecond
	rng := ServerRand(5)
	var at []time.Duration
	var reqs []Request
	now := time.Duration(0)
	for range 3000 {
		now += time.Duration(rng.ExpFloat64() * float64(4*ms)) // load 1.1: the queue stands
		at = append(at, now)
		reqs = append(reqs, Request{Priority: Priority(rng.IntN(3) - 1)})
	}
	q := &Queue{Concurrency: 2, Service: Exponential{Mean: 9 * ms}, Priority: PriorityOrder{On: true}}
	// And with workers over time: none for a while, then 1, then 3.
	phased := &Queue{Phases: []WorkerPhase{{Duration: time.Second, Concurrency: 2}, {Duration: 500 * ms}, {Duration: 2 * time.Second, Concurrency: 1}, {Concurrency: 3}},
		Service: Exponential{Mean: 9 * ms}, Priority: PriorityOrder{On: true}}
	for _, m := range []*Queue{q, phased} {
		slow := *m
		slow.noForecast = true
		got, gotDecides := drivePrioritiesCounting(t, m.NewServer(ServerRand(1)), at, reqs)
		want, wantDecides := drivePrioritiesCounting(t, slow.NewServer(ServerRand(1)), at, reqs)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%d phases: request %d (arrived %v, %v): %+v with the forecast, %+v without", len(m.Phases), i, at[i], reqs[i].Priority, got[i], want[i])
			}
		}
		if gotDecides*2 > wantDecides {
			t.Errorf("%d phases: %d decisions with the forecast, %d without: it saves little", len(m.Phases), gotDecides, wantDecides)
		}
		t.Logf("%d phases: %d decisions with the forecast, %d without", len(m.Phases), gotDecides, wantDecides)
	}

	plain := &Queue{Concurrency: 2, Service: Exponential{Mean: 9 * ms}}
	f := plain.NewServer(ServerRand(1))
	one, _ := drivePrioritiesCounting(t, q.NewServer(ServerRand(1)), at, make([]Request, len(at)))
	for i := range at {
		if w := f.Arrive(at[i], Request{}); one[i].At != w.At || one[i].Outcome != w.Outcome {
			t.Fatalf("one priority, request %d: %+v, first come first served %+v", i, one[i], w)
		}
	}
}

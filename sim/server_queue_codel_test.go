package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// Controlled delay, worked by hand: one worker, 10 ms per request, target
// 5 ms, interval 20 ms. The queue is empty until 2 ms; requests arriving
// every 2 ms wait longer and longer. Decided at arrival, a request keeps
// the limit of the queue it found (20 ms within the first 20 ms of a
// standing queue, then 5 ms) and fails when it is reached; decided at
// dequeue, the limit is the queue's when the request's turn comes, and it
// fails then.
func TestQueueCoDelLimits(t *testing.T) {
	ms := time.Millisecond
	type want struct {
		at      time.Duration
		ok      bool
		respond time.Duration
	}
	for _, c := range []struct {
		rule  CoDelRule
		wants []want
	}{
		{CoDelAtArrival, []want{
			{0, true, 10 * ms},        // no wait
			{2 * ms, true, 20 * ms},   // waits 8 ms: the queue stands since 2 ms, limit 20 ms
			{4 * ms, true, 30 * ms},   // waits 16 ms
			{6 * ms, false, 26 * ms},  // would wait 24 ms > 20 ms: leaves at 26 ms
			{8 * ms, false, 28 * ms},  // would wait 22 ms
			{22 * ms, false, 27 * ms}, // standing for 20 ms: would wait 8 ms > 5 ms
			{27 * ms, true, 40 * ms},  // waits 3 ms (the queue stood until 30 ms)
			{40 * ms, true, 50 * ms},  // no wait
			{45 * ms, true, 60 * ms},  // waits 5 ms: the queue was empty at 40 ms
		}},
		{CoDelAtDequeue, []want{
			{0, true, 10 * ms},        // no wait
			{2 * ms, true, 20 * ms},   // its turn at 10 ms: the queue has stood 8 ms, limit 20 ms; waited 8
			{4 * ms, true, 30 * ms},   // its turn at 20 ms: stood 18 ms, waited 16
			{6 * ms, false, 30 * ms},  // its turn at 30 ms: stood 28 ms, limit 5 ms, waited 24
			{8 * ms, false, 30 * ms},  // waited 22 ms: dropped at the same turn
			{22 * ms, false, 30 * ms}, // waited 8 ms
			{27 * ms, true, 40 * ms},  // waited 3 ms
			{40 * ms, true, 50 * ms},  // no wait
			{45 * ms, true, 60 * ms},  // its turn at 50 ms: stood 5 ms since 45 ms
		}},
	} {
		q := &Queue{Concurrency: 1, Service: Fixed(10 * ms), CoDel: CoDel{Target: 5 * ms, Interval: 20 * ms, Rule: c.rule}}
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		s := q.NewServer(ServerRand(1))
		for _, w := range c.wants {
			r := s.Arrive(w.at, Request{})
			if (r.Outcome.Class == policies.Success) != w.ok || r.At != w.respond {
				t.Errorf("%v: arrival at %v: %v at %v, want success %v at %v", c.rule, w.at, r.Outcome.Class, r.At, w.ok, w.respond)
			}
		}
		var cs Counters
		reportCounters(s, &cs) // as a run asks them, the servers inside first
		if v, _ := cs.Get("server.codel_dropped"); v != 3 {
			t.Errorf("%v: codel_dropped %d, want 3", c.rule, v)
		}
	}
}

// Where the rules part: one worker, 10 ms each, target 5 ms, interval 20
// ms. The request at 15 ms arrives when the queue has stood 14 ms (limit
// 20 ms) and would wait 15 ms: at arrival it is accepted (served from 30
// to 40 ms); at its turn (30 ms) the queue has stood 29 ms, the limit is
// 5 ms and it is dropped then.
func TestQueueCoDelRulesPart(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		rule CoDelRule
		ok   bool
		at   time.Duration
	}{{CoDelAtArrival, true, 40 * ms}, {CoDelAtDequeue, false, 30 * ms}} {
		rule := c.rule
		q := &Queue{Concurrency: 1, Service: Fixed(10 * ms), CoDel: CoDel{Target: 5 * ms, Interval: 20 * ms, Rule: rule}}
		s := q.NewServer(ServerRand(1))
		for _, at := range []time.Duration{0, 1 * ms, 5 * ms} {
			if r := s.Arrive(at, Request{}); r.Outcome.Class != policies.Success {
				t.Fatalf("%v: the request at %v failed", rule, at)
			}
		}
		if r := s.Arrive(15*ms, Request{}); (r.Outcome.Class == policies.Success) != c.ok || r.At != c.at {
			t.Errorf("%v: the request at 15ms: %v at %v, want success %v at %v", rule, r.Outcome.Class, r.At, c.ok, c.at)
		}
	}
}

// RFC 8289's control law, worked by hand: one worker, 10 ms each, target
// 5 ms, interval 20 ms, a request every 4 ms (2.5 times the capacity). The
// waits reach the target at 10 ms (first above: until 30 ms); at 30 ms the
// law drops (count 1, next drop at 30 + 20/√1 = 50 ms) and serves the next
// request whatever its wait; at 50 ms it drops (count 2) and, the next
// request still waiting above target, moves the next drop to 50 + 20/√2 ≈
// 64.1 ms; then 70 ms (count 3, next ≈ 75.7 ms), 80 ms (count 4, next ≈
// 85.7 ms). The queue empties; a request at 200 ms finds a worker idle and
// resets the state. Above target again from 210 ms, the law drops at 230
// ms and, its last dropping state 144 ms ago (< 16 intervals) having ended
// with count 4 from 1, starts at count 3: next drop at 230 + 20/√3 ≈ 241.5
// ms, taken at 250 ms.
func TestQueueCoDelControlLaw(t *testing.T) {
	ms := time.Millisecond
	q := &Queue{Concurrency: 1, Service: Fixed(10 * ms), CoDel: CoDel{Target: 5 * ms, Interval: 20 * ms, Rule: CoDelControlLaw}}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	var arrivals []time.Duration
	for i := range 13 {
		arrivals = append(arrivals, time.Duration(4*i)*ms)
	}
	arrivals = append(arrivals, 200*ms, 201*ms, 202*ms, 203*ms, 204*ms, 205*ms, 206*ms)
	// The turns, and whether the request at each is served.
	want := []struct {
		at time.Duration
		ok bool
	}{
		{10 * ms, true}, {20 * ms, true}, {30 * ms, true}, {30 * ms, false}, {40 * ms, true}, {50 * ms, true},
		{50 * ms, false}, {60 * ms, true}, {70 * ms, true}, {70 * ms, false}, {80 * ms, true}, {80 * ms, false}, {90 * ms, true},
		{210 * ms, true}, {220 * ms, true}, {230 * ms, true}, {230 * ms, false}, {240 * ms, true}, {250 * ms, true}, {250 * ms, false},
	}
	s := q.NewServer(ServerRand(1))
	for i, at := range arrivals {
		r := s.Arrive(at, Request{})
		if (r.Outcome.Class == policies.Success) != want[i].ok || r.At != want[i].at {
			t.Errorf("request %d at %v: %v at %v, want success %v at %v", i, at, r.Outcome.Class, r.At, want[i].ok, want[i].at)
		}
	}
}

// Under twice the capacity, with Fail at Scale's test (decided at arrival
// or at dequeue), no request served waits longer than the interval; without
// CoDel the waits grow without bound.
func TestQueueCoDelBoundsWaits(t *testing.T) {
	ms := time.Millisecond
	for _, rule := range []CoDelRule{codelRules, CoDelAtDequeue, CoDelAtArrival} {
		codel := rule != codelRules // codelRules: none
		q := &Queue{Concurrency: 4, Service: Exponential{Mean: 10 * ms}}
		if codel {
			q.CoDel = CoDel{Target: 5 * ms, Interval: 100 * ms, Rule: rule}
		}
		s := q.NewServer(ServerRand(2)).(*queueState)
		rng := rand.New(rand.NewPCG(3, 4))
		now, longest := time.Duration(0), time.Duration(0)
		for range 20_000 {
			now += time.Duration(rng.ExpFloat64() / 800 * float64(time.Second)) // capacity 400/s
			start := max(now, s.free[0])
			r := s.Arrive(now, Request{})
			if r.Outcome.Class == policies.Success {
				longest = max(longest, start-now)
			}
		}
		switch {
		case codel && longest > 100*ms:
			t.Errorf("with CoDel (%v) a served request waited %v, more than the interval", rule, longest)
		case !codel && longest < time.Second:
			t.Errorf("without CoDel the longest wait is only %v at twice the capacity", longest)
		}
	}
}

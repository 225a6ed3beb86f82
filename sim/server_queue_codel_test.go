package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// Controlled delay, worked by hand: one worker, 10 ms per request, target
// 5 ms, interval 20 ms. The queue is empty until 0; requests arriving
// every 2 ms wait longer and longer: within the first 20 ms of a standing
// queue the limit is 20 ms, after it 5 ms.
func TestQueueCoDelLimits(t *testing.T) {
	ms := time.Millisecond
	q := &Queue{Concurrency: 1, Service: Fixed(10 * ms), CoDel: CoDel{Target: 5 * ms, Interval: 20 * ms}}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	s := q.NewServer(ServerRand(1))
	type want struct {
		at      time.Duration
		ok      bool
		respond time.Duration
	}
	for _, w := range []want{
		{0, true, 10 * ms},        // no wait
		{2 * ms, true, 20 * ms},   // waits 8 ms: the queue stands since 2 ms, limit 20 ms
		{4 * ms, true, 30 * ms},   // waits 16 ms
		{6 * ms, false, 26 * ms},  // would wait 24 ms > 20 ms: leaves at 26 ms
		{8 * ms, false, 28 * ms},  // would wait 22 ms
		{22 * ms, false, 27 * ms}, // standing for 20 ms: would wait 8 ms > 5 ms
		{27 * ms, true, 40 * ms},  // waits 3 ms (the queue stood until 30 ms)
		{40 * ms, true, 50 * ms},  // no wait
		{45 * ms, true, 60 * ms},  // waits 5 ms: the queue was empty at 40 ms
	} {
		r := s.Arrive(w.at, Request{})
		if (r.Outcome.Class == policies.Success) != w.ok || r.At != w.respond {
			t.Errorf("arrival at %v: %v at %v, want success %v at %v", w.at, r.Outcome.Class, r.At, w.ok, w.respond)
		}
	}
	var c Counters
	reportCounters(s, &c) // as a run asks them, the servers inside first
	if v, _ := c.Get("server.codel_dropped"); v != 3 {
		t.Errorf("codel_dropped %d, want 3", v)
	}
}

// Under twice the capacity, no request served waits longer than the
// interval, and once the queue stands none waits longer than the target;
// without CoDel the waits grow without bound.
func TestQueueCoDelBoundsWaits(t *testing.T) {
	ms := time.Millisecond
	for _, codel := range []bool{false, true} {
		q := &Queue{Concurrency: 4, Service: Exponential{Mean: 10 * ms}}
		if codel {
			q.CoDel = CoDel{Target: 5 * ms, Interval: 100 * ms}
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
			t.Errorf("with CoDel a served request waited %v, more than the interval", longest)
		case !codel && longest < time.Second:
			t.Errorf("without CoDel the longest wait is only %v at twice the capacity", longest)
		}
	}
}

package sim

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

type arrival struct {
	at     time.Duration
	giveUp time.Duration
	// what the server answers
	ok   bool
	resp time.Duration
}

// TestQueueRules drives Queue servers by hand, one arrival after another.
func TestQueueRules(t *testing.T) {
	full := Rejection{Status: 503, Class: policies.Capacity}
	for _, tt := range []struct {
		name  string
		q     Queue
		steps []arrival
		stats queueStats
	}{
		{"two workers, first come first served", Queue{Concurrency: 2, Service: Fixed(100 * ms)},
			[]arrival{{0, 0, true, 100 * ms}, {0, 0, true, 100 * ms}, {0, 0, true, 200 * ms}, {50 * ms, 0, true, 200 * ms}, {250 * ms, 0, true, 350 * ms}},
			queueStats{Served: 5, BusyTime: 500 * ms}},
		// One may wait: the third finds the queue full; by 150 ms the
		// second has started, so the fourth may wait.
		{"queue limit", Queue{Concurrency: 1, Service: Fixed(100 * ms), QueueLimit: 1, Reject: full, RejectAfter: 10 * ms},
			[]arrival{{0, 0, true, 100 * ms}, {0, 0, true, 200 * ms}, {0, 0, false, 10 * ms}, {150 * ms, 0, true, 300 * ms}},
			queueStats{Served: 3, BusyTime: 300 * ms, QueueFull: 1}},
		// The first is served though its client has gone at 50 ms (wasted);
		// the second's client has gone before its start at 100 ms: skipped,
		// so the third starts at 100 ms.
		{"drop abandoned", Queue{Concurrency: 1, Service: Fixed(100 * ms), DropAbandoned: true},
			[]arrival{{0, 50 * ms, true, 100 * ms}, {10 * ms, 60 * ms, false, 100 * ms}, {20 * ms, 0, true, 200 * ms}},
			queueStats{Served: 2, BusyTime: 200 * ms, Wasted: 1, WastedTime: 100 * ms, Dropped: 1}},
		{"work for clients who left", Queue{Concurrency: 1, Service: Fixed(100 * ms)},
			[]arrival{{0, 50 * ms, true, 100 * ms}, {10 * ms, 60 * ms, true, 200 * ms}, {20 * ms, 0, true, 300 * ms}},
			queueStats{Served: 3, BusyTime: 300 * ms, Wasted: 2, WastedTime: 200 * ms}},
		// 2 workers until 1 s, 1 until 2 s, then 3. At 1 s the worker free
		// soonest (at 0.6 s) goes; the one busy until 1.5 s stays. The request
		// of 1.1 s waits for a worker until 2 s, when two come, free at once:
		// it takes one, the first at 2 s the other; the next waits for the
		// worker free at 2.1 s, the last for the first free again, at 2.6 s.
		{"phases", Queue{Service: Fixed(600 * ms), Phases: []WorkerPhase{{Duration: sec, Concurrency: 2}, {Duration: sec, Concurrency: 1}, {Concurrency: 3}}},
			[]arrival{{0, 0, true, 600 * ms}, {0, 0, true, 600 * ms}, {900 * ms, 0, true, 1500 * ms}, {sec, 0, true, 2100 * ms},
				{1100 * ms, 0, true, 2600 * ms}, {2 * sec, 0, true, 2600 * ms}, {2 * sec, 0, true, 2700 * ms}, {2 * sec, 0, true, 3200 * ms}},
			queueStats{Served: 8, BusyTime: 8 * 600 * ms}},
		// One worker until 10 ms, then two: the second request, waiting
		// since 1 ms, takes the new worker when it comes.
		{"more workers for requests already waiting", Queue{Service: Fixed(100 * ms), Phases: []WorkerPhase{{Duration: 10 * ms, Concurrency: 1}, {Concurrency: 2}}},
			[]arrival{{0, 0, true, 100 * ms}, {ms, 0, true, 110 * ms}, {2 * ms, 0, true, 200 * ms}},
			queueStats{Served: 3, BusyTime: 300 * ms}},
		// No worker for 1 s: a request waits for the first.
		{"no workers at first", Queue{Service: Fixed(100 * ms), Phases: []WorkerPhase{{Duration: sec}, {Duration: sec, Concurrency: 1}, {Concurrency: 1}}},
			[]arrival{{200 * ms, 0, true, 1100 * ms}, {300 * ms, 0, true, 1200 * ms}},
			queueStats{Served: 2, BusyTime: 200 * ms}},
	} {
		if err := tt.q.Validate(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		srv := tt.q.NewServer(rand.New(rand.NewPCG(1, 1)))
		for i, a := range tt.steps {
			r := srv.Arrive(a.at, Request{GiveUpAt: a.giveUp})
			if ok := r.Outcome.Class == policies.Success; ok != a.ok || r.At != a.resp {
				t.Errorf("%s: arrival %d at %v: admitted %v, response at %v; want %v, %v", tt.name, i, a.at, ok, r.At, a.ok, a.resp)
			}
			if !a.ok {
				want := tt.q.Reject.orOverloaded().Outcome()
				if r.Outcome != want {
					t.Errorf("%s: arrival %d: outcome %+v, want %+v", tt.name, i, r.Outcome, want)
				}
			}
		}
		if got := srv.(*queueState).stats; got != tt.stats {
			t.Errorf("%s: stats %+v, want %+v", tt.name, got, tt.stats)
		}
	}
}

func TestQueueValidation(t *testing.T) {
	for _, tt := range []struct {
		q    Queue
		want string
	}{
		{Queue{Service: Fixed(0)}, "concurrency"},
		{Queue{Concurrency: 1}, "service"},
		{Queue{Concurrency: 1, Service: Exponential{Mean: -1}}, "negative"},
		{Queue{Concurrency: 1, Service: Fixed(0), Phases: []WorkerPhase{{Concurrency: 1}}}, "not both"},
		{Queue{Concurrency: 1, Service: Fixed(0), QueueLimit: -1}, "queue limit"},
		{Queue{Concurrency: 1, Service: Fixed(0), RejectAfter: -1}, "reject-after"},
		{Queue{Concurrency: 1, Service: Fixed(0), Reject: Rejection{Status: 200}}, "success"},
		{Queue{Service: Fixed(0), Phases: []WorkerPhase{{Concurrency: 1}, {Concurrency: 1}}}, "only the last"},
		{Queue{Service: Fixed(0), Phases: []WorkerPhase{{Duration: sec, Concurrency: 1}, {}}}, "last phase needs"},
		{Queue{Service: Fixed(0), Phases: []WorkerPhase{{Duration: -1, Concurrency: 1}}}, "negative duration"},
		{Queue{Service: Fixed(0), Phases: []WorkerPhase{{Concurrency: MaxConcurrency + 1}}}, "between 0"},
	} {
		if err := tt.q.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one containing %q", tt.q, err, tt.want)
		}
	}
}

// A queue through the engine, by hand: one worker, 100 ms per request,
// three clients at t = 0 with a 150 ms attempt timeout and one attempt.
// Client 0 is served 0–100 ms and completes. Client 1 is served 100–200 ms,
// but has left at 150 ms: wasted work. Client 2 would start at 200 ms, long
// after it left: served anyway (200–300 ms, wasted), or skipped with
// DropAbandoned (counted as a rejection; the client sees its timeout).
func TestQueueRunByHand(t *testing.T) {
	for _, drop := range []bool{false, true} {
		c := Config{Seed: 1, Workload: Burst{Clients: 3},
			Server: &Queue{Concurrency: 1, Service: Fixed(100 * ms), DropAbandoned: drop},
			Policy: Policy{Name: "t", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 1, AttemptTimeout: 150 * ms}}}
		r := mustRun(t, c)
		want := queueStats{Served: 3, BusyTime: 300 * ms, Wasted: 2, WastedTime: 200 * ms}
		admitted := 3
		if drop {
			want = queueStats{Served: 2, BusyTime: 200 * ms, Wasted: 1, WastedTime: 100 * ms, Dropped: 1}
			admitted = 2
		}
		if r.Completed != 1 || r.Latencies[0] != 100*ms || r.GaveUp != 2 || !slices.Equal(r.Counters, countersOf(want.report)) || r.Admitted != admitted || r.Admitted+r.Rejected != 3 {
			t.Errorf("drop %v: completed %d %v, gave up %d, admitted %d, server %+v; want 1 [100ms], 2, %d, %+v",
				drop, r.Completed, r.Latencies, r.GaveUp, r.Admitted, r.Counters, admitted, want)
		}
	}
}

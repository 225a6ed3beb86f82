package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

var (
	internal  = Rejection{Status: 500, Class: policies.Transient}
	limited2s = Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: 2 * sec}
)

// TestErrorMixRules checks single arrivals against the rules: which
// outcome, when, and what is counted.
func TestErrorMixRules(t *testing.T) {
	stream := &ErrorMix{Phases: []MixPhase{{Outcomes: []MixOutcome{{P: 1, Reject: overloaded}}}}, Latency: Fixed(400 * ms), Stream: true, StreamShare: 0.25, OutputTokens: 1000}
	for _, tt := range []struct {
		name  string
		m     *ErrorMix
		req   Request
		want  Response
		stats mixStats
	}{
		{"never fails", FailWithProbability(0, overloaded, Fixed(300*ms)), Request{}, Response{At: 300 * ms, Events: 10}, mixStats{}}, // a healthy stream of the default 10 events
		{"always fails", FailWithProbability(1, overloaded, Fixed(300*ms)), Request{}, Response{Outcome: overloaded.Outcome(), At: 300 * ms}, mixStats{}},
		{"fail latency", &ErrorMix{Phases: []MixPhase{{Outcomes: []MixOutcome{{P: 1, Reject: limited2s}}}}, Latency: Fixed(300 * ms), FailLatency: Fixed(10 * ms)},
			Request{}, Response{Outcome: limited2s.Outcome(), At: 10 * ms}, mixStats{}},
		// A quarter of the way through a 400 ms stream: 200, capacity, no
		// wait; a quarter of 1000 output tokens wasted.
		{"mid-stream", stream, Request{}, Response{Outcome: policies.Outcome{Class: policies.Capacity, Status: 200}, At: 100 * ms},
			mixStats{Wasted: 1, WastedTime: 100 * ms, WastedOutputTokens: 250}},
		{"mid-stream, request's size", stream, Request{OutputTokens: 10}, Response{Outcome: policies.Outcome{Class: policies.Capacity, Status: 200}, At: 100 * ms},
			mixStats{Wasted: 1, WastedTime: 100 * ms, WastedOutputTokens: 2}},
		// Only capacity failures are streamed.
		{"stream, 500", &ErrorMix{Phases: []MixPhase{{Outcomes: []MixOutcome{{P: 1, Reject: internal}}}}, Latency: Fixed(400 * ms), Stream: true},
			Request{}, Response{Outcome: internal.Outcome(), At: 400 * ms}, mixStats{}},
	} {
		if err := tt.m.Validate(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		srv := tt.m.NewServer(rand.New(rand.NewPCG(1, 1)))
		if got := srv.Arrive(0, tt.req); got != tt.want {
			t.Errorf("%s: response %+v, want %+v", tt.name, got, tt.want)
		}
		if got := srv.(*mixState).stats; got != tt.stats {
			t.Errorf("%s: stats %+v, want %+v", tt.name, got, tt.stats)
		}
	}
}

// The outcome is the first whose cumulative probability exceeds
// U = rng.Float64(); the latency is drawn after it. Worked from the same
// stream by hand.
func TestErrorMixDrawOrder(t *testing.T) {
	m := &ErrorMix{Phases: []MixPhase{{Outcomes: []MixOutcome{{P: 0.3, Reject: overloaded}, {P: 0.3, Reject: internal}}}}, Latency: Uniform{Min: 0, Max: sec}}
	srv := m.NewServer(rand.New(rand.NewPCG(5, 6)))
	ref := rand.New(rand.NewPCG(5, 6))
	for i := range 50 {
		u := ref.Float64()
		want := policies.Outcome{}
		switch {
		case u < 0.3:
			want = overloaded.Outcome()
		case u < 0.6:
			want = internal.Outcome()
		}
		at := time.Duration(ref.Int64N(int64(sec)))
		if got := srv.Arrive(0, Request{}); got.Outcome != want || got.At != at {
			t.Fatalf("arrival %d (U = %.3f): %+v, want %+v at %v", i, u, got, want, at)
		}
	}
}

// Over many attempts each outcome comes with its probability, and phases
// change the mix.
func TestErrorMixFrequencies(t *testing.T) {
	m := &ErrorMix{Latency: Fixed(0), Phases: []MixPhase{
		{Duration: sec, Outcomes: []MixOutcome{{P: 1, Reject: overloaded}}},
		{Outcomes: []MixOutcome{{P: 0.03, Reject: overloaded}, {P: 0.01, Reject: internal}, {P: 0.02, Reject: limited2s}}},
	}}
	srv := m.NewServer(rand.New(rand.NewPCG(2, 2)))
	for i := range 100 {
		if r := srv.Arrive(time.Duration(i)*ms, Request{}); r.Outcome.Status != 529 {
			t.Fatalf("in the first phase: %+v", r.Outcome)
		}
	}
	const n = 200_000
	count := map[int]int{}
	for range n {
		count[srv.Arrive(2*sec, Request{}).Outcome.Status]++
	}
	for status, p := range map[int]float64{529: 0.03, 500: 0.01, 429: 0.02, 0: 0.94} {
		if got, sd := float64(count[status])/n, math.Sqrt(p*(1-p)/n); math.Abs(got-p) > 5*sd {
			t.Errorf("status %d: share %.4f, want %.4f", status, got, p)
		}
	}
}

// Mid-stream failures through the engine, by hand: responses take 400 ms,
// every attempt in the first second fails a quarter of the way through
// (at 100 ms) with a 200 capacity failure, then all succeed. With a 500 ms
// wait the client tries at 0, 0.6 and 1.2 s and completes at 1.6 s; the
// first two failures wasted 100 ms and 250 output tokens each.
func TestErrorMixStreamRunByHand(t *testing.T) {
	var seen []policies.Outcome
	c := Config{Seed: 1, Workload: Burst{Clients: 1},
		Server: &ErrorMix{Latency: Fixed(400 * ms), Stream: true, StreamShare: 0.25, OutputTokens: 1000, Phases: []MixPhase{
			{Duration: sec, Outcomes: []MixOutcome{{P: 1, Reject: overloaded}}}, {}}},
		Policy: Policy{Name: "c", Rules: policies.Policy{Backoff: policies.Constant{Wait: 500 * ms}, MaxAttempts: 5}},
		Hooks:  policies.Hooks{OnRetryScheduled: func(e policies.RetryEvent) { seen = append(seen, e.Outcome) }}}
	r := mustRun(t, c)
	if r.Completed != 1 || r.LastCompletion != 1600*ms || r.Attempts != 3 ||
		!slices.Equal(r.Counters, countersOf(mixStats{Wasted: 2, WastedTime: 200 * ms, WastedOutputTokens: 500}.report)) {
		t.Errorf("completed %d at %v after %d attempts, server %+v", r.Completed, r.LastCompletion, r.Attempts, r.Counters)
	}
	for _, o := range seen {
		if o != (policies.Outcome{Class: policies.Capacity, Status: 200}) {
			t.Errorf("retried after %+v, want a capacity failure with status 200", o)
		}
	}
}

func TestErrorMixValidation(t *testing.T) {
	one := func(p float64, rej Rejection) []MixPhase {
		return []MixPhase{{Outcomes: []MixOutcome{{P: p, Reject: rej}}}}
	}
	for _, tt := range []struct {
		m    ErrorMix
		want string
	}{
		{ErrorMix{Latency: Fixed(0)}, "at least one phase"},
		{ErrorMix{Phases: one(0, overloaded)}, "latency"},
		{ErrorMix{Phases: one(0, overloaded), Latency: Fixed(0), FailLatency: Fixed(-1)}, "fail latency"},
		{ErrorMix{Phases: one(1.5, overloaded), Latency: Fixed(0)}, "probability"},
		{ErrorMix{Phases: one(math.NaN(), overloaded), Latency: Fixed(0)}, "probability"},
		{ErrorMix{Phases: one(0.1, Rejection{}), Latency: Fixed(0)}, "cannot be a success"},
		{ErrorMix{Phases: []MixPhase{{Outcomes: []MixOutcome{{P: 0.6, Reject: overloaded}, {P: 0.6, Reject: internal}}}}, Latency: Fixed(0)}, "add up"},
		{ErrorMix{Phases: []MixPhase{{}, {}}, Latency: Fixed(0)}, "only the last"},
		{ErrorMix{Phases: one(0, overloaded), Latency: Fixed(0), StreamShare: 2}, "stream share"},
		{ErrorMix{Phases: one(0, overloaded), Latency: Fixed(0), OutputTokens: -1}, "output tokens"},
	} {
		if err := tt.m.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one containing %q", tt.m, err, tt.want)
		}
	}
}

// With an inner server the mix is a wrapper: the requests it fails are
// its own answers (ownTicket) and never reach the inner server; the rest
// are the inner server's, so a capacity of 2 a second behind a mix that
// fails every other request (U < 0.5, worked from the same stream) admits
// the first 2 that get through and rejects the others.
func TestErrorMixWrapsAnInnerServer(t *testing.T) {
	inner := &CapacityWindows{Phases: []Phase{{Admit: 2, Window: sec, Reject: overloaded}}, ResponseTime: Fixed(100 * ms)}
	m := &ErrorMix{Phases: []MixPhase{{Outcomes: []MixOutcome{{P: 0.5, Reject: internal}}}}, Latency: Fixed(10 * ms), Inner: inner}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, ok := ModelAs[*CapacityWindows](m); !ok || got != inner {
		t.Fatalf("ModelAs does not find the inner capacity trace through the mix")
	}
	srv := m.NewServer(rand.New(rand.NewPCG(3, 4)))
	if w, ok := srv.(Wrapper); !ok || w.Unwrap() == nil {
		t.Fatalf("the state %T does not expose the inner server's", srv)
	}
	ref := rand.New(rand.NewPCG(3, 4))
	through := 0
	for i := range 20 {
		got := srv.Arrive(0, Request{})
		want := Response{Outcome: internal.Outcome(), At: 10 * ms, Ticket: ownTicket}
		if u := ref.Float64(); u >= 0.5 {
			through++
			want = Response{At: 100 * ms}
			if through > 2 {
				want = Response{Outcome: overloaded.Outcome(), At: 100 * ms}
			}
		}
		if got.Outcome != want.Outcome || got.At != want.At || (want.Ticket == ownTicket) != (got.Ticket == ownTicket) {
			t.Fatalf("arrival %d: %+v, want %+v", i, got, want)
		}
	}
	if through < 3 {
		t.Fatalf("only %d of 20 requests got through: the test proves little", through)
	}
	if err := (&ErrorMix{Phases: m.Phases, Latency: Fixed(0), Inner: &CapacityWindows{}}).Validate(); err == nil {
		t.Errorf("a mix accepts an inner server that does not validate")
	}
}

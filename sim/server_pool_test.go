package sim

import (
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// rejectAll answers every request with a 500 after d.
func rejectAll(d time.Duration) *CapacityWindows {
	return &CapacityWindows{Phases: []Phase{{Reject: Rejection{Status: 500, Class: policies.Transient}}}, ResponseTime: Fixed(d)}
}

func members(servers ...ServerModel) []PoolMember {
	out := make([]PoolMember, len(servers))
	for i, s := range servers {
		out[i] = PoolMember{Name: string(rune('a' + i)), Server: s}
	}
	return out
}

func mustValid(t *testing.T, m ServerModel) {
	t.Helper()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
}

func stateCounter(t *testing.T, s Server, name string) int64 {
	t.Helper()
	var c Counters
	reportCounters(s, &c) // as a run asks them, the servers inside first
	v, ok := c.Get(name)
	if !ok {
		t.Fatalf("no counter %s in %v", name, c)
	}
	return v
}

// Round robin sends exactly k requests to each of n members out of k·n,
// whatever the members answer.
func TestPoolRoundRobinSplitsEvenly(t *testing.T) {
	p := &Pool{Members: members(admitAll(time.Second), rejectAll(0), admitAll(time.Millisecond))}
	mustValid(t, p)
	s := p.NewServer(ServerRand(1))
	for i := range 300 {
		s.Arrive(time.Duration(i)*time.Millisecond, Request{})
	}
	for _, name := range []string{"a", "b", "c"} {
		if got := stateCounter(t, s, "pool."+name+".requests"); got != 100 {
			t.Errorf("member %s got %d requests, want 100", name, got)
		}
	}
	if got := stateCounter(t, s, "pool.b.failed"); got != 100 {
		t.Errorf("member b failed %d, want 100", got)
	}
	if got := stateCounter(t, s, "pool.busiest_requests"); got != 100 {
		t.Errorf("busiest %d, want 100", got)
	}
}

// outstandingOf returns each member's outstanding requests at now, as the
// balancer sees them.
func outstandingOf(s *poolState, now time.Duration) []int {
	s.observe(now)
	out := make([]int, len(s.members))
	for i := range s.members {
		out[i] = len(s.members[i].outstanding)
	}
	return out
}

// chosen returns the member whose request count grew.
func chosen(s *poolState, before []int) int {
	for i := range s.members {
		if s.members[i].stats.Requests != before[i] {
			return i
		}
	}
	return -1
}

func requestsOf(s *poolState) []int {
	out := make([]int, len(s.members))
	for i := range s.members {
		out[i] = s.members[i].stats.Requests
	}
	return out
}

// drive sends Poisson arrivals at rate per second to a pool of unequal
// queues and calls check with each member's outstanding requests just
// before an arrival and the member chosen for it.
func drive(t *testing.T, b Balancer, rate float64, check func(out []int, got int)) *poolState {
	t.Helper()
	p := &Pool{Balancer: b, Members: members(
		&Queue{Concurrency: 1, Service: Exponential{Mean: 100 * time.Millisecond}},
		&Queue{Concurrency: 2, Service: Exponential{Mean: 100 * time.Millisecond}},
		&Queue{Concurrency: 4, Service: Exponential{Mean: 50 * time.Millisecond}},
		rejectAll(5*time.Millisecond),
	)}
	mustValid(t, p)
	s := p.NewServer(ServerRand(7)).(*poolState)
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Duration(0)
	for range 20_000 {
		now += time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
		out := outstandingOf(s, now)
		before := requestsOf(s)
		s.Arrive(now, Request{})
		check(out, chosen(s, before))
	}
	return s
}

// Least outstanding never sends a request to a member with more
// outstanding requests than another member has.
func TestPoolLeastOutstandingNeverPicksABusierMember(t *testing.T) {
	drive(t, LeastOutstanding, 120, func(out []int, got int) {
		for i, n := range out {
			if n < out[got] {
				t.Fatalf("sent to member %d with %d outstanding while member %d had %d", got, out[got], i, n)
			}
		}
	})
}

// Power of two choices picks the less loaded of two members: never the
// one member strictly busier than every other.
func TestPoolPowerOfTwoNeverPicksTheUniqueBusiest(t *testing.T) {
	busiestAvoided := 0
	drive(t, PowerOfTwo, 120, func(out []int, got int) {
		others := 0
		for i, n := range out {
			if i != got && n >= out[got] {
				others++
			}
		}
		if others == 0 {
			t.Fatalf("sent to member %d, the unique busiest (%v)", got, out)
		}
		busiestAvoided++
	})
	if busiestAvoided == 0 {
		t.Fatal("no arrivals checked")
	}
}

// Random spreads requests uniformly: each of 4 members gets a binomial
// share, within 5 standard deviations of n/4.
func TestPoolRandomIsUniform(t *testing.T) {
	s := drive(t, Random, 120, func([]int, int) {})
	n := 20_000.0
	sd := math.Sqrt(n * 0.25 * 0.75)
	for i, got := range requestsOf(s) {
		if math.Abs(float64(got)-n/4) > 5*sd {
			t.Errorf("member %d got %d requests, want %.0f ± %.0f", i, got, n/4, 5*sd)
		}
	}
}

// Outlier ejection: after 3 failed responses in a row a member gets no
// requests for the ejection time, then comes back.
func TestPoolEjectsAfterConsecutiveFailures(t *testing.T) {
	p := &Pool{Members: members(admitAll(10*time.Millisecond), rejectAll(10*time.Millisecond)),
		Ejection: Ejection{Consecutive: 3, For: time.Second}}
	mustValid(t, p)
	s := p.NewServer(ServerRand(1)).(*poolState)
	var toB []time.Duration
	for i := range 400 {
		now := time.Duration(i) * 10 * time.Millisecond
		before := requestsOf(s)
		s.Arrive(now, Request{})
		if chosen(s, before) == 1 {
			toB = append(toB, now)
		}
	}
	// b gets arrivals 1, 3, 5 (10, 30, 50 ms); their failures reach the
	// clients at 20, 40, 60 ms: ejected from 60 ms to 1.06 s. Round robin
	// then sends all to a; b's next is the first arrival at or after 1.06 s.
	want := []time.Duration{10 * time.Millisecond, 30 * time.Millisecond, 50 * time.Millisecond, 1060 * time.Millisecond}
	if len(toB) < 4 || !reflect.DeepEqual(toB[:4], want) {
		t.Fatalf("requests to b at %v, want %v first", toB, want)
	}
	if got := stateCounter(t, s, "pool.b.ejections"); got < 2 {
		t.Errorf("b ejected %d times, want it ejected again after it came back", got)
	}
	if got := stateCounter(t, s, "pool.a.ejections"); got != 0 {
		t.Errorf("a ejected %d times", got)
	}
}

// With ejection limited to one member of two, the second failing member
// stays in.
func TestPoolEjectsAtMostMaxEjected(t *testing.T) {
	p := &Pool{Members: members(rejectAll(0), rejectAll(0)), Ejection: Ejection{Consecutive: 1, For: time.Hour}}
	mustValid(t, p)
	s := p.NewServer(ServerRand(1)).(*poolState)
	for i := range 10 {
		s.Arrive(time.Duration(i)*time.Millisecond, Request{})
	}
	if got := stateCounter(t, s, "pool.ejections"); got != 1 {
		t.Errorf("%d ejections, want 1", got)
	}
	p.Ejection.MaxEjected = 2
	if err := p.Validate(); err == nil {
		t.Error("ejecting both members of two was accepted")
	}
}

func TestPoolValidate(t *testing.T) {
	ok := admitAll(0)
	for _, p := range []*Pool{
		{},
		{Members: []PoolMember{{Name: "a", Server: ok}, {Name: "a", Server: ok}}},
		{Members: []PoolMember{{Name: "a b", Server: ok}}},
		{Members: []PoolMember{{Name: "a"}}},
		{Members: []PoolMember{{Name: "a", Server: &Contention{}}}},
		{Members: members(ok), Balancer: Balancer(len(Balancers))},
		{Members: members(ok, ok), Ejection: Ejection{Consecutive: 1}},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: accepted", p)
		}
	}
}

// The pool's capacity is the sum of its members'; a crashed member's is
// 0 while it is down.
func TestPoolCapacity(t *testing.T) {
	q := func() *Queue { return &Queue{Concurrency: 5, Service: Exponential{Mean: 100 * time.Millisecond}} }
	p := &Pool{Members: members(&Crash{Down: []DownWindow{{5 * time.Second, 10 * time.Second}}, Inner: q()}, q())}
	got := p.Capacity()
	want := []CapacityStep{{0, 100, time.Second}, {5 * time.Second, 50, time.Second}, {10 * time.Second, 100, time.Second}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("capacity %v, want %v", got, want)
	}
}

// A crash fails what the server holds, in service and queued, at the
// instant it crashes; refuses what arrives while it is down; and comes
// back empty. A phase of 0 workers, by contrast, holds its queue.
func TestCrashFailsInFlightAtOnce(t *testing.T) {
	inner := &Queue{Concurrency: 1, Service: Fixed(time.Second)}
	c := &Crash{Down: []DownWindow{{From: 1500 * time.Millisecond, Until: 3 * time.Second}}, Inner: inner}
	mustValid(t, c)
	s := c.NewServer(ServerRand(1))
	ms := time.Millisecond
	type step struct {
		at      time.Duration
		want    time.Duration
		success bool
	}
	for _, st := range []step{
		{0, time.Second, true},                    // done before the crash
		{100 * ms, 1500 * ms, false},              // in service at the crash (would end at 2 s)
		{200 * ms, 1500 * ms, false},              // queued (would start at 2 s)
		{2 * time.Second, 2 * time.Second, false}, // down: refused at once
		{3 * time.Second, 4 * time.Second, true},  // back, empty: served at once
		{3 * time.Second, 5 * time.Second, true},
	} {
		r := s.Arrive(st.at, Request{})
		if r.At != st.want || (r.Outcome.Class == policies.Success) != st.success {
			t.Errorf("arrival at %v: %v at %v, want success=%v at %v", st.at, r.Outcome.Class, r.At, st.success, st.want)
		}
		if !st.success && r.Outcome != (policies.Outcome{Class: policies.Transient}) {
			t.Errorf("arrival at %v: %+v, want a connection reset", st.at, r.Outcome)
		}
	}
	if got := stateCounter(t, s, "crash.reset"); got != 2 {
		t.Errorf("crash.reset %d, want 2", got)
	}
	if got := stateCounter(t, s, "crash.refused"); got != 1 {
		t.Errorf("crash.refused %d, want 1", got)
	}
	if got := stateCounter(t, s, "server.served"); got != 5 {
		t.Errorf("server.served %d over both lives, want 5", got)
	}

	// Capacity 0 (a phase with no workers) keeps the queue: the request
	// waits for the workers to come back.
	zero := &Queue{Phases: []WorkerPhase{{Duration: 1500 * ms, Concurrency: 1}, {Duration: 1500 * ms, Concurrency: 0}, {Concurrency: 1}}, Service: Fixed(time.Second)}
	zs := zero.NewServer(ServerRand(1))
	zs.Arrive(0, Request{})
	if r := zs.Arrive(1600*ms, Request{}); r.Outcome.Class != policies.Success || r.At != 4*time.Second {
		t.Errorf("capacity 0: %v at %v, want success at 4s", r.Outcome.Class, r.At)
	}
}

func TestCrashValidate(t *testing.T) {
	ok := admitAll(0)
	for _, c := range []*Crash{
		{Inner: ok},
		{Down: []DownWindow{{From: time.Second, Until: time.Second}}, Inner: ok},
		{Down: []DownWindow{{From: -1, Until: time.Second}}, Inner: ok},
		{Down: []DownWindow{{0, 2 * time.Second}, {time.Second, 3 * time.Second}}, Inner: ok},
		{Down: []DownWindow{{0, time.Second}}},
		{Down: []DownWindow{{0, time.Second}}, Inner: &Contention{}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
}

// The stability-sim setting, run through the engine: the same result
// whatever GOMAXPROCS, and the crashed member's resets reach clients.
func TestPoolCrashRunDeterministic(t *testing.T) {
	q := func() *Queue { return &Queue{Concurrency: 5, Service: Exponential{Mean: 100 * time.Millisecond}} }
	for _, b := range Balancers {
		cfg := Config{
			Seed: 3,
			Server: &Pool{Balancer: b.Balancer, Ejection: Ejection{Consecutive: 5, For: time.Second}, Members: members(
				&Crash{Down: []DownWindow{{5 * time.Second, 10 * time.Second}}, Inner: q()}, q())},
			Workload: &OpenLoop{Rates: ConstantRate(70), Until: 20 * time.Second},
			Policy:   Policy{Name: "fixed-3", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 4, AttemptTimeout: time.Second}},
		}
		var results []Result
		for _, procs := range []int{1, 2} {
			old := runtime.GOMAXPROCS(procs)
			r, err := Run(cfg)
			runtime.GOMAXPROCS(old)
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, r)
		}
		if !reflect.DeepEqual(results[0], results[1]) {
			t.Errorf("%s: results differ with GOMAXPROCS", b.Name)
		}
		if v, _ := results[0].Counters.Get("crash.reset"); v == 0 {
			t.Errorf("%s: no request reset by the crash", b.Name)
		}
	}
}

// A cooldown by count: the failure that takes a member past AllowedFails
// (counted until For after the last) cools it down for For.
func TestPoolCooldownByCount(t *testing.T) {
	ms := time.Millisecond
	p := &Pool{Members: members(rejectAll(0), admitAll(0)), Cooldown: Cooldown{AllowedFails: 2, For: time.Second}}
	mustValid(t, p)
	s := p.NewServer(ServerRand(1)).(*poolState)
	var toA []time.Duration
	for i := range 40 {
		now := time.Duration(i) * 100 * ms
		before := requestsOf(s)
		s.Arrive(now, Request{})
		if chosen(s, before) == 0 {
			toA = append(toA, now)
		}
	}
	// a fails at 0, 200, 400 ms (answers at once, counted at the next
	// arrival): the third is past 2 allowed, so a is out from 400 ms to
	// 1.4 s; round robin gives it the arrival at 1.4 s, then 1.6, 1.8 (out
	// to 2.8 s), ...
	want := []time.Duration{0, 200 * ms, 400 * ms, 1400 * ms, 1600 * ms, 1800 * ms, 2800 * ms}
	if len(toA) < len(want) || !reflect.DeepEqual(toA[:len(want)], want) {
		t.Fatalf("requests to a at %v, want %v first", toA, want)
	}
	if got := stateCounter(t, s, "pool.a.cooldowns"); got < 3 {
		t.Errorf("a cooled down %d times", got)
	}
}

// A cooldown by rate: a member failing 5% of requests is never cooled
// down at 50%, while one failing most of them is; a count of 3 cools down
// both, for failures at random.
func TestPoolCooldownByRate(t *testing.T) {
	flaky := func(p float64) *ErrorMix {
		return &ErrorMix{Latency: Fixed(10 * time.Millisecond), Phases: []MixPhase{{Outcomes: []MixOutcome{{P: p, Reject: Rejection{Status: 500, Class: policies.Transient}}}}}}
	}
	run := func(c Cooldown) *poolState {
		p := &Pool{Members: members(flaky(0.05), flaky(0.8)), Cooldown: c}
		mustValid(t, p)
		s := p.NewServer(ServerRand(3)).(*poolState)
		for i := range 6000 {
			s.Arrive(time.Duration(i)*10*time.Millisecond, Request{})
		}
		return s
	}
	s := run(Cooldown{FailureRate: 0.5, For: 5 * time.Second})
	if a, b := stateCounter(t, s, "pool.a.cooldowns"), stateCounter(t, s, "pool.b.cooldowns"); a != 0 || b == 0 {
		t.Errorf("by rate: a cooled down %d times, b %d; want 0 and some", a, b)
	}
	s = run(Cooldown{AllowedFails: 3, For: 5 * time.Second})
	if a := stateCounter(t, s, "pool.a.cooldowns"); a == 0 {
		t.Errorf("by count: a (5%% failures) never cooled down")
	}
}

// With every member cooled down the pool answers 429 at once, retry-after
// the time until the first is back.
func TestPoolAllCooledDown(t *testing.T) {
	p := &Pool{Members: members(rejectAll(0)), Cooldown: Cooldown{AllowedFails: 1, For: time.Second}}
	mustValid(t, p)
	s := p.NewServer(ServerRand(1))
	s.Arrive(0, Request{})
	s.Arrive(10*time.Millisecond, Request{}) // the second failure: out until 1.01 s
	r := s.Arrive(300*time.Millisecond, Request{})
	if r.Outcome.Status != 429 || r.Outcome.Class != policies.RetryAfter || r.Outcome.ServerWait != 710*time.Millisecond || r.At != 300*time.Millisecond {
		t.Errorf("all out: %+v at %v, want 429 retry-after 710ms at once", r.Outcome, r.At)
	}
	if got := stateCounter(t, s, "pool.unavailable"); got != 1 {
		t.Errorf("pool.unavailable %d", got)
	}
	for _, bad := range []Cooldown{{AllowedFails: 1}, {AllowedFails: 1, FailureRate: 0.5, For: 1}, {FailureRate: 1, For: 1}} {
		q := &Pool{Members: members(rejectAll(0)), Cooldown: bad}
		if err := q.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// Sinkholing (stability-sim's lb-sinkholing): a crashed member refuses at
// once, so it has nothing outstanding and least-outstanding sends it
// almost everything while it is down; outlier ejection takes it out.
func TestPoolLeastOutstandingSinkholeAndEjection(t *testing.T) {
	q := func() *Queue { return &Queue{Concurrency: 20, Service: Exponential{Mean: 50 * time.Millisecond}} }
	share := func(e Ejection) (float64, Result) {
		p := &Pool{Balancer: LeastOutstanding, Ejection: e, Members: members(
			&Crash{Down: []DownWindow{{8 * time.Second, 18 * time.Second}}, Inner: q()}, q(), q())}
		r, err := Run(Config{Seed: 1, Server: p, Workload: &OpenLoop{Rates: ConstantRate(150), Until: 30 * time.Second},
			Policy: Policy{Name: "once", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		return float64(counter(r, "pool.a.requests")) / float64(counter(r, "pool.requests")), r
	}
	sink, r := share(Ejection{})
	ejected, re := share(Ejection{Consecutive: 5, For: time.Second})
	// A fair share is a third. Down for a third of the run, a gets most
	// of the traffic then without ejection, and little with it.
	if sink < 0.45 || ejected > 0.3 {
		t.Errorf("a's share of requests: %.2f without ejection (want > 0.45), %.2f with (want < 0.3)", sink, ejected)
	}
	if re.Completed <= r.Completed {
		t.Errorf("ejection completed %d, no more than the sinkhole's %d", re.Completed, r.Completed)
	}
}

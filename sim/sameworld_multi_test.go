package sim_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// The multi-client same-world test: several clients share one Gate and one
// Throttle, so the coordination paths of both worlds run — the simulator's
// ready/send events and Do's wait-to-start (gate wait, throttle wait, a gate
// closed again while waiting for a throttle slot, a budget that ends at the
// gate or before a slot). The simulator runs the clients through sim.Run;
// production runs one policies.Do per client in its own goroutine, inside
// one synctest bubble, against an in-memory server written separately from
// the simulator's that implements the same capacity windows on the fake
// clock. Each goroutine draws from the same per-client random stream as the
// simulator and starts at the same time. Both worlds must make the same
// attempts (client, start time, admitted), schedule the same retries, and
// end every client the same way at the same time.
//
// Ties. When two clients act at the same instant, the order in which they
// touch the shared gate, throttle and server decides who gets which throttle
// slot and which admission. The simulator breaks such ties by event
// insertion order; goroutines woken at one fake instant run in whatever
// order the Go scheduler picks. Both orders are legitimate (in production,
// clients never act at the same nanosecond), but they give the clients
// different slots, so different attempt times and from then on different
// random draws: per-client equality is then impossible in principle, and a
// test relying on it would be flaky, not wrong. So the scenario is chosen so
// that no two clients ever act at the same instant: start times are spread
// at random, backoff is full jitter (nanosecond draws), throttle slots are
// distinct by construction, and — the one structural source of ties — at
// most one client waits at the gate when it opens (every waiter would wake
// at the same instant). TestSameCoordinationInSimulatorAndProduction runs
// such a scenario with Do on its default clock (plain sleeps in the
// bubble); it checks on the simulator's event trace that no tie happens
// and fails, deterministically and with the instant named, if a change to
// the scenario or to the code brings one in: then pick another seed rather
// than weaken the comparison.
//
// Herds at the gate's opening are too important to leave out, so
// TestSameHerdInSimulatorAndProduction allows them and runs Do under a
// seqClock (below), which wakes goroutines due at the same instant in the
// event queue's order, (time, insertion sequence), and one at a time. It
// decides nothing for a client; it only fixes the order the Go scheduler
// would otherwise pick.

// clientAttempt is one attempt as the server saw it.
type clientAttempt struct {
	client   int
	at       time.Duration
	admitted bool
}

func (a clientAttempt) String() string { return fmt.Sprintf("c%d@%v:%v", a.client, a.at, a.admitted) }

func sortAttempts(as []clientAttempt) {
	slices.SortFunc(as, func(a, b clientAttempt) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.client, b.client))
	})
}

// multiScenario is a burst of clients sharing one gated, throttled policy.
type multiScenario struct {
	seed         uint64
	clients      int
	spread       time.Duration
	phases       []sim.Phase
	responseTime time.Duration
	pol          sim.Policy
	// server, if set, is the server in place of the phases (produceLimited).
	server sim.ServerModel
}

func (s *multiScenario) config() sim.Config {
	var server sim.ServerModel = &sim.CapacityWindows{Phases: s.phases, ResponseTime: sim.Fixed(s.responseTime)}
	if s.server != nil {
		server = s.server
	}
	return sim.Config{
		Seed:     s.seed,
		Server:   server,
		Workload: sim.Burst{Clients: s.clients, Spread: s.spread},
		Policy:   s.pol,
	}
}

// world is what one world did, per client where it matters.
type world struct {
	attempts []clientAttempt       // sorted by (time, client)
	events   []events              // hook events, per client
	final    []string              // how each client ended, with when
	reasons  []policies.StopReason // why each client stopped; NotStopped if it completed
	stopIn   []string              // simulator only: the kind of event a give-up came in
	causes   []error               // production only: each give-up's Cause
}

func newWorld(n int) *world {
	return &world{events: make([]events, n), final: make([]string, n), reasons: make([]policies.StopReason, n), stopIn: make([]string, n), causes: make([]error, n)}
}

// giveUpFinal is a client's end when it gave up.
func giveUpFinal(e *policies.Error) string {
	return fmt.Sprintf("gave up (%v) after %d attempts at +%v", e.Reason, e.Attempts, e.Elapsed)
}

func completedFinal(elapsed time.Duration) string {
	return fmt.Sprintf("completed at +%v", elapsed)
}

// traced is one event the simulator processed.
type traced struct {
	at     time.Duration
	client int
	kind   string
	sent   bool // the event sent an attempt
}

// simulateMulti runs the scenario through the simulator, attributing
// everything the run reports to the client whose event is being processed.
func simulateMulti(t *testing.T, s *multiScenario) (*world, []traced, sim.Result) {
	t.Helper()
	w := newWorld(s.clients)
	hooks := make([]policies.Hooks, s.clients)
	for i := range hooks {
		hooks[i] = w.events[i].hooks()
	}
	var trace []traced
	cur := -1
	cfg := s.config()
	cfg.Observer.OnDecision = func(at time.Duration, _ int, class policies.Class) {
		w.attempts = append(w.attempts, clientAttempt{cur, at, class == policies.Success})
		trace[len(trace)-1].sent = true
	}
	cfg.Hooks = policies.Hooks{
		OnRetryScheduled: func(ev policies.RetryEvent) { hooks[cur].OnRetryScheduled(ev) },
		OnFallback:       func(ev policies.FallbackEvent) { hooks[cur].OnFallback(ev) },
		OnGiveUp: func(e *policies.Error) {
			hooks[cur].OnGiveUp(e)
			w.final[cur], w.reasons[cur] = giveUpFinal(e), e.Reason
			w.stopIn[cur] = trace[len(trace)-1].kind
		},
	}
	res, err := sim.RunTraced(cfg, func(at time.Duration, client int, kind string) {
		cur = client
		trace = append(trace, traced{at: at, client: client, kind: kind})
	})
	if err != nil {
		t.Fatalf("sim.Run: %v", err)
	}
	// A client that did not give up completed with its last response.
	for i := range w.final {
		if w.final[i] != "" {
			continue
		}
		last := -1
		for k, e := range trace {
			if e.client == i {
				last = k
			}
		}
		if last < 0 || trace[last].kind != "response" {
			t.Fatalf("simulator: client %d neither gave up nor ended with a response", i)
		}
		w.final[i] = completedFinal(trace[last].at - sim.ClientStart(s.seed, i, s.spread))
	}
	sortAttempts(w.attempts)
	return w, trace, res
}

// fakeServer is the production side's server: the capacity windows of the
// scenario on the fake clock, written independently of the simulator's
// model. A phase admits up to Admit requests in each window (windows
// aligned to multiples of Window from t = 0) and rejects the rest.
type fakeServer struct {
	phases []sim.Phase
	mu     sync.Mutex
	served map[[2]int64]int // (phase, window) -> requests admitted
}

func (f *fakeServer) arrive(at time.Duration) (bool, sim.Rejection) {
	phase, end := 0, f.phases[0].Duration
	for phase < len(f.phases)-1 && at >= end {
		phase++
		end += f.phases[phase].Duration
	}
	p := f.phases[phase]
	if p.Admit == 0 {
		return false, p.Reject
	}
	key := [2]int64{int64(phase), int64(at / p.Window)}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.served[key] >= p.Admit {
		return false, p.Reject
	}
	f.served[key]++
	return true, sim.Rejection{}
}

// produceMulti runs the scenario through policies.Do: one goroutine per
// client, sharing one Gate and one Throttle, in one synctest bubble. With
// seq nil every wait is a plain sleep on the bubble's fake clock (Do's
// default clock) and goroutines woken at the same instant run in the
// scheduler's order; with a seqClock every wait goes through it, and it
// wakes them one at a time in the event queue's order.
func produceMulti(t *testing.T, s *multiScenario, sequenced bool) *world {
	t.Helper()
	w := newWorld(s.clients)
	synctest.Test(t, func(t *testing.T) {
		srv := &fakeServer{phases: s.phases, served: map[[2]int64]int{}}
		shared := sharedOptions(t, s.pol)
		origin := time.Now()
		var seq *seqClock
		var clock machine.Clock = realClockInBubble{}
		if sequenced {
			seq = &seqClock{reqs: make(chan sleepRequest)}
			clock = seq
		}
		var mu sync.Mutex // guards w.attempts
		client := func(i int) {
			if seq != nil {
				defer seq.finish()
				seq.until(origin.Add(sim.ClientStart(s.seed, i, s.spread)))
			} else {
				time.Sleep(sim.ClientStart(s.seed, i, s.spread))
			}
			start := time.Now()
			op := func(ctx context.Context, a policies.Attempt) error {
				now := time.Since(origin)
				admitted, rej := srv.arrive(now)
				mu.Lock()
				w.attempts = append(w.attempts, clientAttempt{i, now, admitted})
				mu.Unlock()
				if dl, ok := ctx.Deadline(); ok && time.Until(dl) < s.responseTime {
					// The budget ends first: wait for it, then give up on
					// the response, as a real client's request would.
					_ = clock.Sleep(ctx, time.Until(dl))
					<-ctx.Done()
					return ctx.Err()
				}
				if err := clock.Sleep(ctx, s.responseTime); err != nil {
					return err
				}
				if admitted {
					return nil
				}
				return httpRejection(rej)
			}
			opts := []policies.Option{
				policies.WithPolicy(s.pol.Rules),
				policies.WithRand(rand.New(sim.ClientPolicyStream(s.seed, i))),
				policies.WithHooks(w.events[i].hooks()),
			}
			opts = append(opts, shared...)
			ctx := t.Context()
			if seq != nil {
				ctx = machine.WithClock(ctx, seq)
			}
			err := policies.Do(ctx, op, opts...)
			var pe *policies.Error
			switch {
			case err == nil:
				w.final[i] = completedFinal(time.Since(start))
			case errors.As(err, &pe):
				w.final[i], w.reasons[i], w.causes[i] = giveUpFinal(pe), pe.Reason, pe.Cause
			default:
				w.final[i] = "unexpected error: " + err.Error()
			}
		}
		if seq != nil {
			seq.run(t, s.clients, client)
			return
		}
		var wg sync.WaitGroup
		for i := range s.clients {
			wg.Go(func() { client(i) })
		}
		wg.Wait()
	})
	sortAttempts(w.attempts)
	return w
}

// sharedOptions builds, once for all clients, the production counterparts
// of the simulated policy's coordination, in its order: gate, throttle and
// in-flight limiter through their own options, the retry controls through
// WithCoordinator, and the model fallback.
func sharedOptions(t *testing.T, pol sim.Policy) []policies.Option {
	t.Helper()
	var opts []policies.Option
	for _, spec := range pol.Coordinators {
		switch spec := spec.(type) {
		case machine.GateConfig:
			opts = append(opts, policies.WithGate(&policies.Gate{}))
		case machine.ThrottleConfig:
			thr, err := policies.NewThrottle(spec.Count, spec.Per, spec.MaxQueue)
			if err != nil {
				t.Fatal(err)
			}
			opts = append(opts, policies.WithThrottle(thr))
		case machine.LimitConfig:
			lim, err := policies.NewLimiter(spec.MaxInFlight, spec.MaxQueue)
			if err != nil {
				t.Fatal(err)
			}
			opts = append(opts, policies.WithLimiter(lim))
		default:
			c, err := spec.NewCoordinator()
			if err != nil {
				t.Fatal(err)
			}
			opts = append(opts, policies.WithCoordinator(c))
		}
	}
	if f := pol.Fallback; f != nil {
		opts = append(opts, policies.WithFallback(&policies.ModelFallback{Primary: "primary", Fallback: "fallback", After: f.After, Sticky: f.Sticky, Consecutive: f.Consecutive}))
	}
	return opts
}

// realClockInBubble is the real clock, which synctest fakes; the same as
// Do's default clock.
type realClockInBubble struct{}

func (realClockInBubble) Now() time.Time { return time.Now() }

func (realClockInBubble) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// seqClock is a machine.Clock on the bubble's fake clock that runs the
// client goroutines one at a time: every wait is a request to its run loop,
// which wakes the waiters in order of (wake time, order of asking) — the
// simulator's (time, insertion sequence) — and lets the next one go only
// once the woken goroutine waits again or finishes. It decides nothing a
// client does; it only fixes the order of clients woken at the same
// instant, which production leaves to the Go scheduler. Anything else that
// blocks a client would stall the loop, and synctest reports the deadlock.
type seqClock struct {
	reqs chan sleepRequest
}

// sleepRequest asks to be woken at at; a nil wake says the goroutine has
// finished.
type sleepRequest struct {
	at   time.Time
	wake chan struct{}
}

func (c *seqClock) Now() time.Time { return time.Now() }

// Sleep waits for d. The test never cancels its context, so it ignores ctx.
func (c *seqClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil // as Do's clock: no wait, so the goroutine runs on
	}
	c.until(time.Now().Add(d))
	return nil
}

// until waits until at, even when that is now.
func (c *seqClock) until(at time.Time) {
	wake := make(chan struct{})
	c.reqs <- sleepRequest{at: at, wake: wake}
	<-wake
}

func (c *seqClock) finish() { c.reqs <- sleepRequest{} }

// run starts client(0), ..., client(n-1), each once the one before waits
// for its start (so their first waits are numbered 0..n-1, as the
// simulator's first events are), then wakes the waiters one at a time until
// every client has finished.
func (c *seqClock) run(t *testing.T, n int, client func(i int)) {
	type waiter struct {
		sleepRequest
		seq int
	}
	var waiting []waiter
	seq := 0
	add := func(r sleepRequest) {
		if r.wake == nil {
			return
		}
		waiting = append(waiting, waiter{r, seq})
		seq++
		slices.SortFunc(waiting, func(a, b waiter) int {
			return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.seq, b.seq))
		})
	}
	for i := range n {
		go client(i)
		add(<-c.reqs)
	}
	for len(waiting) > 0 {
		next := waiting[0]
		waiting = waiting[1:]
		d := time.Until(next.at)
		if d < 0 {
			t.Errorf("seqClock: a wait until %v is woken late, at %v", next.at, time.Now())
		}
		time.Sleep(d) // every client is blocked: the fake clock jumps
		close(next.wake)
		add(<-c.reqs)
	}
}

// gatedScenario: 8 clients over 1.5 s, full jitter with a shared gate, a
// throttle of 4 starts per second and a 5 s budget, against a server that
// is overloaded (529) for 1.5 s, then rate-limits (429, retry-after 0.2 s)
// for 1.5 s, then is unavailable (503) for 1 s, then admits 2 requests per
// 0.5 s window. The retry-after is kept shorter than the throttle's spacing
// so that, for the seed used, no two clients wait at the gate at once.
func gatedScenario(seed uint64) *multiScenario {
	return &multiScenario{
		seed:    seed,
		clients: 8,
		spread:  1500 * time.Millisecond,
		phases: []sim.Phase{
			{Duration: 1500 * time.Millisecond, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}},
			{Duration: 1500 * time.Millisecond, Reject: sim.Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: 200 * time.Millisecond}},
			{Duration: time.Second, Reject: sim.Rejection{Status: 503, Class: policies.Capacity}},
			{Admit: 2, Window: 500 * time.Millisecond, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}},
		},
		responseTime: 100 * time.Millisecond,
		pol: sim.Policy{
			Name: "gated",
			Rules: policies.Policy{
				Backoff:     policies.FullJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 4 * time.Second},
				MaxAttempts: 12,
				Deadline:    5 * time.Second,
				// Server waits are honoured exactly: without jitter, clients
				// told the same retry-after at the same instant would return
				// together.
				ServerWaitJitter: 50 * time.Millisecond,
			},
			Coordinators: []machine.Spec{machine.GateConfig{}, machine.ThrottleConfig{Count: 4, Per: time.Second}},
		},
	}
}

// coverage counts the coordination paths a simulator trace went through.
type coverage struct {
	gateWaits  int      // a client woke at the gate's opening
	herds      int      // instants at which two or more clients woke at the gate's opening
	slotWaits  int      // a client woke at its throttle slot
	gateAtSlot int      // ... and found the gate closed again
	ties       []string // instants at which two or more clients acted
	statuses   map[int]int
	// completions, and give-ups by reason; waitDeadlines are give-ups by
	// budget while waiting for the gate or a throttle slot.
	completions   int
	giveUps       map[policies.StopReason]int
	waitDeadlines int
}

func coverageOf(trace []traced, w *world) coverage {
	c := coverage{statuses: map[int]int{}, giveUps: map[policies.StopReason]int{}}
	prev := map[int]traced{}
	gateWoken := map[time.Duration]int{}
	for k, e := range trace {
		if k > 0 && trace[k-1].at == e.at && trace[k-1].client != e.client {
			c.ties = append(c.ties, fmt.Sprintf("clients %d and %d at %v", trace[k-1].client, e.client, e.at))
		}
		p, seen := prev[e.client]
		switch {
		case e.kind == "ready" && seen && p.kind != "response":
			c.gateWaits++ // woken at the gate's opening
			if gateWoken[e.at]++; gateWoken[e.at] == 2 {
				c.herds++
			}
		case e.kind == "send":
			c.slotWaits++
			if !e.sent {
				c.gateAtSlot++
			}
		}
		prev[e.client] = e
	}
	for _, ev := range w.events {
		for _, r := range ev.retries {
			c.statuses[r.Outcome.Status]++
		}
	}
	for i, r := range w.reasons {
		switch {
		case r == machine.NotStopped:
			c.completions++
		case r == policies.StopDeadline && w.stopIn[i] != "response":
			c.waitDeadlines++
			fallthrough
		default:
			c.giveUps[r]++
		}
	}
	return c
}

// sameWorlds compares what the two worlds did.
func sameWorlds(t *testing.T, simW, prodW *world) {
	t.Helper()
	if !slices.Equal(simW.attempts, prodW.attempts) {
		t.Errorf("attempts differ:\nsimulator:  %v\nproduction: %v", simW.attempts, prodW.attempts)
	}
	for i := range simW.final {
		if !slices.Equal(simW.events[i].retries, prodW.events[i].retries) {
			t.Errorf("client %d: retry events differ:\nsimulator:  %+v\nproduction: %+v", i, simW.events[i].retries, prodW.events[i].retries)
		}
		if !slices.Equal(simW.events[i].giveUps, prodW.events[i].giveUps) {
			t.Errorf("client %d: give-ups differ:\nsimulator:  %v\nproduction: %v", i, simW.events[i].giveUps, prodW.events[i].giveUps)
		}
		if !slices.Equal(simW.events[i].fallbacks, prodW.events[i].fallbacks) {
			t.Errorf("client %d: fallbacks differ:\nsimulator:  %+v\nproduction: %+v", i, simW.events[i].fallbacks, prodW.events[i].fallbacks)
		}
		if simW.final[i] != prodW.final[i] {
			t.Errorf("client %d: simulator %s, production %s", i, simW.final[i], prodW.final[i])
		}
	}
}

func logWorld(t *testing.T, w *world, res sim.Result, cov coverage) {
	t.Helper()
	ties := len(cov.ties)
	cov.ties = nil
	t.Logf("coverage: %+v; %d ties", cov, ties)
	t.Logf("simulator: %d attempts, %d completed, gave up by %v", res.Attempts, res.Completed, res.GaveUpBy)
	for i, f := range w.final {
		t.Logf("client %d: %s", i, f)
	}
}

func TestSameCoordinationInSimulatorAndProduction(t *testing.T) {
	s := gatedScenario(9)
	simW, trace, res := simulateMulti(t, s)
	cov := coverageOf(trace, simW)
	if len(cov.ties) > 0 {
		t.Fatalf("the scenario has clients acting at the same instant (%v): their order is the event queue's in the simulator and the scheduler's in production, so the worlds cannot be compared client by client; pick another seed", cov.ties)
	}
	logWorld(t, simW, res, cov)
	if len(simW.attempts) != res.Attempts {
		t.Errorf("recorded %d attempts, simulator counted %d", len(simW.attempts), res.Attempts)
	}

	sameWorlds(t, simW, produceMulti(t, s, false))
	// Without ties, waking clients one at a time in the event queue's order
	// changes nothing: a check of the seqClock the herd test relies on.
	sameWorlds(t, simW, produceMulti(t, s, true))

	// The scenario must exercise what it claims.
	switch {
	case cov.gateWaits == 0, cov.slotWaits == 0, cov.gateAtSlot == 0:
		t.Errorf("coordination paths not covered: %+v", cov)
	case cov.statuses[429] == 0, cov.statuses[529] == 0:
		t.Errorf("outcomes not covered: %v", cov.statuses)
	case cov.completions == 0 || cov.completions == s.clients:
		t.Errorf("want some clients to complete and some to give up: %v", simW.final)
	}
}

// herdScenario: 10 clients over 0.3 s against a long rate-limited phase,
// so the gate releases several clients at once and the throttle (4 starts
// per second, at most 7 waiting) spaces or refuses them. A retry-after long
// against the budget makes the budget end for some at the gate or before
// their throttle slot.
func herdScenario(seed uint64, retryAfter, budget time.Duration) *multiScenario {
	s := gatedScenario(seed)
	s.clients = 10
	s.spread = 300 * time.Millisecond
	s.phases = []sim.Phase{
		{Duration: time.Second, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}},
		{Duration: 3 * time.Second, Reject: sim.Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: retryAfter}},
		{Duration: time.Second, Reject: sim.Rejection{Status: 503, Class: policies.Capacity}},
		{Admit: 2, Window: 500 * time.Millisecond, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}},
	}
	s.pol.Rules.Deadline = budget
	s.pol.Rules.ServerWaitJitter = 0                                                        // herds wanted
	s.pol.Coordinators[1] = machine.ThrottleConfig{Count: 4, Per: time.Second, MaxQueue: 7} // after the gate
	return s
}

// TestSameHerdInSimulatorAndProduction lets the gate release several
// clients at the same instant, the case the test above must avoid. The
// production side runs under a seqClock, which wakes clients due at the
// same instant in the simulator's order; everything each client then does
// is Do's own decision. This compares the two worlds' coordination where
// it matters most: a herd at the gate's opening, spaced by the throttle,
// with the throttle's queue full for some and the budget running out at the
// gate or before a slot for others. The cases together must cover all of
// that.
func TestSameHerdInSimulatorAndProduction(t *testing.T) {
	var total coverage
	var atGate, atThrottle int
	for _, tc := range []struct {
		name               string
		retryAfter, budget time.Duration
	}{
		{"retry-after 1s, budget 6s", time.Second, 6 * time.Second},
		{"retry-after 2s, budget 5s", 2 * time.Second, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := herdScenario(1, tc.retryAfter, tc.budget)
			simW, trace, res := simulateMulti(t, s)
			cov := coverageOf(trace, simW)
			logWorld(t, simW, res, cov)

			prodW := produceMulti(t, s, true)
			sameWorlds(t, simW, prodW)

			// Budget give-ups while waiting: at the gate (it opens too
			// late; no cause) or at the throttle (no slot in time).
			for i, r := range simW.reasons {
				if r == policies.StopDeadline && simW.stopIn[i] != "response" {
					var closed *policies.GateClosedError
					switch {
					case errors.As(prodW.causes[i], &closed):
						atGate++
					case errors.Is(prodW.causes[i], policies.ErrTooLate):
						atThrottle++
					}
				}
			}
			total.herds += cov.herds
			total.gateAtSlot += cov.gateAtSlot
			total.completions += cov.completions
			if total.statuses == nil {
				total.statuses, total.giveUps = map[int]int{}, map[policies.StopReason]int{}
			}
			for k, v := range cov.statuses {
				total.statuses[k] += v
			}
			for k, v := range cov.giveUps {
				total.giveUps[k] += v
			}
		})
	}
	t.Logf("budget ended at the gate for %d clients, before a throttle slot for %d", atGate, atThrottle)
	switch {
	case total.herds == 0, total.gateAtSlot == 0, atGate == 0, atThrottle == 0:
		t.Errorf("coordination paths not covered: %+v; at gate %d, at throttle %d", total, atGate, atThrottle)
	case total.giveUps[policies.StopQueueFull] == 0:
		t.Errorf("no client found the throttle's queue full: %+v", total)
	case total.statuses[429] == 0, total.statuses[529] == 0:
		t.Errorf("outcomes not covered: %v", total.statuses)
	case total.completions == 0:
		t.Errorf("no client completed")
	}
}

// limitedScenario: 12 clients over 1 s share an in-flight limit of 3 with
// a queue of at most 4, and switch to the fallback model after 2 capacity
// failures, against a server that is overloaded for 2 s, then admits 3
// requests per 0.5 s window, with slow responses (0.3 s) so that attempts
// overlap and queue. No gate, no throttle: the limiter alone coordinates.
func limitedScenario(seed uint64) *multiScenario {
	return &multiScenario{
		seed:    seed,
		clients: 12,
		spread:  time.Second,
		phases: []sim.Phase{
			{Duration: 2 * time.Second, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}},
			{Admit: 3, Window: 500 * time.Millisecond, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}},
		},
		responseTime: 300 * time.Millisecond,
		pol: sim.Policy{
			Name: "limited",
			Rules: policies.Policy{
				Backoff:     policies.FullJitter{Base: 300 * time.Millisecond, Factor: 2, Cap: 2 * time.Second},
				MaxAttempts: 8,
				Deadline:    6 * time.Second,
			},
			Coordinators: []machine.Spec{machine.LimitConfig{MaxInFlight: 3, MaxQueue: 4}},
			Fallback:     &sim.Fallback{After: 2},
		},
	}
}

// TestSameLimiterInSimulatorAndProduction runs the in-flight limiter and
// the model fallback in both worlds. A slot freed by a response passes to
// the first queued client at that instant: in the simulator as an event the
// limiter schedules, in production as a wake-up on the queued goroutine's
// channel. The seqClock fixes the order of clients due at one instant; the
// hand-off itself is causal (the releasing client only sleeps afterwards).
func TestSameLimiterInSimulatorAndProduction(t *testing.T) {
	s := limitedScenario(3)
	simW, _, res := simulateMulti(t, s)
	logWorld(t, simW, res, coverage{})
	sameWorlds(t, simW, produceMulti(t, s, false))

	// The scenario must exercise what it claims: attempts that waited for
	// a slot (started at the instant another client's response arrived),
	// a full queue, fallbacks, completions.
	handoffs := 0
	for _, a := range simW.attempts {
		for _, b := range simW.attempts {
			if b.client != a.client && b.at+s.responseTime == a.at {
				handoffs++
				break
			}
		}
	}
	switch {
	case handoffs == 0:
		t.Errorf("no attempt waited for a limiter slot")
	case res.GaveUpBy[policies.StopQueueFull] == 0:
		t.Errorf("no client found the limiter's queue full: %v", res.GaveUpBy)
	case res.Fallbacks == 0:
		t.Errorf("no client switched to the fallback model")
	case res.Completed == 0:
		t.Errorf("no client completed")
	}
	t.Logf("%d hand-offs, %d fallbacks", handoffs, res.Fallbacks)
}

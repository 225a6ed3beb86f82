package sim

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"

	"github.com/retrysim/retrysim/internal/racetest"
)

const (
	ms  = time.Millisecond
	sec = time.Second
)

// reference is domain.md's reference scenario: all requests get 529 for 2 s,
// then 6 per 1-second window; responses after 0.1 s; 20 clients, 8 attempts,
// 20 s deadline.
func reference(p Policy) Config {
	p.Rules.MaxAttempts, p.Rules.Deadline = 8, 20*sec
	overloaded := Rejection{Status: 529, Class: policies.Capacity}
	return Config{
		Seed: 1,
		Server: &CapacityWindows{
			ResponseTime: Fixed(100 * ms),
			Phases: []Phase{
				{Duration: 2 * sec, Reject: overloaded},
				{Admit: 6, Window: sec, Reject: overloaded},
			},
		},
		Workload: Burst{Clients: 20},
		Policy:   p,
	}
}

var (
	immediate   = Policy{Name: "immediate", Rules: policies.Policy{Backoff: policies.Constant{Wait: 100 * ms}}}
	exponential = Policy{Name: "capped-exponential", Rules: policies.Policy{Backoff: policies.Exponential{Base: 500 * ms, Factor: 2, Cap: 8 * sec}}}
	fullJitter  = Policy{Name: "full-jitter", Rules: policies.Policy{Backoff: policies.FullJitter{Base: 500 * ms, Factor: 2, Cap: 8 * sec}}}
	gated       = Policy{Name: "gated", Coordinators: []machine.Spec{machine.GateConfig{}, machine.ThrottleConfig{Count: 6, Per: sec}},
		Rules: policies.Policy{Backoff: policies.FullJitter{Base: 500 * ms, Factor: 2, Cap: 8 * sec}}}
)

// windows returns the capacity-windows server of c, for tests to change.
func windows(c Config) *CapacityWindows { return c.Server.(*CapacityWindows) }

func mustRun(t *testing.T, c Config) Result {
	t.Helper()
	r, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func repeat(d time.Duration, n int) []time.Duration { return slices.Repeat([]time.Duration{d}, n) }

// Immediate retries every 0.2 s (0.1 s response + 0.1 s wait): its 8
// attempts all land in the 2 s outage (0, 0.2, …, 1.4 s), so every client
// gives up on attempts.
func TestReferenceImmediate(t *testing.T) {
	r := mustRun(t, reference(immediate))
	if r.Completed != 0 || r.Attempts != 160 || r.Retries != 140 || r.GaveUp != 20 || r.GaveUpBy[policies.StopAttempts] != 20 {
		t.Fatalf("got completed %d attempts %d retries %d gave up %d (%v)", r.Completed, r.Attempts, r.Retries, r.GaveUp, r.GaveUpBy)
	}
	if r.Admitted != 0 || r.Rejected != 160 {
		t.Fatalf("server admitted %d rejected %d, want 0 and 160", r.Admitted, r.Rejected)
	}
}

// Capped exponential, worked by hand: every client sends at 0, 0.6, 1.7 and
// 3.8 s (waits 0.5, 1, 2 after 0.1 s responses). At 3.8 s six of the twenty
// are admitted (window [3,4)); the other 14 wait 4 s and return at 7.9 s, six
// admitted; 8 wait 8 s and return at 16.0 s, six admitted; the last 2 would
// return at 24.1 s, after their 20 s deadline.
func TestReferenceCappedExponential(t *testing.T) {
	r := mustRun(t, reference(exponential))
	if r.Completed != 18 || r.Attempts != 80+14+8 || r.Retries != 82 || r.GaveUpBy[policies.StopDeadline] != 2 || r.GaveUp != 2 {
		t.Fatalf("got completed %d attempts %d retries %d gave up %v", r.Completed, r.Attempts, r.Retries, r.GaveUpBy)
	}
	want := slices.Concat(repeat(3900*ms, 6), repeat(8000*ms, 6), repeat(16100*ms, 6))
	if !slices.Equal(r.Latencies, want) {
		t.Fatalf("latencies %v, want %v", r.Latencies, want)
	}
	if r.LastCompletion != 16100*ms {
		t.Fatalf("last completion %v, want 16.1s", r.LastCompletion)
	}
	if p, _ := r.Percentile(50); p != 8000*ms {
		t.Fatalf("p50 %v, want 8s", p)
	}
}

// Gated spaces all starts at exactly 6 per second from t = 0: the 12 starts
// before 2 s are rejected, and every later start fits its window, so each
// rejected client succeeds on its first retry: 32 attempts, and the 32nd
// start is at 31/6 s.
func TestReferenceGated(t *testing.T) {
	r := mustRun(t, reference(gated))
	if r.Completed != 20 || r.Attempts != 32 || r.Retries != 12 || r.GaveUp != 0 {
		t.Fatalf("got completed %d attempts %d retries %d gave up %d", r.Completed, r.Attempts, r.Retries, r.GaveUp)
	}
	if want := time.Duration(31*int64(sec)/6) + 100*ms; r.LastCompletion != want {
		t.Fatalf("last completion %v, want %v", r.LastCompletion, want)
	}
}

func TestFullJitterDependsOnSeedOnly(t *testing.T) {
	a := mustRun(t, reference(fullJitter))
	b := mustRun(t, reference(fullJitter))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave different results")
	}
	differs := false
	for seed := uint64(2); seed < 6 && !differs; seed++ {
		c := reference(fullJitter)
		c.Seed = seed
		differs = !slices.Equal(mustRun(t, c).Latencies, a.Latencies)
	}
	if !differs {
		t.Fatal("seeds 2..5 all gave seed 1's latencies")
	}
	if a.Completed+a.GaveUp != a.Clients {
		t.Fatalf("completed %d + gave up %d != clients %d", a.Completed, a.GaveUp, a.Clients)
	}
}

// Adding clients must not change the draws of the existing ones: client i's
// stream depends on (seed, i) only. With a server that admits everything, the
// first 5 clients' latencies are the same in a 5- and a 50-client run.
func TestClientStreamsAreIndependentOfClientCount(t *testing.T) {
	run := func(n int) []time.Duration {
		c := Config{Seed: 9, Workload: Burst{Clients: n, Spread: 10 * sec},
			Server: &CapacityWindows{ResponseTime: Fixed(ms), Phases: []Phase{{Duration: sec, Reject: Rejection{Status: 529, Class: policies.Capacity}}, {Admit: 1 << 30, Window: sec, Reject: Rejection{Status: 529, Class: policies.Capacity}}}},
			Policy: fullJitter}
		c.Policy.Rules.MaxAttempts = 50
		var starts []time.Duration
		c.Observer.OnDecision = func(at time.Duration, _ int, _ policies.Class) { starts = append(starts, at) }
		mustRun(t, c)
		return starts
	}
	small, large := run(5), run(50)
	for _, s := range small {
		if !slices.Contains(large, s) {
			t.Fatalf("request at %v of the 5-client run is missing from the 50-client run", s)
		}
	}
}

func TestDeadlineBoundary(t *testing.T) {
	// One client; 529 for 1 s; constant 0.9 s wait; 0.1 s responses. Attempts
	// start at 0 and 1.0 s. With a 1.1 s deadline the retry is admitted and
	// its response arrives at the deadline itself, in time. With a 1 s
	// deadline the retry at exactly 1.0 s is sent (start == deadline is
	// allowed), but the budget ends before its response: it is cut there and
	// the client gives up. With 999 ms it is not sent.
	for _, tt := range []struct {
		deadline  time.Duration
		completed int
		attempts  int
	}{{1100 * ms, 1, 2}, {sec, 0, 2}, {999 * ms, 0, 1}} {
		c := Config{Seed: 1, Workload: Burst{Clients: 1},
			Server: &CapacityWindows{ResponseTime: Fixed(100 * ms), Phases: []Phase{
				{Duration: sec, Reject: Rejection{Status: 529, Class: policies.Capacity}},
				{Admit: 1, Window: sec, Reject: Rejection{Status: 529, Class: policies.Capacity}}}},
			Policy: Policy{Name: "c", Rules: policies.Policy{Backoff: policies.Constant{Wait: 900 * ms}, Deadline: tt.deadline}}}
		r := mustRun(t, c)
		if r.Completed != tt.completed || r.Attempts != tt.attempts {
			t.Errorf("deadline %v: completed %d attempts %d, want %d and %d", tt.deadline, r.Completed, r.Attempts, tt.completed, tt.attempts)
		}
	}
}

// A rate-limited server's retry-after closes the gate for everyone: with a
// gated policy no request starts while a 429's retry-after is running.
func TestGateHoldsAllClientsAfterRetryAfter(t *testing.T) {
	limited := Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: 2 * sec}
	c := Config{Seed: 3, Workload: Burst{Clients: 30, Spread: 3 * sec},
		Server: &CapacityWindows{ResponseTime: Fixed(100 * ms), Phases: []Phase{{Admit: 2, Window: sec, Reject: limited}}},
		Policy: Policy{Name: "g", Coordinators: []machine.Spec{machine.GateConfig{}}, Rules: policies.Policy{Backoff: policies.Constant{Wait: 10 * ms}, Deadline: 30 * sec}}}
	type request struct {
		at       time.Duration
		admitted bool
	}
	// violations counts requests that started while an earlier 429's
	// retry-after (from its response at a+0.1s to a+2.1s) was running.
	violations := func(c Config) (int, Result) {
		var reqs []request
		c.Observer.OnDecision = func(at time.Duration, _ int, class policies.Class) {
			reqs = append(reqs, request{at, class == policies.Success})
		}
		r := mustRun(t, c)
		n := 0
		for i, q := range reqs {
			for _, p := range reqs[:i] {
				if !p.admitted && p.at+100*ms < q.at && q.at < p.at+2100*ms {
					n++
					break
				}
			}
		}
		return n, r
	}
	n, r := violations(c)
	if n != 0 {
		t.Fatalf("%d requests started while the gate was closed", n)
	}
	if r.Completed != 30 {
		t.Fatalf("gated: completed %d of 30", r.Completed)
	}
	c.Policy.Coordinators = nil
	if n, _ := violations(c); n == 0 {
		t.Fatal("without the gate no request started during a retry-after: the check above proves nothing")
	}
}

// Clients released by a gate at the same instant come back together unless
// the policy jitters server waits: with ServerWaitJitter, no two requests
// start at the same time.
func TestServerWaitJitterSpreadsTheHerd(t *testing.T) {
	limited := Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: 2 * sec}
	c := Config{Seed: 3, Workload: Burst{Clients: 30},
		Server: &CapacityWindows{ResponseTime: Fixed(100 * ms), Phases: []Phase{{Admit: 5, Window: sec, Reject: limited}}},
		Policy: Policy{Name: "g", Coordinators: []machine.Spec{machine.GateConfig{}}, Rules: policies.Policy{Backoff: policies.Constant{Wait: 10 * ms}, Deadline: 60 * sec}}}
	sameInstant := func(c Config) int {
		starts := map[time.Duration]int{}
		c.Observer.OnDecision = func(at time.Duration, _ int, _ policies.Class) { starts[at]++ }
		mustRun(t, c)
		n := 0
		for at, k := range starts {
			if k > 1 && at > 0 { // the burst itself starts together
				n += k
			}
		}
		return n
	}
	if n := sameInstant(c); n == 0 {
		t.Fatal("without jitter no requests started together: the check proves nothing")
	}
	c.Policy.Rules.ServerWaitJitter = 200 * ms
	if n := sameInstant(c); n != 0 {
		t.Errorf("with jitter, %d requests started at an instant shared with another", n)
	}
}

func TestThrottleQueueFullGivesUp(t *testing.T) {
	c := reference(Policy{Name: "q", Coordinators: []machine.Spec{machine.ThrottleConfig{Count: 1, Per: sec, MaxQueue: 5}},
		Rules: policies.Policy{Backoff: policies.Constant{Wait: 100 * ms}}})
	r := mustRun(t, c)
	// 20 clients ready at 0 s with 1 start per second: the first starts now,
	// 5 more may wait; the other 14 find the queue full.
	if r.GaveUpBy[policies.StopQueueFull] < 14 {
		t.Fatalf("queue-full give-ups %d, want at least 14 (%v)", r.GaveUpBy[policies.StopQueueFull], r.GaveUpBy)
	}
}

func TestSpreadStartsWithinInterval(t *testing.T) {
	c := reference(immediate)
	c.Workload = Burst{Clients: 20, Spread: 3 * sec}
	// A server that admits everything: one request per client, at its start.
	windows(c).Phases = []Phase{{Admit: 100, Window: sec, Reject: Rejection{Status: 529, Class: policies.Capacity}}}
	var starts []time.Duration
	c.Observer.OnDecision = func(at time.Duration, _ int, _ policies.Class) { starts = append(starts, at) }
	mustRun(t, c)
	if len(starts) != 20 {
		t.Fatalf("%d requests, want one per client", len(starts))
	}
	if slices.Min(starts) < 0 || slices.Max(starts) >= 3*sec {
		t.Fatalf("starts %v outside [0, 3s)", starts)
	}
	if slices.Max(starts)-slices.Min(starts) < sec {
		t.Fatalf("starts %v are bunched, not spread over 3s", starts)
	}
}

func TestTerminalRejectionStopsAtOnce(t *testing.T) {
	c := reference(exponential)
	windows(c).Phases = []Phase{{Reject: Rejection{Status: 400, Class: policies.Terminal}}}
	r := mustRun(t, c)
	if r.Attempts != 20 || r.GaveUpBy[policies.StopTerminal] != 20 {
		t.Fatalf("attempts %d gave up %v, want 20 terminal give-ups after one attempt each", r.Attempts, r.GaveUpBy)
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	good := reference(exponential)
	for name, mutate := range map[string]func(c *Config){
		"no clients":  func(c *Config) { c.Workload = Burst{} },
		"no workload": func(c *Config) { c.Workload = nil },
		"no limits":   func(c *Config) { c.Policy.Rules.MaxAttempts, c.Policy.Rules.Deadline = 0, 0 },
		"no backoff":  func(c *Config) { c.Policy.Rules.Backoff = nil },
		"no server":   func(c *Config) { c.Server = nil },
		"zero window": func(c *Config) {
			c.Server = &CapacityWindows{ResponseTime: Fixed(0), Phases: []Phase{{Admit: 1, Reject: Rejection{Class: policies.Capacity}}}}
		},
		"bad throttle":    func(c *Config) { c.Policy.Coordinators = []machine.Spec{machine.ThrottleConfig{Count: 0, Per: sec}} },
		"negative spread": func(c *Config) { c.Workload = Burst{Clients: 1, Spread: -1} },
		"bad limit":       func(c *Config) { c.Policy.Coordinators = []machine.Spec{machine.LimitConfig{MaxInFlight: 0}} },
	} {
		c := good
		srv := *windows(good)
		c.Server = &srv
		mutate(&c)
		if _, err := Run(c); err == nil {
			t.Errorf("%s: Run accepted the config", name)
		}
	}
}

func TestPercentileNearestRank(t *testing.T) {
	r := Result{Latencies: []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}
	for p, want := range map[float64]time.Duration{50: 5, 95: 10, 99: 10, 10: 1, 11: 2, 100: 10} {
		if got, _ := r.Percentile(p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if _, ok := (&Result{}).Percentile(50); ok {
		t.Error("percentile of nothing reported ok")
	}
}

// A run that would push virtual time past the horizon fails with a clear
// error rather than letting time.Duration wrap around.
func TestRunStopsAtTheHorizon(t *testing.T) {
	// One admission per 1000 h: the 200th client would finish at 199,000 h.
	c := Config{Seed: 1, Workload: Burst{Clients: 200},
		Server: &CapacityWindows{ResponseTime: Fixed(0), Phases: []Phase{{Admit: 1, Window: 1000 * time.Hour, Reject: Rejection{Status: 529, Class: policies.Capacity}}}},
		Policy: Policy{Name: "slow", Rules: policies.Policy{Backoff: policies.Constant{Wait: 1000 * time.Hour}, MaxAttempts: 1000}}}
	_, err := Run(c)
	if err == nil || !strings.Contains(err.Error(), "horizon") {
		t.Fatalf("err = %v, want a horizon error", err)
	}
	c.Workload = Burst{Clients: 50} // 50 × 1000 h fits
	if _, err := Run(c); err != nil {
		t.Fatal(err)
	}
}

// Retries with no wait against a server that answers in no time would never
// advance virtual time: the engine's stall guard ends such a run with an
// error, whatever the backoff (here full jitter with a 1 ns cap, whose every
// draw is 0), while the same policy with max attempts runs.
func TestStalledVirtualTimeFails(t *testing.T) {
	backoffs := []policies.Backoff{
		policies.Constant{},
		policies.FullJitter{Base: 1, Factor: 2, Cap: 1},
		policies.EqualJitter{Base: 1, Factor: 2, Cap: 1},
	}
	if racetest.Enabled {
		backoffs = backoffs[:1] // each runs the stall guard's millions of events on one goroutine
	}
	for _, b := range backoffs {
		c := reference(immediate)
		windows(c).ResponseTime = Fixed(0)
		c.Policy.Rules.Backoff = b
		c.Policy.Rules.MaxAttempts = 0
		if _, err := Run(c); err == nil || !strings.Contains(err.Error(), "virtual time stopped") {
			t.Fatalf("%v: err = %v, want the stall error", b, err)
		}
		c.Policy.Rules.MaxAttempts = 3
		if r, err := Run(c); err != nil || r.Attempts != 60 {
			t.Fatalf("%v with max attempts: %v, %d attempts", b, err, r.Attempts)
		}
	}
}

// A per-attempt timeout: the client stops waiting after it and retries, as
// policies.Do does with WithAttemptTimeout. Responses take 2 s, the timeout
// is 0.5 s, the backoff 0.1 s: attempts start at 0, 0.6 and 1.2 s, each
// times out (transient), and the third is the last.
func TestAttemptTimeout(t *testing.T) {
	var starts []time.Duration
	var gaveUp *policies.Error
	var retries []policies.RetryEvent
	c := Config{Seed: 1, Workload: Burst{Clients: 1},
		Server:   &CapacityWindows{ResponseTime: Fixed(2 * sec), Phases: []Phase{{Admit: 10, Window: sec, Reject: Rejection{Status: 529, Class: policies.Capacity}}}},
		Policy:   Policy{Name: "t", Rules: policies.Policy{Backoff: policies.Constant{Wait: 100 * ms}, MaxAttempts: 3, AttemptTimeout: 500 * ms}},
		Observer: Observer{OnDecision: func(at time.Duration, _ int, _ policies.Class) { starts = append(starts, at) }},
		Hooks: policies.Hooks{
			OnRetryScheduled: func(e policies.RetryEvent) { retries = append(retries, e) },
			OnGiveUp:         func(e *policies.Error) { gaveUp = e },
		}}
	r := mustRun(t, c)
	if !slices.Equal(starts, []time.Duration{0, 600 * ms, 1200 * ms}) {
		t.Errorf("attempts at %v, want 0, 0.6 s, 1.2 s", starts)
	}
	if r.Completed != 0 || r.Admitted != 3 || gaveUp == nil || gaveUp.Reason != policies.StopAttempts || gaveUp.Elapsed != 1700*ms {
		t.Errorf("completed %d, admitted %d, give-up %+v; want the server's work counted, no completion, attempts at 1.7 s", r.Completed, r.Admitted, gaveUp)
	}
	for _, e := range retries {
		if e.Outcome != (policies.Outcome{Class: policies.Transient}) {
			t.Errorf("retry after %+v, want a transient timeout", e.Outcome)
		}
	}
	// Without the timeout the first attempt completes at 2 s.
	c.Policy.Rules.AttemptTimeout = 0
	if r := mustRun(t, c); r.Completed != 1 || r.LastCompletion != 2*sec {
		t.Errorf("without a timeout: completed %d at %v", r.Completed, r.LastCompletion)
	}
}

// The fallback model's own capacity: the primary model rejects everything,
// the fallback admits 5 requests a second. Operations that switch after 2
// capacity failures complete there; with the capacity shared (no
// FallbackPhases), nobody completes.
func TestFallbackModelCapacity(t *testing.T) {
	overloaded := Rejection{Status: 529, Class: policies.Capacity}
	c := Config{Seed: 1, Workload: Burst{Clients: 10},
		Server: &CapacityWindows{ResponseTime: Fixed(100 * ms),
			Phases:         []Phase{{Reject: overloaded}},
			FallbackPhases: []Phase{{Admit: 5, Window: sec, Reject: overloaded}}},
		Policy: Policy{Name: "f", Fallback: &Fallback{After: 2},
			Rules: policies.Policy{Backoff: policies.Constant{Wait: 400 * ms}, MaxAttempts: 6}}}
	r := mustRun(t, c)
	// Attempts at 0 and 0.5 s on the primary; at 1.0 s on the fallback,
	// 5 admitted in [1 s, 2 s) (3 attempts each), the other 5 rejected again
	// at 1.5 s and admitted at 2.0 s (5 attempts each): 40 attempts.
	if r.Fallbacks != 10 || r.Completed != 10 || r.Attempts != 40 || r.LastCompletion != 2100*ms {
		t.Errorf("fallbacks %d, completed %d, attempts %d, last %v; want 10, 10, 40, 2.1s", r.Fallbacks, r.Completed, r.Attempts, r.LastCompletion)
	}
	windows(c).FallbackPhases = nil
	if r := mustRun(t, c); r.Completed != 0 || r.Fallbacks != 10 {
		t.Errorf("shared capacity: completed %d, fallbacks %d; want 0 and 10", r.Completed, r.Fallbacks)
	}
}

// A policy that does not retry capacity failures sends one attempt per
// client into the reference outage (all 529) and stops there, terminal.
func TestNoCapacityRetriesInTheOutage(t *testing.T) {
	p := fullJitter
	p.Rules.NoCapacityRetries = true
	r := mustRun(t, reference(p))
	if r.Attempts != 20 || r.GaveUpBy[policies.StopTerminal] != 20 || r.Completed != 0 {
		t.Errorf("attempts %d, gave up %v, completed %d", r.Attempts, r.GaveUpBy, r.Completed)
	}
}

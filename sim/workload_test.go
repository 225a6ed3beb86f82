package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// recorder wraps a server model and records every request and response.
type recorder struct {
	inner ServerModel
	log   *[]exchange
}

type exchange struct {
	at  time.Duration
	req Request
	res Response
}

func (m recorder) Validate() error { return m.inner.Validate() }
func (m recorder) NewServer(rng *rand.Rand) Server {
	return &recorderState{m.inner.NewServer(rng), m.log}
}

type recorderState struct {
	inner Server
	log   *[]exchange
}

func (s *recorderState) Arrive(now time.Duration, req Request) Response {
	res := s.inner.Arrive(now, req)
	*s.log = append(*s.log, exchange{now, req, res})
	return res
}

func (s *recorderState) ReportCounters(c *Counters) {
	if r, ok := s.inner.(CounterReporter); ok {
		r.ReportCounters(c)
	}
}

// admitAll answers every request with a success after d.
func admitAll(d time.Duration) *CapacityWindows {
	return &CapacityWindows{ResponseTime: Fixed(d), Phases: []Phase{{Admit: 1 << 30, Window: time.Hour, Reject: overloaded}}}
}

var once = Policy{Name: "once", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 1}}

func arrivals(log []exchange) []time.Duration {
	var at []time.Duration
	for _, e := range log {
		at = append(at, e.at)
	}
	return at
}

func drawStarts(w *OpenLoop, seed uint64) []time.Duration {
	return w.DrawStarts(rand.New(rand.NewPCG(seed, seed)), nil)
}

// Regular open loops by hand: arrival k comes when Λ(t) = k.
func TestOpenLoopRegularByHand(t *testing.T) {
	for _, tt := range []struct {
		name string
		w    OpenLoop
		want []time.Duration
	}{
		// 10 per second: Λ(t) = 10t, arrival k at k/10 s; the 10th is at Until.
		{"constant", OpenLoop{Rates: ConstantRate(10), Until: sec},
			[]time.Duration{100 * ms, 200 * ms, 300 * ms, 400 * ms, 500 * ms, 600 * ms, 700 * ms, 800 * ms, 900 * ms}},
		// 1/s, then 10/s in [1 s, 2 s), then 1/s: Λ = 1 at 1 s, 2…10 at
		// 1.1…1.9 s, 11 at 2 s, 12 at 3 s = Until.
		{"spike", OpenLoop{Rates: SpikeRate(1, 10, sec, sec), Until: 3 * sec},
			[]time.Duration{sec, 1100 * ms, 1200 * ms, 1300 * ms, 1400 * ms, 1500 * ms, 1600 * ms, 1700 * ms, 1800 * ms, 1900 * ms, 2 * sec}},
		// Rate 10t per second from 0 to 20/s at 2 s: Λ(t) = 5t², arrival k
		// at √(k/5) s: 0.447…, 0.632…, 0.774…, 0.894…, 1 s, …; Λ(2 s) = 20,
		// then 20/s: arrival 21 at 2.05 s.
		{"ramp", OpenLoop{Rates: RampRate(0, 20, 0, 2*sec), Until: 2100 * ms}, nil},
		// Nothing for 1 s, then 2/s: arrivals at 1.5 s and 2 s.
		{"zero then steady", OpenLoop{Rates: []RateStep{{PerSecond: 0}, {At: sec, PerSecond: 2}}, Until: 2001 * ms},
			[]time.Duration{1500 * ms, 2 * sec}},
		// A rate that falls to 0 for ever: arrivals stop.
		{"stop", OpenLoop{Rates: []RateStep{{PerSecond: 2}, {At: sec, PerSecond: 0}}, Until: time.Hour},
			[]time.Duration{500 * ms, sec}},
	} {
		tt.w.Regular = true
		if tt.name == "ramp" {
			for k := 1; k <= 20; k++ {
				tt.want = append(tt.want, time.Duration(math.Round(math.Sqrt(float64(k)/5)*1e9)))
			}
			tt.want = append(tt.want, 2050*ms)
		}
		if err := tt.w.Validate(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := drawStarts(&tt.w, 1); !slices.Equal(got, tt.want) {
			t.Errorf("%s: arrivals %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A Poisson open loop has about Λ(Until) arrivals with exponential gaps; a
// seed fixes them.
func TestOpenLoopPoisson(t *testing.T) {
	w := &OpenLoop{Rates: SpikeRate(1000, 3000, 40*sec, 10*sec), Until: 100 * sec}
	if e := w.Expected(); e != 120_000 {
		t.Fatalf("expected %v arrivals, want 120000", e)
	}
	got := drawStarts(w, 5)
	if n := float64(len(got)); math.Abs(n-120_000) > 4*math.Sqrt(120_000) {
		t.Errorf("%v arrivals, want 120000 ± 1400", n)
	}
	if !slices.IsSorted(got) || got[0] < 0 || got[len(got)-1] >= w.Until {
		t.Error("arrivals not sorted within [0, until)")
	}
	inSpike := 0
	for _, at := range got {
		if at >= 40*sec && at < 50*sec {
			inSpike++
		}
	}
	if math.Abs(float64(inSpike)-30_000) > 4*math.Sqrt(30_000) {
		t.Errorf("%d arrivals in the spike, want 30000 ± 700", inSpike)
	}
	if !slices.Equal(got, drawStarts(w, 5)) || slices.Equal(got, drawStarts(w, 6)) {
		t.Error("arrivals depend on something besides the stream")
	}
}

func TestOpenLoopValidation(t *testing.T) {
	for _, tt := range []struct {
		w    OpenLoop
		want string
	}{
		{OpenLoop{Until: sec}, "no rates"},
		{OpenLoop{Rates: ConstantRate(1)}, "until"},
		{OpenLoop{Rates: []RateStep{{At: 1, PerSecond: 1}}, Until: sec}, "must start at 0"},
		{OpenLoop{Rates: []RateStep{{PerSecond: 1}, {At: 0, PerSecond: 1}}, Until: sec}, "not after"},
		{OpenLoop{Rates: ConstantRate(-1), Until: sec}, ">= 0"},
		{OpenLoop{Rates: ConstantRate(math.NaN()), Until: sec}, ">= 0"},
		{OpenLoop{Rates: []RateStep{{PerSecond: 1, Ramp: true}}, Until: sec}, "cannot ramp"},
		{OpenLoop{Rates: ConstantRate(1e6), Until: time.Hour}, "at most"},
		{OpenLoop{Rates: ConstantRate(1), Until: sec, InputTokens: -1}, "token"},
	} {
		if err := tt.w.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one containing %q", tt.w, err, tt.want)
		}
	}
}

// An open loop through the engine: one operation per drawn arrival, the
// engine's workload stream decides them.
func TestOpenLoopRun(t *testing.T) {
	var log []exchange
	w := &OpenLoop{Rates: SpikeRate(1, 10, sec, sec), Until: 3 * sec, Regular: true, InputTokens: 7}
	r := mustRun(t, Config{Seed: 1, Server: recorder{admitAll(100 * ms), &log}, Workload: w, Policy: once})
	if want := drawStarts(w, 0); !slices.Equal(arrivals(log), want) || r.Clients != len(want) || r.Completed != len(want) {
		t.Errorf("requests at %v (%d clients, %d completed), want %v", arrivals(log), r.Clients, r.Completed, want)
	}
	if log[0].req.InputTokens != 7 {
		t.Errorf("input tokens %d, want the workload's 7", log[0].req.InputTokens)
	}
	w.Regular = false
	a, b := mustRun(t, Config{Seed: 1, Server: admitAll(0), Workload: w, Policy: once}), mustRun(t, Config{Seed: 2, Server: admitAll(0), Workload: w, Policy: once})
	if a.Clients == b.Clients && a.LastCompletion == b.LastCompletion {
		t.Error("two seeds drew the same Poisson arrivals")
	}
}

// A closed loop by hand: 3 workers, 2 operations each, no think time,
// against one worker serving each request in 100 ms. The first three
// arrive at 0 and finish at 100, 200, 300 ms; each worker's second
// arrives as its first ends (100, 200, 300 ms) and waits for the single
// worker: it starts at 300, 400, 500 ms and ends 100 ms later.
func TestClosedLoopByHand(t *testing.T) {
	var log []exchange
	w := &ClosedLoop{Workers: 3, PerWorker: 2}
	r := mustRun(t, Config{Seed: 1, Server: recorder{&Queue{Concurrency: 1, Service: Fixed(100 * ms)}, &log}, Workload: w, Policy: once})
	if want := []time.Duration{0, 0, 0, 100 * ms, 200 * ms, 300 * ms}; !slices.Equal(arrivals(log), want) {
		t.Errorf("arrivals %v, want %v", arrivals(log), want)
	}
	if want := []time.Duration{100 * ms, 200 * ms, 300 * ms, 300 * ms, 300 * ms, 300 * ms}; !slices.Equal(r.Latencies, want) || r.Clients != 6 {
		t.Errorf("latencies %v (%d operations), want %v", r.Latencies, r.Clients, want)
	}
	if r.LastCompletion != 600*ms || counter(r, "server.served") != 6 || counter(r, "server.busy_time") != int64(600*ms) {
		t.Errorf("last completion %v, server %+v", r.LastCompletion, r.Counters)
	}
}

// Think time and Until: 2 workers against an instant-admitting server with
// 100 ms responses and 50 ms of thinking start at 0, 150, 300 ms, …; with
// Until 200 ms the third start (300 ms) is not made. A worker goes on after
// a give-up.
func TestClosedLoopThinkAndUntil(t *testing.T) {
	var log []exchange
	w := &ClosedLoop{Workers: 2, PerWorker: 3, Think: Fixed(50 * ms)}
	r := mustRun(t, Config{Seed: 1, Server: recorder{admitAll(100 * ms), &log}, Workload: w, Policy: once})
	if want := []time.Duration{0, 0, 150 * ms, 150 * ms, 300 * ms, 300 * ms}; !slices.Equal(arrivals(log), want) || r.LastCompletion != 400*ms {
		t.Errorf("arrivals %v, last completion %v", arrivals(log), r.LastCompletion)
	}
	w.Until = 200 * ms
	if r := mustRun(t, Config{Seed: 1, Server: admitAll(100 * ms), Workload: w, Policy: once}); r.Clients != 4 {
		t.Errorf("with until: %d operations, want 4", r.Clients)
	}
	w.Until = 0
	never := &CapacityWindows{ResponseTime: Fixed(100 * ms), Phases: []Phase{{Reject: overloaded}}}
	if r := mustRun(t, Config{Seed: 1, Server: never, Workload: w, Policy: once}); r.Clients != 6 || r.GaveUp != 6 {
		t.Errorf("against a server that rejects all: %d operations, %d gave up; want 6, 6", r.Clients, r.GaveUp)
	}
}

// sessionServer admits everything except in [200 ms, 1 s); responses take
// 100 ms.
func sessionServer() *CapacityWindows {
	return &CapacityWindows{ResponseTime: Fixed(100 * ms), Phases: []Phase{
		{Duration: 200 * ms, Admit: 1 << 30, Window: time.Hour, Reject: overloaded},
		{Duration: 800 * ms, Reject: overloaded},
		{Admit: 1 << 30, Window: time.Hour, Reject: overloaded},
	}}
}

// Agent sessions by hand: one session of 3 turns, one attempt per call,
// against sessionServer. Turns 1 and 2 run at 0 and 0.1 s; turn 3's call at
// 0.2 s is rejected at 0.3 s and gives up. With a pause of 1 s the session
// goes on at 1.3 s: ResumeTurn repeats turn 3 (done at 1.4 s, 4 calls, 1
// repeated); ResumeRestart runs turns 1, 2, 3 again (done at 1.6 s, 6
// calls, 3 repeated). With no repeats allowed the session fails.
func TestAgentSessionsByHand(t *testing.T) {
	for _, tt := range []struct {
		resume     ResumeMode
		repeats    int
		arrivals   []time.Duration
		turnTokens []int // input tokens of each call
		sessions   sessionStats
		last       time.Duration
	}{
		{ResumeTurn, 2, []time.Duration{0, 100 * ms, 200 * ms, 1300 * ms}, []int{100, 150, 200, 200},
			sessionStats{Started: 1, Completed: 1, Resumed: 1, TurnsRepeated: 1}, 1400 * ms},
		{ResumeRestart, 2, []time.Duration{0, 100 * ms, 200 * ms, 1300 * ms, 1400 * ms, 1500 * ms}, []int{100, 150, 200, 100, 150, 200},
			sessionStats{Started: 1, Completed: 1, Resumed: 1, TurnsRepeated: 3, TokensWasted: (100 + 10) + (150 + 10)}, 1600 * ms},
		{ResumeTurn, 0, []time.Duration{0, 100 * ms, 200 * ms}, []int{100, 150, 200},
			sessionStats{Started: 1, Failed: 1, TokensWasted: (100 + 10) + (150 + 10)}, 200 * ms},
	} {
		var log []exchange
		w := &AgentSessions{Sessions: 1, Turns: 3, Resume: tt.resume, Pause: sec, MaxRepeats: tt.repeats, InputTokens: 100, InputGrowth: 50, OutputTokens: 10}
		r := mustRun(t, Config{Seed: 1, Server: recorder{sessionServer(), &log}, Workload: w, Policy: once})
		var tokens []int
		for _, e := range log {
			tokens = append(tokens, e.req.InputTokens)
			if e.req.OutputTokens != 10 {
				t.Errorf("%v: output tokens %d, want 10", tt.resume, e.req.OutputTokens)
			}
		}
		if !slices.Equal(arrivals(log), tt.arrivals) || !slices.Equal(tokens, tt.turnTokens) || !slices.Equal(r.Counters, countersOf(tt.sessions.report)) ||
			r.LastCompletion != tt.last || r.Clients != len(tt.arrivals) || r.GaveUp != 1 {
			t.Errorf("%v, %d repeats: calls at %v with input tokens %v, sessions %+v, last completion %v, %d operations, %d gave up",
				tt.resume, tt.repeats, arrivals(log), tokens, r.Counters, r.LastCompletion, r.Clients, r.GaveUp)
		}
	}
}

// Many sessions with think time, spread starts and retries: the counts
// add up, and the run is a function of the seed.
func TestAgentSessionsCountsAddUp(t *testing.T) {
	for _, resume := range []ResumeMode{ResumeTurn, ResumeRestart} {
		w := &AgentSessions{Sessions: 200, Turns: 5, Think: Exponential{Mean: 300 * ms}, Spread: 2 * sec, Resume: resume, Pause: 500 * ms, MaxRepeats: 2}
		c := Config{Seed: 4, Server: &CapacityWindows{ResponseTime: Fixed(100 * ms), Phases: []Phase{{Admit: 50, Window: sec, Reject: overloaded}}},
			Workload: w, Policy: Policy{Name: "fj", Rules: policies.Policy{Backoff: policies.FullJitter{Base: 100 * ms, Factor: 2, Cap: sec}, MaxAttempts: 3}}}
		r := mustRun(t, c)
		n := func(name string) int { return int(counter(r, "sessions."+name)) }
		if n("started") != 200 || n("completed")+n("failed") != 200 || n("failed") == 0 || n("resumed") == 0 || r.GaveUp != n("resumed")+n("failed") || r.Completed+r.GaveUp != r.Clients {
			t.Errorf("%v: sessions %+v, operations %d, completed %d, gave up %d", resume, r.Counters, r.Clients, r.Completed, r.GaveUp)
		}
		if again := mustRun(t, c); !slices.Equal(again.Counters, r.Counters) || !slices.Equal(again.Latencies, r.Latencies) {
			t.Errorf("%v: the same seed gave a different run", resume)
		}
	}
}

func TestChainedValidation(t *testing.T) {
	for _, tt := range []struct {
		w    Workload
		want string
	}{
		{&ClosedLoop{PerWorker: 1}, "worker"},
		{&ClosedLoop{Workers: 1}, "operation per worker"},
		{&ClosedLoop{Workers: 1 << 20, PerWorker: 1 << 20}, "at most"},
		{&ClosedLoop{Workers: 1, PerWorker: 1, Think: Uniform{Min: 2, Max: 1}}, "think"},
		{&AgentSessions{Turns: 1}, "session"},
		{&AgentSessions{Sessions: 1}, "turn"},
		{&AgentSessions{Sessions: 1, Turns: 1, MaxRepeats: -1}, "repeats"},
		{&AgentSessions{Sessions: 1, Turns: 1, Resume: 7}, "resume"},
		{&AgentSessions{Sessions: 1 << 16, Turns: 1 << 10, MaxRepeats: 1 << 10, Resume: ResumeRestart}, "at most"},
		{&AgentSessions{Sessions: 1, Turns: 1, Background: Background{Share: 1.5}}, "background share"},
		{&AgentSessions{Sessions: 1, Turns: 1, Background: Background{Share: 0.5, Priority: 101}}, "background priority"},
	} {
		if err := tt.w.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one containing %q", tt.w, err, tt.want)
		}
	}
}

// badChain names an operation out of order; the run fails with an error.
type badChain struct{ Burst }

func (badChain) NewChain() Chain { return badChainState{} }

type badChainState struct{}

func (badChainState) Leaders() int { return 1 }
func (badChainState) Next(int, time.Duration, bool, *rand.Rand) (int, time.Duration, bool) {
	return 2, 0, true
}

func TestChainMustNameTheNextOperation(t *testing.T) {
	_, err := Run(Config{Seed: 1, Server: admitAll(ms), Workload: badChain{Burst{Clients: 3}}, Policy: once})
	if err == nil || !strings.Contains(err.Error(), "want operation 1") {
		t.Fatalf("err = %v", err)
	}
}

// Arrivals every 0.1 s from 0.1 s through a throttle of one start a
// second. Shared by all (one process), starts are 1 s apart: 0.1, 1.1,
// 2.1, 3.1 s. Dealt in turn to two processes, each throttles its own:
// process 0 starts its arrivals of 0.1 and 0.3 s at 0.1 and 1.1 s, process
// 1 those of 0.2 and 0.4 s at 0.2 and 1.2 s. Responses take 10 ms.
func TestOpenLoopProcessesHaveTheirOwnRetryLayer(t *testing.T) {
	for _, tt := range []struct {
		processes int
		latencies []time.Duration
	}{
		{1, []time.Duration{10 * ms, 910 * ms, 1810 * ms, 2710 * ms}},
		{2, []time.Duration{10 * ms, 10 * ms, 810 * ms, 810 * ms}},
	} {
		w := &OpenLoop{Rates: ConstantRate(10), Until: 450 * ms, Regular: true, Processes: tt.processes}
		c := Config{Seed: 1, Server: &CapacityWindows{ResponseTime: Fixed(10 * ms), Phases: []Phase{{Admit: 100, Window: sec, Reject: overloaded}}},
			Workload: w, Policy: Policy{Name: "throttled", Coordinators: []machine.Spec{machine.ThrottleConfig{Count: 1, Per: sec}},
				Rules: policies.Policy{Backoff: policies.Constant{Wait: ms}, MaxAttempts: 1}}}
		r := mustRun(t, c)
		if !slices.Equal(r.Latencies, tt.latencies) {
			t.Errorf("%d processes: latencies %v, want %v", tt.processes, r.Latencies, tt.latencies)
		}
	}
	bad := &OpenLoop{Rates: ConstantRate(10), Until: sec, Processes: -1}
	if err := bad.Validate(); err == nil {
		t.Error("negative processes accepted")
	}
}

// StartTimes gives the starts the engine uses: for a burst spread over
// time (a start stream per operation) and an open loop (drawn from the
// workload stream), each operation's first attempt is sent at its start
// when nothing holds it.
func TestStartTimesAreTheEngines(t *testing.T) {
	for _, w := range []Workload{Burst{Clients: 50, Spread: sec}, &OpenLoop{Rates: ConstantRate(40), Until: 2 * sec}} {
		c := reference(immediate)
		c.Seed, c.Workload = 9, w
		first := map[int]time.Duration{}
		c.Observer.OnSend = func(at time.Duration, op int, retry bool) {
			if !retry {
				first[op] = at
			}
		}
		mustRun(t, c)
		starts := StartTimes(c.Seed, w)
		if len(starts) != len(first) || len(starts) == 0 {
			t.Fatalf("%T: %d starts, %d first attempts", w, len(starts), len(first))
		}
		for i, s := range starts {
			if first[i] != s {
				t.Errorf("%T: operation %d starts at %v, first sent at %v", w, i, s, first[i])
			}
		}
	}
}

// 100 arrivals dealt to 1,000,000 processes: only the 100 processes that
// have an operation get a retry layer, and the run is the one in which
// each arrival has a process of its own (processes = 100).
func TestOpenLoopBuildsOnlyTheRetryLayersOfProcessesThatRun(t *testing.T) {
	c := Config{Seed: 1, Server: FailWithProbability(0.1, Rejection{Status: 500, Class: policies.Transient}, Fixed(10*ms)),
		Workload: &OpenLoop{Rates: ConstantRate(10), Until: 10*sec + ms, Regular: true, Processes: MaxProcesses},
		Policy: Policy{Name: "budgeted", Coordinators: []machine.Spec{policies.BreakerConfig{}, policies.RetryThrottlingConfig{}},
			Rules: policies.Policy{Backoff: policies.Constant{Wait: ms}, MaxAttempts: 3}}}
	var r runner
	got, err := r.run(t.Context(), &c)
	if err != nil {
		t.Fatal(err)
	}
	if got.Clients != 100 || len(r.plans) != 100 {
		t.Fatalf("%d operations built %d retry layers, want 100 and 100", got.Clients, len(r.plans))
	}
	c.Workload = &OpenLoop{Rates: ConstantRate(10), Until: 10*sec + ms, Regular: true, Processes: 100}
	if want := mustRun(t, c); !reflect.DeepEqual(got, want) {
		t.Errorf("with 1,000,000 processes: %+v\nwith 100: %+v", got, want)
	}
}

// prioritizedBurst gives operation i priority i mod 3 - 1.
type prioritizedBurst struct{ Burst }

func (prioritizedBurst) Priority(i int) Priority { return Priority(i%3 - 1) }

// Every attempt, retries and layers' inner attempts included, carries its
// operation's priority to the server.
func TestRequestsCarryTheirOperationsPriority(t *testing.T) {
	var log []exchange
	retrying := Policy{Name: "retrying", Rules: policies.Policy{Backoff: policies.Constant{Wait: 10 * ms}, MaxAttempts: 3}}
	server := &CapacityWindows{ResponseTime: Fixed(ms), Phases: []Phase{{Admit: 2, Window: sec, Reject: overloaded}}}
	for _, p := range []Policy{retrying, {Name: "layered", Rules: retrying.Rules, Layers: []Layer{{Name: "sdk", Rules: retrying.Rules}}}} {
		log = log[:0]
		mustRun(t, Config{Seed: 1, Server: recorder{server, &log}, Workload: prioritizedBurst{Burst{Clients: 9}}, Policy: p})
		if len(log) <= 9 {
			t.Fatalf("%s: %d requests, want retries too", p.Name, len(log))
		}
		for _, e := range log {
			if want := Priority(e.req.Op%3 - 1); e.req.Priority != want {
				t.Errorf("%s: op %d sent priority %v, want %v", p.Name, e.req.Op, e.req.Priority, want)
			}
		}
	}
	// A workload that is no Prioritizer takes Config.Priorities.
	log = log[:0]
	shares := PriorityShares{{PriorityCritical, 0.3}, {PrioritySheddable, 0.3}}
	mustRun(t, Config{Seed: 1, Server: recorder{server, &log}, Workload: Burst{Clients: 10}, Policy: retrying, Priorities: shares})
	seen := map[Priority]bool{}
	for _, e := range log {
		if want := shares.Priority(e.req.Op); e.req.Priority != want {
			t.Errorf("shares: op %d sent priority %v, want %v", e.req.Op, e.req.Priority, want)
		}
		seen[e.req.Priority] = true
	}
	if len(seen) != 3 {
		t.Errorf("shares: priorities sent %v, want all three", seen)
	}
	if got := fmt.Sprint(PriorityCritical, PriorityDefault, PrioritySheddable, Priority(7)); got != "critical default sheddable 7" {
		t.Errorf("names: %s", got)
	}
}

// Priority shares, over every prefix of the operations: the k-th listed
// priority has within k of n × share, the rest the default, for shares
// that leave some default and for shares that sum to 1.
func TestPriorityShares(t *testing.T) {
	for _, ps := range []PriorityShares{
		{{PriorityCritical, 0.2}},
		{{PriorityCritical, 0.2}, {PrioritySheddable, 0.3}},
		{{PriorityCritical, 0.1}, {5, 0.25}, {PrioritySheddable, 0.65}},
		{{PrioritySheddable, 1}},
	} {
		if err := ps.Validate(); err != nil {
			t.Fatal(err)
		}
		counts := map[Priority]int{}
		for n := 1; n <= 10_000; n++ {
			counts[ps.Priority(n-1)]++
			left := n
			for k, p := range ps {
				if got, want := float64(counts[p.Priority]), float64(n)*p.Share; math.Abs(got-want) > float64(k+1) {
					t.Fatalf("%v: %d of the first %d are %v, want %g ± %d", ps, counts[p.Priority], n, p.Priority, want, k+1)
				}
				left -= counts[p.Priority]
			}
			if left != counts[PriorityDefault] {
				t.Fatalf("%v: a priority outside the shares among the first %d: %v", ps, n, counts)
			}
		}
	}
	for _, bad := range []PriorityShares{{{PriorityCritical, 0}}, {{PriorityCritical, 0.6}, {PrioritySheddable, 0.5}}, {{101, 0.1}}, {{PriorityCritical, 0.1}, {1, 0.2}}} {
		if bad.Validate() == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// Background calls by hand: one session of 4 turns, half of them
// background (turns 1 and 3, counting from 1: sheddable), one attempt per
// call, against sessionServer. Turn 3's background call at 0.2 s is
// rejected at 0.3 s: the session goes on at once (no think) to turn 4,
// whose call is rejected at 0.4 s; that foreground failure uses the
// session's repeat, and the turn runs again at 1.4 s (pause 1 s) and
// completes at 1.5 s.
func TestAgentSessionsBackgroundByHand(t *testing.T) {
	var log []exchange
	w := &AgentSessions{Sessions: 1, Turns: 4, Pause: sec, MaxRepeats: 1, InputTokens: 100, InputGrowth: 50,
		Background: Background{Share: 0.5, Priority: PrioritySheddable}}
	r := mustRun(t, Config{Seed: 1, Server: recorder{sessionServer(), &log}, Workload: w, Policy: once})
	var prios []Priority
	var tokens []int
	for _, e := range log {
		prios = append(prios, e.req.Priority)
		tokens = append(tokens, e.req.InputTokens)
	}
	wantAt := []time.Duration{0, 100 * ms, 200 * ms, 300 * ms, 1400 * ms}
	wantPrio := []Priority{PrioritySheddable, PriorityDefault, PrioritySheddable, PriorityDefault, PriorityDefault}
	stats := sessionStats{Started: 1, Completed: 1, Resumed: 1, TurnsRepeated: 1, BackgroundFailed: 1}
	want := countersOf(stats.report)
	want.Add("sessions.background_failed", 1)
	if !slices.Equal(arrivals(log), wantAt) || !slices.Equal(prios, wantPrio) || !slices.Equal(tokens, []int{100, 150, 200, 250, 250}) ||
		!slices.Equal(r.Counters, want) || r.LastCompletion != 1500*ms {
		t.Errorf("calls at %v, priorities %v, tokens %v, counters %+v, last completion %v", arrivals(log), prios, tokens, r.Counters, r.LastCompletion)
	}
	if want := sortedLevels(PrioritySheddable, PriorityDefault); !slices.Equal(w.PriorityLevels(), want) {
		t.Errorf("levels %v, want %v", w.PriorityLevels(), want)
	}
	type level struct{ clients, completed, gaveUp int }
	got := map[Priority]level{}
	for _, l := range r.ByPriority {
		got[l.Priority] = level{l.Clients, l.Completed, l.GaveUp}
	}
	if got[PriorityDefault] != (level{3, 2, 1}) || got[PrioritySheddable] != (level{2, 1, 1}) || len(got) != 2 {
		t.Errorf("by priority: %+v", got)
	}
	sumOfLevels(t, "sessions", r)
	for _, tt := range []struct {
		share float64
		turns string
	}{{0.5, "1 3 5 7"}, {0.25, "2 6"}, {1.0 / 3, "2 5 8"}, {1, "1 2 3 4 5 6 7 8"}, {0.01, ""}} {
		var bg []string
		for turn := range int32(8) {
			if (Background{Share: tt.share}).background(turn) {
				bg = append(bg, fmt.Sprint(turn+1))
			}
		}
		if got := strings.Join(bg, " "); got != tt.turns {
			t.Errorf("share %v: background turns %q of 8, want %q", tt.share, got, tt.turns)
		}
	}
}

package sim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// scriptServer answers its k-th request with outcomes[k] at once.
type scriptServer struct {
	outcomes []policies.Outcome
	k        int
}

func (s *scriptServer) Arrive(now time.Duration, _ Request) Response {
	o := s.outcomes[s.k%len(s.outcomes)]
	s.k++
	return Response{Outcome: o, At: now}
}

type scriptModel struct{ outcomes []policies.Outcome }

func (m scriptModel) Validate() error             { return nil }
func (m scriptModel) NewServer(*rand.Rand) Server { return &scriptServer{outcomes: m.outcomes} }
func envoy(a float64, inner ServerModel) *AdmissionControl {
	return &AdmissionControl{SuccessRateThreshold: 0.95, Aggression: a, MaxRejectionProbability: 0.8, SamplingWindow: 30 * time.Second, Inner: inner}
}

// The window as Envoy's thread-local controller keeps it, worked by hand
// for a 3 s window: answers are recorded when they come (here at the next
// arrival, the inner server answering at once), one-second buckets open
// at the first record or query a second after the newest, and a bucket
// 3 s old is dropped before a record or a query.
func TestAdmissionControlWindow(t *testing.T) {
	fail, ok := policies.Outcome{Class: policies.Capacity, Status: 503}, policies.Outcome{}
	// 429 is below 500: a success by Envoy's default criteria.
	limited := policies.Outcome{Class: policies.RetryAfter, Status: 429}
	m := &AdmissionControl{SuccessRateThreshold: 1, Aggression: 1, MaxRejectionProbability: 0, SamplingWindow: 3 * time.Second,
		Inner: scriptModel{[]policies.Outcome{fail, fail, ok, limited, fail, ok, ok}}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	s := m.NewServer(ServerRand(1)).(*admissionState)
	for _, step := range []struct {
		at                  time.Duration
		requests, successes int64
	}{
		{0, 0, 0},
		{500 * ms, 1, 0},  // the failure at 0, in the bucket opened at 0
		{1200 * ms, 2, 0}, // the failure at 0.5 s; the query opens a bucket at 1.2 s
		{2900 * ms, 3, 1}, // the success at 1.2 s; a bucket at 2.9 s
		{3000 * ms, 2, 2}, // the 429 at 2.9 s, then the bucket of 0 s (2 failures) is 3 s old
		{3600 * ms, 3, 2}, // the failure at 3 s
		{4250 * ms, 3, 2}, // the success at 3.6 s, then the bucket of 1.2 s (1 success) goes
	} {
		s.Arrive(step.at, Request{})
		if s.requests != step.requests || s.successes != step.successes {
			t.Fatalf("at %v the window holds %d requests, %d successes; want %d, %d", step.at, s.requests, s.successes, step.requests, step.successes)
		}
	}
	// A client that stopped waiting before the answer reset its stream:
	// not recorded.
	s.Arrive(5000*ms, Request{GiveUpAt: 4999 * ms}) // answered at once, at 5 s
	s.Arrive(5100*ms, Request{})
	if s.requests != 4 {
		t.Errorf("after an answer its client did not wait for, the window holds %d requests, want 4 (the one at 4.25 s only)", s.requests)
	}
}

// Envoy's formula at aggression 2 and 3, against an inner server that
// fails half its requests with a 503: every arrival's rejection
// probability is computed here from the window's counts at its decision
// (what Envoy's draw compares, to 4 digits: P = ⌈10⁴ p⌉ / 10⁴), and the
// rejections over 24,000 requests must be within 4 standard deviations of
// their sum. In steady state the probability is near
// (1 − 0.5/0.95)^(1/aggression): 0.688 at 2, 0.780 at 3.
func TestAdmissionControlFollowsTheFormula(t *testing.T) {
	fail := policies.Outcome{Class: policies.Capacity, Status: 503}
	for _, a := range []float64{2, 3} {
		// An error mix: one draw a request, half fail.
		inner := FailWithProbability(0.5, Rejection{Status: 503, Class: policies.Capacity}, Fixed(10*time.Millisecond))
		m := envoy(a, inner)
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		s := m.NewServer(ServerRand(uint64(a))).(*admissionState)
		var want, variance, steady float64
		var rejected, steadyN int
		for k := range 24000 {
			now := time.Duration(k) * 5 * time.Millisecond // 200 a second for 120 s
			r := s.Arrive(now, Request{})
			n, succ := float64(s.requests), float64(s.successes)
			p := 0.0
			if x := (n - succ/0.95) / (n + 1); x > 0 {
				p = math.Min(math.Pow(x, 1/a), 0.8)
			}
			p = math.Ceil(p*1e4) / 1e4
			want += p
			variance += p * (1 - p)
			if r.Ticket == ownTicket {
				if r.Outcome != fail || r.At != now {
					t.Fatalf("a rejection is %+v at %v, want a 503 at once", r, r.At)
				}
				rejected++
			}
			if now >= 40*time.Second {
				steady += p
				steadyN++
			}
		}
		if d := math.Abs(float64(rejected) - want); d > 4*math.Sqrt(variance) {
			t.Errorf("aggression %v: %d rejections, the formula gives %.1f ± %.1f", a, rejected, want, math.Sqrt(variance))
		}
		published := math.Pow(1-0.5/0.95, 1/a)
		if got := steady / float64(steadyN); math.Abs(got-published) > 0.02 {
			t.Errorf("aggression %v: steady-state probability %.3f, want near %.3f", a, got, published)
		}
		t.Logf("aggression %v: %d rejections of 24000, formula %.1f; steady-state p %.4f (published curve %.4f)", a, rejected, want, steady/float64(steadyN), published)
	}
}

// At aggression 1 Envoy's probability is the SRE book's adaptive
// throttling with K = 1/threshold (0.5 gives the book's K = 2): the same
// value for the same counts (the two differ in what they count: the
// throttle counts its own local rejections as requests, Envoy does not).
func TestAdmissionControlAtAggressionOneIsSREThrottling(t *testing.T) {
	base := time.Unix(0, 0)
	for _, threshold := range []float64{0.5, 0.8, 0.95} {
		for _, c := range []struct{ n, s int64 }{{0, 0}, {1, 0}, {10, 3}, {100, 40}, {100, 95}, {1000, 1}} {
			th, err := machine.NewAdaptiveThrottle(machine.AdaptiveThrottleConfig{K: 1 / threshold, Window: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			for k := range c.n {
				o := machine.Outcome{Class: machine.Capacity, Status: 503}
				if k < c.s {
					o = machine.Outcome{}
				}
				th.Observe(base, 0, o)
			}
			sre := th.RejectProbability(base)
			if got := admissionProbability(c.n, c.s, threshold, 1, 1); math.Abs(got-sre) > 1e-12 {
				t.Errorf("threshold %v, %d requests, %d successes: Envoy %v, SRE with K = %v: %v", threshold, c.n, c.s, got, 1/threshold, sre)
			}
		}
	}
}

// A server that never fails: nothing is rejected and nothing is drawn,
// so the inner model's draws, and answers, are those without the filter.
// Below rps_threshold nothing is rejected whatever the failures.
func TestAdmissionControlHealthyAndQuiet(t *testing.T) {
	inner := FailWithProbability(0.2, Rejection{Status: 503, Class: policies.Capacity}, Exponential{Mean: 10 * time.Millisecond})
	healthy := &ErrorMix{Phases: []MixPhase{{}}, Latency: Exponential{Mean: 10 * time.Millisecond}}
	with, bare := envoy(2, healthy).NewServer(ServerRand(3)), healthy.NewServer(ServerRand(3))
	for k := range 5000 {
		now := time.Duration(k) * time.Millisecond
		if a, b := with.Arrive(now, Request{}), bare.Arrive(now, Request{}); a != b {
			t.Fatalf("request %d: %+v with the filter, %+v without", k, a, b)
		}
	}
	quiet := envoy(2, inner)
	quiet.RPSThreshold = 1000 // the load is 100 a second
	s := quiet.NewServer(ServerRand(3))
	for k := range 5000 {
		if r := s.Arrive(time.Duration(k)*10*time.Millisecond, Request{}); r.Ticket == ownTicket {
			t.Fatalf("request %d rejected below the rps threshold", k)
		}
	}
	loud := envoy(2, inner).NewServer(ServerRand(3))
	var rejected int
	for k := range 5000 {
		if r := loud.Arrive(time.Duration(k)*10*time.Millisecond, Request{}); r.Ticket == ownTicket {
			rejected++
		}
	}
	if rejected == 0 {
		t.Errorf("without the rps threshold nothing was rejected either; the test shows nothing")
	}
}

func TestAdmissionControlValidate(t *testing.T) {
	inner := scriptModel{[]policies.Outcome{{}}}
	for _, f := range []func(*AdmissionControl){
		func(m *AdmissionControl) { m.SuccessRateThreshold = 0 },
		func(m *AdmissionControl) { m.SuccessRateThreshold = 1.1 },
		func(m *AdmissionControl) { m.Aggression = 0.5 },
		func(m *AdmissionControl) { m.MaxRejectionProbability = 1.5 },
		func(m *AdmissionControl) { m.SamplingWindow = 1500 * time.Millisecond },
		func(m *AdmissionControl) { m.SamplingWindow = 0 },
		func(m *AdmissionControl) { m.RPSThreshold = -1 },
		func(m *AdmissionControl) { m.Inner = nil },
		func(m *AdmissionControl) {
			m.Inner = &Queue{Concurrency: 1, Service: Fixed(1), LIFO: AdaptiveLIFO{Interval: 1}}
		},
	} {
		m := envoy(1, inner)
		f(m)
		if m.Validate() == nil {
			t.Errorf("%+v: no error", m)
		}
	}
}

package serve_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

func inMemory(h *serve.Handler) (string, http.RoundTripper, func(), error) {
	return "http://serve.test", serve.InMemory(h), func() {}, nil
}

func validation(s *scenarios.Scenario, speed float64) serve.Validation {
	return serve.Validation{Model: s.Server, Workload: s.Workload, Policies: s.Policies, Seed: s.Seed, Speed: speed}
}

func report(t *testing.T, cs []serve.Comparison) string {
	t.Helper()
	var out bytes.Buffer
	if err := serve.WriteComparisons(&out, cs); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// The built-in scenarios that validation takes (at most 10,000 clients),
// validated in a synctest bubble over the in-memory transport: the real
// clients (policies.Do), handler and HTTP stack, on fake time, so that
// every wait is exact and the runs take no real time. At speed 1 every
// metric of every policy equals the simulator's, randomised policies too:
// the clients draw from the simulator's streams.
func TestValidateExactOnFakeTime(t *testing.T) {
	for _, name := range []string{"overload-burst", "rate-limited-burst", "long-outage"} {
		t.Run(name, func(t *testing.T) {
			s := scenariotest.Builtin(t, name)
			synctest.Test(t, func(t *testing.T) {
				v := validation(s, 1)
				v.Connect = inMemory
				cs, err := serve.Validate(context.Background(), v)
				if err != nil {
					t.Fatal(err)
				}
				if len(cs) != len(s.Policies) {
					t.Fatalf("%d comparisons for %d policies", len(cs), len(s.Policies))
				}
				for _, c := range cs {
					if len(c.Checks) < 4 {
						t.Errorf("%s: only %d checks", c.Policy, len(c.Checks))
					}
					for _, ch := range c.Checks {
						if ch.Simulated != ch.Measured {
							t.Errorf("%s %s: simulated %v, measured %v", c.Policy, ch.Metric, ch.Simulated, ch.Measured)
						}
					}
				}
				if t.Failed() {
					t.Logf("\n%s", report(t, cs))
				}
			})
		})
	}
}

// At a speed that does not divide the model's durations evenly, waits are
// rounded up to the nanosecond: still in agreement.
func TestValidateAtSpeedOnFakeTime(t *testing.T) {
	s := scenariotest.Builtin(t, "")
	synctest.Test(t, func(t *testing.T) {
		v := validation(s, 7)
		v.Connect = inMemory
		cs, err := serve.Validate(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if !c.Agree() {
				t.Errorf("%s disagrees:\n%s", c.Policy, report(t, cs))
			}
		}
	})
}

// A real server that is not the model the simulator ran is caught.
func TestValidateCatchesADifferentServer(t *testing.T) {
	s := scenariotest.Builtin(t, "")
	synctest.Test(t, func(t *testing.T) {
		v := validation(s, 1)
		v.Policies = v.Policies[1:2] // capped-exponential: 18 of 20 complete
		v.Connect = func(*serve.Handler) (string, http.RoundTripper, func(), error) {
			h, err := serve.NewHandler(alwaysOverloaded)
			return "http://serve.test", serve.InMemory(h), func() {}, err
		}
		cs, err := serve.Validate(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		out := report(t, cs)
		if cs[0].Agree() || !strings.Contains(out, "capped-exponential: DISAGREES") || !strings.Contains(out, "DIFFERS") {
			t.Fatalf("a server that never admits agreed:\n%s", out)
		}
	})
}

func TestValidateRefuses(t *testing.T) {
	s := scenariotest.Builtin(t, "")
	v := validation(s, 1)
	v.Workload = sim.Burst{Clients: serve.MaxValidateClients + 1}
	var tooMany *serve.TooManyClientsError
	if _, err := serve.Validate(context.Background(), v); !errors.As(err, &tooMany) || !strings.Contains(err.Error(), "10000") {
		t.Errorf("too many clients: %v", err)
	}
	for _, speed := range []float64{-1, math.NaN(), serve.MaxSpeed + 1} {
		v := validation(s, speed)
		if _, err := serve.Validate(context.Background(), v); err == nil {
			t.Errorf("speed %v accepted", speed)
		}
	}
}

// A short validation over real loopback sockets and the real clock: a
// small scenario at speed 4 takes about two seconds. Its tightest margin
// is 200 ms of model time (50 ms of real time) before a window ends.
func TestValidateLoopbackSmoke(t *testing.T) {
	// Its verdict depends on how late the machine wakes goroutines, which a
	// shared CI machine does not bound; TestValidateExactOnFakeTime makes
	// the same comparison exactly.
	if os.Getenv("RETRYSIM_REALTIME") != "1" {
		t.Skip("real-time validation; set RETRYSIM_REALTIME=1 to run it")
	}
	f, err := scenarios.Parse("smoke.yaml", []byte(`
scenarios:
  - name: smoke
    server:
      response_time: 100ms
      phases:
        - duration: 1s
          reject: overloaded
        - admit: 3
          window: 1s
    clients:
      count: 6
      max_attempts: 6
      deadline: 10s
    policies:
      - name: capped-exponential
        base: 500ms
        cap: 2s
      - name: gated
        backoff: full-jitter
        base: 500ms
        cap: 2s
        throttle:
          rate: 3
`))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	cs, err := serve.Validate(context.Background(), validation(s, 4))
	if err != nil {
		t.Fatal(err)
	}
	out := report(t, cs)
	t.Logf("\n%s", out)
	for _, c := range cs {
		if !c.Agree() {
			t.Errorf("%s disagrees", c.Policy)
		}
		if c.Measured.Attempts == 0 || c.Measured.Admitted == 0 {
			t.Errorf("%s: nothing measured: %+v", c.Policy, c.Measured)
		}
	}
}

// An open loop's clients start at its drawn arrival times, as in the
// simulation: on fake time the two agree exactly. (They all started at 0
// before validate took the drawn starts.)
func TestValidateOpenLoopExactOnFakeTime(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	s.Workload = &sim.OpenLoop{Rates: sim.ConstantRate(20), Until: 5 * time.Second}
	synctest.Test(t, func(t *testing.T) {
		v := validation(s, 1)
		v.Connect = inMemory
		cs, err := serve.Validate(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.Simulated.Clients < 50 {
				t.Errorf("%s: %d operations simulated", c.Policy, c.Simulated.Clients)
			}
			for _, ch := range c.Checks {
				if ch.Simulated != ch.Measured {
					t.Errorf("%s %s: simulated %v, measured %v", c.Policy, ch.Metric, ch.Simulated, ch.Measured)
				}
			}
		}
	})
}

// Validation refuses, before running anything, what it cannot run for real.
func TestCanValidate(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	for _, tt := range []struct {
		model sim.ServerModel
		w     sim.Workload
		want  string // "" for accepted
	}{
		{s.Server, s.Workload, ""},
		{s.Server, &sim.OpenLoop{Rates: sim.ConstantRate(5), Until: time.Second}, ""},
		{s.Server, &sim.OpenLoop{Rates: sim.ConstantRate(5), Until: time.Second, Processes: 3}, "3 client processes"},
		{s.Server, &sim.ClosedLoop{Workers: 2, PerWorker: 2}, ""},
		{s.Server, &sim.AgentSessions{Sessions: 2, Turns: 3}, ""},
		{&sim.RateLimit{InputTokensPerMinute: 6000, Inner: s.Server}, &sim.AgentSessions{Sessions: 2, Turns: 3, InputTokens: 2000}, ""},
		{s.Server, &sim.OpenLoop{Rates: sim.ConstantRate(5), Until: time.Second, InputTokens: 500}, ""},
		{&sim.Contention{Network: sim.Fixed(time.Millisecond)}, s.Workload, "decides requests after they arrive"},
	} {
		err := serve.CanValidate(tt.model, tt.w)
		var unsupported *serve.UnsupportedError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%T with %T refused: %v", tt.model, tt.w, err)
		case tt.want != "" && (!errors.As(err, &unsupported) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%T with %T: error %v, want one saying %q", tt.model, tt.w, err, tt.want)
		}
	}
}

// flakyScenario is flaky-server made small: an error-mix server failing
// one call in ten at random, an open loop of about 1,000 operations.
const flakyScenario = `
scenarios:
  - name: flaky
    server:
      type: error-mix
      response_time: 10ms
      failures:
        - {probability: 0.1, reject: server-error}
    clients:
      type: open-loop
      rate: 100
      until: 10s
    policies:
      - name: no-retries
        type: immediate
        max_attempts: 1
      - name: retries-3
        type: full-jitter
        base: 50ms
        cap: 1s
        max_attempts: 4
`

// A real run that takes another path than the simulation, as when late
// arrivals make a random server's draws fall on other requests, is at worst
// like the simulator's run with another seed: it agrees within the spread
// of the simulation across seeds. Here the served model runs with the next
// seed (on fake time, so deterministically): its failures fall elsewhere,
// and counts differ by tens of clients where a fixed tolerance allowed 1.
func TestValidateToleratesAnotherSeed(t *testing.T) {
	f, err := scenarios.Parse("flaky.yaml", []byte(flakyScenario))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	synctest.Test(t, func(t *testing.T) {
		v := validation(s, 1)
		v.Connect = func(h *serve.Handler) (string, http.RoundTripper, func(), error) {
			other, err := serve.NewHandler(v.Model, serve.WithSeed(v.Seed+1), serve.WithFallbackModel(serve.FallbackModel))
			return "http://serve.test", serve.InMemory(other), func() {}, err
		}
		cs, err := serve.Validate(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("\n%s", report(t, cs))
		differs := false
		for _, c := range cs {
			if !c.Agree() {
				t.Errorf("%s disagrees", c.Policy)
			}
			for _, ch := range c.Checks {
				differs = differs || ch.Metric == "gave_up" && math.Abs(ch.Measured-ch.Simulated) > 5
			}
		}
		if !differs || t.Failed() {
			t.Errorf("want agreement with give-ups more than 5 apart:\n%s", report(t, cs))
		}
	})
}

// The rule still catches a server that is not the model: one that fails
// every other call where the model fails one in ten.
func TestValidateCatchesAFlakierServer(t *testing.T) {
	f, err := scenarios.Parse("flaky.yaml", []byte(flakyScenario))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	synctest.Test(t, func(t *testing.T) {
		v := validation(s, 1)
		v.Connect = func(h *serve.Handler) (string, http.RoundTripper, func(), error) {
			flakier, err := serve.NewHandler(sim.FailWithProbability(0.5, sim.Rejection{Status: 500, Class: policies.Transient}, sim.Fixed(10*time.Millisecond)))
			return "http://serve.test", serve.InMemory(flakier), func() {}, err
		}
		cs, err := serve.Validate(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.Agree() {
				t.Errorf("%s agrees with a server failing half the calls:\n%s", c.Policy, report(t, cs))
			}
		}
	})
}

// The default speed is DefaultSpeed, lowered for a scenario whose real run
// would send more than MaxRealRate requests a second: flaky-server's 1,100
// a second of model time run at 0.45, where speed 3 sent more than the
// machine could answer and every latency disagreed.
func TestAutoSpeed(t *testing.T) {
	for _, tt := range []struct {
		scenario string
		want     float64
	}{{"overload-burst", serve.DefaultSpeed}, {"flaky-server", 0.45}} {
		s := scenariotest.Builtin(t, tt.scenario)
		starts := sim.StartTimes(s.Seed, s.Workload)
		var seeds [][]sim.Result
		for _, p := range s.Policies {
			r, err := sim.Run(sim.Config{Seed: s.Seed, Server: s.Server, Workload: s.Workload, Policy: p})
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, []sim.Result{r})
		}
		if got := serve.AutoSpeed(starts, seeds); got != tt.want {
			t.Errorf("%s: speed %v, want %v", tt.scenario, got, tt.want)
		}
	}
}

// Attempt timeouts run on the real clock divided by the speed, as every
// other duration of the policy: metastable-retry-storm's 1 s timeouts, at
// speed 2.5 on fake time, time out what the simulator times out. (They
// were 1 s of real time, 2.5 s of model time, and about a tenth of the
// give-ups.)
func TestValidateScalesAttemptTimeouts(t *testing.T) {
	s := scenariotest.Builtin(t, "metastable-retry-storm")
	s.Policies = s.Policies[:2] // no-retries and immediate: no controls
	synctest.Test(t, func(t *testing.T) {
		v := validation(s, 2.5)
		v.Connect = inMemory
		cs, err := serve.Validate(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if !c.Agree() || c.Simulated.GaveUp < 100 {
				t.Errorf("%s disagrees, or gives up too little to tell:\n%s", c.Policy, report(t, cs))
			}
		}
	})
}

// A policy with a control that the real clients do not run (a breaker, a
// budget) is refused rather than run without it.
func TestValidateRefusesControls(t *testing.T) {
	s := scenariotest.Builtin(t, "controls-outage")
	_, err := serve.Validate(context.Background(), validation(s, 1))
	var unsupported *serve.UnsupportedError
	if !errors.As(err, &unsupported) || !strings.Contains(err.Error(), "policy uses") {
		t.Errorf("controls-outage: %v", err)
	}
}

package sim_test

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// Same-world tests of the controls that read a key's rate-limit headers
// (policies.Pacer, policies.ResetGate): clients share one rate-limited key
// and one instance of the control, through the simulator (which hands the
// model's buckets to every response as policies.RateLimits) and through
// policies.Do, where the same model, on the bubble's fake clock, answers
// with the headers rendered (machine.SetRateLimitHeaders, OpenAI's
// dialect) and read back (policies.ClassifyResponse for a failure; the
// pacer's ObserveHeader for a success, as its Transport does). Both worlds
// must make the same attempts at the same times and end the same way.

// pacedScenario: 10 clients over 3 s on a key of 4 requests and tpm input
// tokens per minute, 100 tokens a request, each answered in 300 ms. With
// tpm 600 the requests bind (a request every 15 s once the first 4 are
// spent); with 300, the tokens (one every 20 s after the first 3).
func pacedScenario(seed uint64, tpm int64, specs ...machine.Spec) *multiScenario {
	return &multiScenario{
		seed:    seed,
		clients: 10,
		spread:  3 * time.Second,
		server: &sim.RateLimit{RequestsPerMinute: 4, InputTokensPerMinute: tpm, InputTokens: 100,
			Inner: &sim.CapacityWindows{ResponseTime: sim.Fixed(300 * time.Millisecond), Phases: []sim.Phase{{Admit: 1 << 30, Window: time.Second, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}}}}},
		pol: sim.Policy{
			Name: "paced",
			Rules: policies.Policy{
				Backoff:          policies.FullJitter{Base: time.Second, Factor: 2, Cap: 8 * time.Second},
				MaxAttempts:      8,
				Deadline:         3 * time.Minute,
				ServerWaitJitter: 100 * time.Millisecond,
			},
			Coordinators: specs,
		},
	}
}

// produceLimited runs s through policies.Do, as produceMulti does, against
// s.server's own state on the fake clock.
func produceLimited(t *testing.T, s *multiScenario) *world {
	t.Helper()
	w := newWorld(s.clients)
	synctest.Test(t, func(t *testing.T) {
		var (
			mu    sync.Mutex // guards state and w.attempts
			state = s.server.NewServer(sim.ServerRand(s.seed))
		)
		var shared []policies.Option
		var pacer *policies.Pacer
		for _, spec := range s.pol.Coordinators {
			c, err := spec.NewCoordinator()
			if err != nil {
				t.Fatal(err)
			}
			if p, ok := c.(*policies.Pacer); ok {
				pacer = p
			}
			shared = append(shared, policies.WithCoordinator(c))
		}
		origin := time.Now()
		seq := &seqClock{reqs: make(chan sleepRequest)}
		client := func(i int) {
			defer seq.finish()
			seq.until(origin.Add(sim.ClientStart(s.seed, i, s.spread)))
			start := time.Now()
			op := func(ctx context.Context, a policies.Attempt) error {
				now := time.Since(origin)
				mu.Lock()
				resp := state.Arrive(now, sim.Request{})
				w.attempts = append(w.attempts, clientAttempt{i, now, resp.Outcome.Class == policies.Success})
				mu.Unlock()
				if err := seq.Sleep(ctx, resp.At-now); err != nil {
					return err
				}
				mu.Lock()
				l, _ := state.(sim.LimitReporter).RateLimits(time.Since(origin))
				mu.Unlock()
				h := http.Header{}
				machine.SetRateLimitHeaders(h, l, machine.DialectOpenAI, time.Now())
				if resp.Outcome.Class == policies.Success {
					if pacer != nil {
						pacer.ObserveHeader(time.Now(), h)
					}
					return nil
				}
				r := machine.RenderOpenAI(resp.Outcome)
				maps.Copy(r.Header, h)
				return &policies.HTTPError{StatusCode: r.Status, Header: r.Header, Body: r.Body}
			}
			opts := append([]policies.Option{
				policies.WithPolicy(s.pol.Rules),
				policies.WithRand(rand.New(sim.ClientPolicyStream(s.seed, i))),
				policies.WithHooks(w.events[i].hooks()),
			}, shared...)
			err := policies.Do(machine.WithClock(t.Context(), seq), op, opts...)
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
		seq.run(t, s.clients, client)
	})
	sortAttempts(w.attempts)
	return w
}

// limitedWorlds runs s in both worlds, compares them and returns the
// simulator's result and how many of its attempts were refused.
func limitedWorlds(t *testing.T, s *multiScenario) (sim.Result, int) {
	t.Helper()
	simW, trace, res := simulateMulti(t, s)
	logWorld(t, simW, res, coverageOf(trace, simW))
	if len(simW.attempts) != res.Attempts {
		t.Errorf("recorded %d attempts, simulator counted %d", len(simW.attempts), res.Attempts)
	}
	sameWorlds(t, simW, produceLimited(t, s))
	refused := 0
	for _, a := range simW.attempts {
		if !a.admitted {
			refused++
		}
	}
	return res, refused
}

// TestSamePacerInSimulatorAndProduction: without pacing the clients meet
// 429s; the pacer spaces them so that, once it has seen a header, none is
// refused (by requests when they bind, by tokens when tokens do; by
// requests alone it meets the token limit's 429s); sleeping until the
// reset after a 429 refuses fewer than no pacing but finishes last. Each
// runs the same in both worlds.
func TestSamePacerInSimulatorAndProduction(t *testing.T) {
	for _, tt := range []struct {
		name       string
		tpm        int64
		specs      []machine.Spec
		maxRefused int
		minRefused int
	}{
		{"no pacing", 600, nil, 100, 10},
		{"gate", 600, []machine.Spec{machine.GateConfig{}}, 100, 1},
		{"reset gate", 600, []machine.Spec{policies.ResetGateConfig{}}, 100, 1},
		{"pacer", 600, []machine.Spec{policies.PacerConfig{}}, 0, 0},
		{"pacer by tokens", 600, []machine.Spec{policies.PacerConfig{Tokens: true, InputTokens: 100}}, 0, 0},
		{"gate and pacer", 600, []machine.Spec{machine.GateConfig{}, policies.PacerConfig{}}, 0, 0},
		{"tokens bind: pacer by requests", 300, []machine.Spec{policies.PacerConfig{}}, 100, 1},
		{"tokens bind: pacer by tokens", 300, []machine.Spec{policies.PacerConfig{Tokens: true, InputTokens: 100}}, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, refused := limitedWorlds(t, pacedScenario(3, tt.tpm, tt.specs...))
			if refused > tt.maxRefused || refused < tt.minRefused {
				t.Errorf("%d attempts refused, want %d to %d", refused, tt.minRefused, tt.maxRefused)
			}
			if tt.maxRefused == 0 && res.Completed != 10 {
				t.Errorf("%d completed, want all 10", res.Completed)
			}
			t.Logf("%s: %d attempts, %d refused, %d completed, last at %v", tt.name, res.Attempts, refused, res.Completed, res.LastCompletion)
		})
	}
}

// limitsRecorder is the spec of a coordinator that counts the outcomes
// whose limits it saw; observingSpec's coordinator is a LimitsObserver too.
type limitsRecorder struct{ seen *int }

func (r limitsRecorder) Validate() error                                        { return nil }
func (r limitsRecorder) NewCoordinator() (policies.Coordinator, error)          { return &recorderCoord{r}, nil }
func (r limitsRecorder) Rescale(func(time.Duration) time.Duration) machine.Spec { return r }

type recorderCoord struct{ limitsRecorder }

func (c *recorderCoord) Admit(time.Time, machine.Ask) machine.Admission {
	return machine.Admission{Kind: machine.AdmitPass}
}
func (c *recorderCoord) Observe(_ time.Time, _ int, out policies.Outcome) {
	if out.Limits.Known() {
		*c.seen++
	}
}
func (c *recorderCoord) Release(time.Time, machine.Waiter, bool) {}

type observingRecorder struct{ *recorderCoord }

func (observingRecorder) ObservesLimits() {}

type observingSpec struct{ limitsRecorder }

func (s observingSpec) NewCoordinator() (policies.Coordinator, error) {
	return observingRecorder{&recorderCoord{s.limitsRecorder}}, nil
}

// The simulator works out the key's limits for a response only for a
// policy with a coordinator that reads them (machine.LimitsObserver);
// then every response, success or 429, carries them.
func TestLimitsReachLimitsObservers(t *testing.T) {
	for _, observes := range []bool{false, true} {
		seen := 0
		rec := limitsRecorder{seen: &seen}
		var spec machine.Spec = rec
		if observes {
			spec = observingSpec{rec}
		}
		s := pacedScenario(3, 600, spec)
		res, err := sim.Run(s.config())
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if observes {
			want = res.Attempts
		}
		if seen != want {
			t.Errorf("observes %v: limits on %d of %d responses, want %d", observes, seen, res.Attempts, want)
		}
	}
}

package sim_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// Same-world test of hedging: operations one after the other (so no two
// act at one instant) share one Hedger; a scripted server gives the n-th
// request it receives the n-th answer of a script (a latency, success or a
// rejection), in both worlds. The simulator runs them through sim.Run;
// production runs policies.Do for each in a synctest bubble, each copy in
// its own goroutine, the losers cancelled by their contexts. Both worlds
// must send the same copies at the same times, cancel the same ones at the
// same times, end every operation the same way, and count the same hedges
// sent, denied and cancelled.

// scriptEntry is one answer of the scripted server.
type scriptEntry struct {
	latency time.Duration
	reject  *sim.Rejection // nil: a success
}

// scripted is a server model answering requests in arrival order from a
// script; it records what it saw. One run at a time.
type scripted struct {
	script []scriptEntry
	state  *scriptState
}

func (s *scripted) Validate() error { return nil }

func (s *scripted) NewServer(*rand.Rand) sim.Server {
	s.state = &scriptState{s: s}
	return s.state
}

type scriptState struct {
	s         *scripted
	arrivals  []string // "at copy k"
	cancelled []time.Duration
}

// entry returns the n-th answer.
func (s *scripted) entry(n int) scriptEntry { return s.script[n%len(s.script)] }

func (st *scriptState) Arrive(now time.Duration, req sim.Request) sim.Response {
	e := st.s.entry(len(st.arrivals))
	st.arrivals = append(st.arrivals, fmt.Sprintf("%v copy %d", now, req.Copy))
	if e.reject != nil {
		return sim.Response{Outcome: e.reject.Outcome(), At: now + e.latency}
	}
	return sim.Response{At: now + e.latency}
}

func (st *scriptState) Cancel(now time.Duration, _ sim.Response) {
	st.cancelled = append(st.cancelled, now)
}

// spaced starts operation i at i·gap.
type spaced struct {
	n   int
	gap time.Duration
}

func (w spaced) Validate() error                         { return nil }
func (w spaced) Operations() int                         { return w.n }
func (w spaced) Start(i int, _ *rand.Rand) time.Duration { return time.Duration(i) * w.gap }

// hedgeScript draws n answers: most fast, a tail slow, some 529s.
func hedgeScript(seed uint64, n int) []scriptEntry {
	rng := rand.New(rand.NewPCG(seed, 7))
	s := make([]scriptEntry, n)
	for i := range s {
		switch u := rng.Float64(); {
		case u < 0.55:
			s[i].latency = 50*time.Millisecond + time.Duration(rng.Int64N(int64(100*time.Millisecond)))
		case u < 0.85:
			s[i].latency = 600*time.Millisecond + time.Duration(rng.Int64N(int64(2*time.Second)))
		default:
			s[i].latency = 20*time.Millisecond + time.Duration(rng.Int64N(int64(500*time.Millisecond)))
			s[i].reject = &sim.Rejection{Status: 529, Class: policies.Capacity}
		}
	}
	return s
}

type hedgeWorld struct {
	arrivals  []string
	cancelled []time.Duration
	final     []string
	stats     machine.HedgeStats
	attempts  int
}

func TestSameHedgingInSimulatorAndProduction(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hedge policies.HedgeConfig
	}{
		{"delayed", policies.HedgeConfig{Delay: 300 * time.Millisecond, MaxHedges: 2, BudgetPercent: 40, BudgetBurst: 2}},
		{"at-once", policies.HedgeConfig{MaxHedges: 1, BudgetPercent: 50, BudgetBurst: 1}},
		{"unbudgeted", policies.HedgeConfig{Delay: 200 * time.Millisecond, MaxHedges: 3}},
		{"percentile", policies.HedgeConfig{Delay: 400 * time.Millisecond, Percentile: 70, Window: 10, MinSamples: 5, BudgetPercent: 30, BudgetBurst: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const seed, ops, gap = 11, 40, 30 * time.Second
			pol := sim.Policy{
				Name: "hedged",
				Rules: policies.Policy{
					Backoff:        policies.FullJitter{Base: 200 * time.Millisecond, Factor: 2, Cap: 2 * time.Second},
					MaxAttempts:    7,
					Deadline:       8 * time.Second,
					AttemptTimeout: 1500 * time.Millisecond,
				},
				Coordinators: []machine.Spec{tc.hedge},
			}
			script := hedgeScript(seed, 500)
			simW := simulateHedged(t, seed, ops, gap, script, pol)
			prodW := produceHedged(t, seed, ops, gap, script, pol)
			t.Logf("%d attempts, hedges %+v", simW.attempts, simW.stats)
			if simW.stats.Sent == 0 || simW.stats.Cancelled == 0 || (tc.hedge.BudgetPercent > 0 && simW.stats.Denied == 0) {
				t.Errorf("the scenario does not exercise hedging: %+v", simW.stats)
			}
			if !slices.Equal(simW.arrivals, prodW.arrivals) {
				t.Errorf("arrivals differ:\nsimulator:  %v\nproduction: %v", simW.arrivals, prodW.arrivals)
			}
			if !slices.Equal(simW.cancelled, prodW.cancelled) {
				t.Errorf("cancellations differ:\nsimulator:  %v\nproduction: %v", simW.cancelled, prodW.cancelled)
			}
			if !slices.Equal(simW.final, prodW.final) {
				t.Errorf("ends differ:\nsimulator:  %v\nproduction: %v", simW.final, prodW.final)
			}
			if simW.stats != prodW.stats {
				t.Errorf("hedge counts differ: simulator %+v, production %+v", simW.stats, prodW.stats)
			}
			if simW.attempts != len(simW.arrivals) {
				t.Errorf("simulator counts %d attempts for %d requests sent", simW.attempts, len(simW.arrivals))
			}
		})
	}
}

func simulateHedged(t *testing.T, seed uint64, ops int, gap time.Duration, script []scriptEntry, pol sim.Policy) hedgeWorld {
	t.Helper()
	server := &scripted{script: script}
	w := hedgeWorld{final: make([]string, ops)}
	res, err := sim.Run(sim.Config{
		Seed:     seed,
		Server:   server,
		Workload: spaced{ops, gap},
		Policy:   pol,
		Observer: sim.Observer{
			OnComplete: func(at time.Duration, op int) { w.final[op] = completedFinal(at - time.Duration(op)*gap) },
			OnGiveUp: func(at time.Duration, op int, reason policies.StopReason) {
				w.final[op] = fmt.Sprintf("gave up (%v) at +%v", reason, at-time.Duration(op)*gap)
			},
		},
	})
	if err != nil {
		t.Fatalf("sim.Run: %v", err)
	}
	w.arrivals, w.cancelled, w.attempts = server.state.arrivals, server.state.cancelled, res.Attempts
	get := func(name string) int64 {
		v, ok := res.Counters.Get(name)
		if !ok {
			t.Errorf("the run reports no %s", name)
		}
		return v
	}
	w.stats = machine.HedgeStats{Sent: get("hedge.sent"), Denied: get("hedge.denied"), Cancelled: get("hedge.cancelled")}
	if int(w.stats.Cancelled) != len(w.cancelled) {
		t.Errorf("simulator: hedge.cancelled %d, the server was told of %d", w.stats.Cancelled, len(w.cancelled))
	}
	return w
}

// produceHedged runs the operations one after the other through
// policies.Do in a synctest bubble, sharing one Hedger.
func produceHedged(t *testing.T, seed uint64, ops int, gap time.Duration, script []scriptEntry, pol sim.Policy) hedgeWorld {
	t.Helper()
	w := hedgeWorld{final: make([]string, ops)}
	synctest.Test(t, func(t *testing.T) {
		c, err := pol.Coordinators[0].NewCoordinator()
		if err != nil {
			t.Fatal(err)
		}
		h := c.(*policies.Hedger)
		origin := time.Now()
		var mu sync.Mutex
		base := 0 // requests the earlier operations sent
		for i := range ops {
			start := time.Duration(i) * gap
			time.Sleep(start - time.Since(origin))
			most := 0
			op := func(ctx context.Context, a policies.Attempt) error {
				now := time.Since(origin)
				mu.Lock()
				n := base + a.Number - 1
				most = max(most, a.Number)
				for len(w.arrivals) <= n {
					w.arrivals = append(w.arrivals, "")
				}
				w.arrivals[n] = fmt.Sprintf("%v copy %d", now, a.Copy)
				mu.Unlock()
				e := &scriptEntry{}
				*e = (&scripted{script: script}).entry(n)
				select {
				case <-time.After(e.latency):
				case <-ctx.Done():
					if errors.Is(ctx.Err(), context.Canceled) {
						mu.Lock()
						w.cancelled = append(w.cancelled, time.Since(origin))
						mu.Unlock()
					}
					return ctx.Err()
				}
				if e.reject != nil {
					return httpRejection(*e.reject)
				}
				return nil
			}
			err := policies.Do(t.Context(), op,
				policies.WithPolicy(pol.Rules),
				policies.WithRand(rand.New(sim.ClientPolicyStream(seed, i))),
				policies.WithCoordinator(h))
			elapsed := time.Since(origin) - start
			var pe *policies.Error
			switch {
			case err == nil:
				w.final[i] = completedFinal(elapsed)
			case errors.As(err, &pe):
				w.final[i] = fmt.Sprintf("gave up (%v) at +%v", pe.Reason, elapsed)
			default:
				t.Fatalf("operation %d: %v", i, err)
			}
			base += most
		}
		w.stats = h.Stats()
		w.attempts = base
	})
	slices.Sort(w.cancelled)
	return w
}

// A server that decides requests later cannot be hedged: the run is
// refused before it starts, naming the policy.
func TestHedgingRefusesAServerThatDecidesLater(t *testing.T) {
	_, err := sim.Run(sim.Config{
		Seed:     1,
		Server:   &sim.Contention{Network: sim.Fixed(10 * time.Millisecond)},
		Workload: sim.Burst{Clients: 2},
		Policy:   sim.Policy{Name: "hedged", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 3}, Coordinators: []machine.Spec{policies.HedgeConfig{}}},
	})
	if err == nil || !strings.Contains(err.Error(), `policy "hedged" hedges`) {
		t.Errorf("err %v", err)
	}
}

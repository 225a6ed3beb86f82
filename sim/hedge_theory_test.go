package sim_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// The hedging check from theory. Two independent M/M/1 servers (one worker
// each, exponential service at rate μ, first come first served) behind a
// random balancer; a request's copies go to distinct servers (the test
// tells the model which operation sends, through Observer.OnSend, so that
// a hedge sent later than other operations' requests finds its own
// attempt's first server). Replicating
// every request at once (hedge delay 0) puts each server at 2ρ instead of ρ;
// if the two sojourns were independent, the mean latency would be that of
// the faster of two M/M/1 sojourns at 2ρ, 1/(2μ(1−2ρ)), against
// 1/(μ(1−ρ)) without copies: replication helps only below ρ = 1/3.

// mm1s is the smallest model that gives independent queues: n servers of
// one worker each. Server k's service times are multiplied by slow[k]
// from slowFrom to slowUntil (an outage of that server).
type mm1s struct {
	n                   int
	service             time.Duration // mean
	slow                []float64
	slowFrom, slowUntil time.Duration
	// op is the operation whose request arrives next: the Observer's
	// OnSend sets it (observe).
	op int
	// clashes counts copies sent to a server that already had a copy of
	// the same attempt.
	clashes int
}

// observe is the OnSend that tells m which operation sends.
func (m *mm1s) observe(then func(at time.Duration, op int, retry bool)) func(time.Duration, int, bool) {
	return func(at time.Duration, op int, retry bool) {
		m.op = op
		if then != nil {
			then(at, op, retry)
		}
	}
}

func (m *mm1s) Validate() error { return nil }

func (m *mm1s) NewServer(rng *rand.Rand) sim.Server {
	return &mm1sState{m: m, rng: rng, free: make([]time.Duration, m.n), first: map[int]int{}, used: map[int]uint64{}}
}

type mm1sState struct {
	m     *mm1s
	rng   *rand.Rand
	free  []time.Duration // when each server's worker is free
	first map[int]int     // by operation, the server of its attempt's first copy
	used  map[int]uint64  // by operation, the servers its attempt's copies went to
}

func (s *mm1sState) Arrive(now time.Duration, req sim.Request) sim.Response {
	op := s.m.op
	if req.Copy == 0 {
		s.first[op] = s.rng.IntN(s.m.n)
		s.used[op] = 0
	}
	k := (s.first[op] + req.Copy) % s.m.n
	if s.used[op]&(1<<k) != 0 {
		s.m.clashes++
	}
	s.used[op] |= 1 << k
	service := time.Duration(s.rng.ExpFloat64() * float64(s.m.service))
	if s.m.slow != nil && now >= s.m.slowFrom && now < s.m.slowUntil {
		service = time.Duration(float64(service) * s.m.slow[k])
	}
	start := max(now, s.free[k])
	s.free[k] = start + service
	return sim.Response{At: s.free[k]}
}

// meanLatency runs Poisson arrivals at rho per server against two M/M/1
// servers, with or without replicating every request, and returns the
// mean latency in units of the mean service time.
func meanLatency(t *testing.T, seed uint64, rho float64, requests int, replicate bool) float64 {
	t.Helper()
	const service = 10 * time.Millisecond
	perSecond := 2 * rho * float64(time.Second) / float64(service)
	pol := sim.Policy{Name: "plain", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 2}}
	if replicate {
		pol.Name, pol.Coordinators = "replicated", []machine.Spec{policies.HedgeConfig{}}
	}
	model := &mm1s{n: 2, service: service}
	res, err := sim.Run(sim.Config{
		Seed:     seed,
		Server:   model,
		Workload: &sim.OpenLoop{Rates: []sim.RateStep{{PerSecond: perSecond}}, Until: time.Duration(float64(requests) / perSecond * float64(time.Second))},
		Policy:   pol,
		Observer: sim.Observer{OnSend: model.observe(nil)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if model.clashes > 0 {
		t.Errorf("ρ %g: %d copies went to a server their attempt had used", rho, model.clashes)
	}
	if res.Completed != res.Clients {
		t.Fatalf("ρ %g: %d of %d completed", rho, res.Completed, res.Clients)
	}
	// The queues start empty; over this many requests the warm-up hardly
	// moves the mean.
	var sum time.Duration
	for _, l := range res.Latencies {
		sum += l
	}
	return float64(sum) / float64(len(res.Latencies)) / float64(service)
}

// The crossover the simulator finds lies in [crossoverLow, crossoverHigh]:
// below 1/3, since the two copies arrive together and so wait in queues
// that are not independent, as the formula assumes (docs/policies.md).
const crossoverLow, crossoverHigh = 0.26, 0.34

func TestHedgingCrossoverNearOneThird(t *testing.T) {
	requests, seeds := 20_000, uint64(2)
	if racetest.Enabled || testing.Short() {
		requests, seeds = 8_000, 1
	}
	var prevRho, prevGain float64
	crossover := 0.0
	for step := range 11 {
		rho := 0.20 + 0.02*float64(step)
		var plain, repl float64
		for s := range seeds {
			plain += meanLatency(t, 100+s, rho, requests, false)
			repl += meanLatency(t, 100+s, rho, requests, true)
		}
		plain, repl = plain/float64(seeds), repl/float64(seeds)
		alone, both := 1/(1-rho), 1/(2*(1-2*rho))
		t.Logf("ρ %.2f: mean latency %.3f alone, %.3f replicated (theory %.3f, %.3f; in mean service times)", rho, plain, repl, alone, both)
		if plain < 0.93*alone || plain > 1.07*alone {
			t.Errorf("ρ %.2f: alone, mean latency %.3f; an M/M/1 queue has %.3f", rho, plain, alone)
		}
		if repl < 0.97*both {
			t.Errorf("ρ %.2f: replicated, mean latency %.3f below the independent-queues bound %.3f", rho, repl, both)
		}
		gain := plain - repl
		if gain <= 0 && crossover == 0 && step > 0 {
			crossover = prevRho + (rho-prevRho)*prevGain/(prevGain-gain)
		}
		prevRho, prevGain = rho, gain
	}
	t.Logf("crossover at ρ ≈ %.3f (theory for independent queues: 1/3)", crossover)
	if crossover < crossoverLow || crossover > crossoverHigh {
		t.Errorf("replication stops paying at ρ ≈ %.3f, outside [%g, %g]", crossover, crossoverLow, crossoverHigh)
	}
}

// In a partial outage (one of the two servers 20 times slower for 30 s),
// hedging after a delay sends a copy of nearly every request that lands on
// the slow server: without a budget the hedges add about half the load;
// a 10 % budget holds them to 10 % of requests plus its burst.
func TestHedgeBudgetCapsLoadInAnOutage(t *testing.T) {
	const from, until = 10 * time.Second, 40 * time.Second
	added := func(budget float64) (share float64, firsts int) {
		pol := sim.Policy{Name: "hedged", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 2},
			Coordinators: []machine.Spec{policies.HedgeConfig{Delay: 40 * time.Millisecond, BudgetPercent: budget, BudgetBurst: 5}}}
		sends, hedges := 0, 0
		model := &mm1s{n: 2, service: 10 * time.Millisecond, slow: []float64{20, 1}, slowFrom: from, slowUntil: until}
		_, err := sim.Run(sim.Config{
			Seed:     7,
			Server:   model,
			Workload: &sim.OpenLoop{Rates: []sim.RateStep{{PerSecond: 40}}, Until: 50 * time.Second},
			Policy:   pol,
			Observer: sim.Observer{OnSend: model.observe(func(at time.Duration, _ int, hedge bool) {
				if at >= from && at < until {
					sends++
					if hedge {
						hedges++
					}
				}
			})},
		})
		if err != nil {
			t.Fatal(err)
		}
		if model.clashes > 0 {
			t.Errorf("budget %g%%: %d hedges went to their attempt's first server", budget, model.clashes)
		}
		firsts = sends - hedges
		return float64(hedges) / float64(firsts), firsts
	}
	unbudgeted, _ := added(0)
	budgeted, firsts := added(10)
	t.Logf("during the outage hedges add %.1f%% of requests unbudgeted, %.1f%% with a 10%% budget (%d requests)", 100*unbudgeted, 100*budgeted, firsts)
	if unbudgeted < 0.4 {
		t.Errorf("unbudgeted hedging adds %.1f%% of load in the outage; want the slow server's half, at least 40%%", 100*unbudgeted)
	}
	// The budget: 10 % of the attempts observed plus the burst of 5; an
	// attempt observed in the outage may have started before it.
	if most := 0.10 + 10.0/float64(firsts); budgeted > most {
		t.Errorf("with a 10%% budget hedging adds %.1f%% of load; want at most %.1f%%", 100*budgeted, 100*most)
	}
}

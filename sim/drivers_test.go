package sim_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// recordStarts is a workload that records the start times a run draws.
type recordStarts struct {
	sim.Burst
	got []time.Duration
}

func (r *recordStarts) Start(i int, rng *rand.Rand) time.Duration {
	d := r.Burst.Start(i, rng)
	r.got[i] = d
	return d
}

// The exported sources draw what a run draws: start times, and the first
// draw of the server's source.
func TestDriverSources(t *testing.T) {
	w := &recordStarts{Burst: sim.Burst{Clients: 50, Spread: 5 * time.Second}, got: make([]time.Duration, 50)}
	var serverDraw uint64
	model := drawingModel{first: &serverDraw}
	cfg := sim.Config{Seed: 7, Server: model, Workload: w,
		Policy: sim.Policy{Name: "p", Rules: policies.Policy{Backoff: policies.Constant{Wait: time.Second}, MaxAttempts: 1}}}
	if _, err := sim.Run(cfg); err != nil {
		t.Fatal(err)
	}
	if want := sim.StartTimes(7, sim.Burst{Clients: 50, Spread: 5 * time.Second}); !slices.Equal(w.got, want) {
		t.Errorf("StartTimes = %v, the run drew %v", want, w.got)
	}
	if got := sim.ServerRand(7).Uint64(); got != serverDraw {
		t.Errorf("ServerRand draws %d first, the run's server drew %d", got, serverDraw)
	}
}

// PolicyRand is the stream each operation's backoff draws from: two
// clients fail together at once, and each retry's wait is the first draw of
// its own stream.
func TestPolicyRand(t *testing.T) {
	backoff := policies.FullJitter{Base: time.Second, Factor: 2, Cap: time.Minute}
	var delays []time.Duration
	cfg := sim.Config{Seed: 7, Server: rejectAll{}, Workload: sim.Burst{Clients: 2},
		Policy: sim.Policy{Name: "p", Rules: policies.Policy{Backoff: backoff, MaxAttempts: 2}},
		Hooks:  policies.Hooks{OnRetryScheduled: func(e policies.RetryEvent) { delays = append(delays, e.Delay) }}}
	if _, err := sim.Run(cfg); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{backoff.Delay(0, 0, sim.PolicyRand(7, 0)), backoff.Delay(0, 0, sim.PolicyRand(7, 1))}
	if !slices.Equal(delays, want) || want[0] == want[1] {
		t.Errorf("the run waited %v, PolicyRand gives %v", delays, want)
	}
}

type rejectAll struct{}

func (rejectAll) Validate() error                 { return nil }
func (rejectAll) NewServer(*rand.Rand) sim.Server { return rejectAll{} }
func (rejectAll) Arrive(now time.Duration, _ sim.Request) sim.Response {
	return sim.Response{Outcome: policies.Outcome{Class: policies.Capacity, Status: 529}, At: now + time.Millisecond}
}

// drawingModel admits everything and records its source's first draw.
type drawingModel struct{ first *uint64 }

func (drawingModel) Validate() error { return nil }

func (m drawingModel) NewServer(rng *rand.Rand) sim.Server {
	*m.first = rng.Uint64()
	return admitAll{}
}

type admitAll struct{}

func (admitAll) Arrive(now time.Duration, _ sim.Request) sim.Response {
	return sim.Response{At: now + time.Millisecond}
}

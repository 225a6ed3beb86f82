package sim_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// The same-world test of retry layers: in production a layer is a
// policies.Do inside the operation of the Do around it (an SDK's loop
// inside the application's, a sidecar's inside the SDK's). Every policy of
// the built-in layered scenarios runs both ways: through sim.Run, where
// each layer is a server wrapper (sim.Layered), and as nested Do calls,
// one goroutine per client in one synctest bubble, against the scenario's
// own server model. A layer that receives its caller's deadline runs its
// Do in the caller's attempt context; one that does not
// (propagate_deadline: false) runs it in a goroutine of its own on a
// context without the caller's deadline, and the caller's attempt stops
// waiting for it when that attempt's context ends. Both worlds must count
// the same per-layer attempts, operations, retries by class and requests
// after a caller gave up (the layers.* counters), and the same attempts,
// completions and give-ups.
//
// The scenarios' outcomes do not depend on random draws (an upstream that
// always fails), so each Do draws from a stream of its own.

// layerCounts are one level's counts in production, named as the
// simulator's counters.
type layerCounts struct {
	in, attempts, late int64
	retries            map[string]int64
}

// retryClassName names a class as the counters layers.NAME.retries_CLASS do.
func retryClassName(c policies.Class) string {
	names := sim.RetryClassNames()
	switch c {
	case policies.RetryAfter:
		return names[0]
	case policies.Capacity:
		return names[1]
	case policies.Transient:
		return names[2]
	}
	return names[3]
}

// produceLayers runs policy i of s for every client as nested Do calls and
// returns the counters the simulator reports for layers (layers.*), plus
// the attempts, completions and give-ups.
func produceLayers(t *testing.T, s *scenarios.Scenario, i int) map[string]int64 {
	t.Helper()
	pol := s.Policies[i]
	windows, ok := s.Server.(*sim.CapacityWindows)
	if !ok {
		t.Fatalf("%s: server %T, want capacity windows", s.Name, s.Server)
	}
	clients := s.Workload.Operations()
	// levels[0] is the policy's own, levels[k] layer k.
	levels := []sim.Policy{{Name: "outer", Rules: pol.Rules, Coordinators: pol.Coordinators}}
	for _, l := range pol.Layers {
		levels = append(levels, sim.Policy{Name: l.Name, Rules: l.Rules, Coordinators: l.Coordinators})
	}
	counts := make([]layerCounts, len(levels))
	for k := range counts {
		counts[k].retries = map[string]int64{}
	}
	var completed, gaveUp int64
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex // guards counts, the server and the tallies
		var orphans sync.WaitGroup
		arrive := sim.NewServerModel(windows, s.Seed)
		origin := time.Now()
		shared := make([][]policies.Option, len(levels)) // each level's coordinators, shared by every client
		for k, l := range levels {
			shared[k] = sharedOptions(t, l)
		}
		server := func(ctx context.Context) error {
			mu.Lock()
			_, rej, at := arrive(time.Since(origin))
			mu.Unlock()
			tm := time.NewTimer(time.Until(origin.Add(at)))
			defer tm.Stop()
			select {
			case <-tm.C:
			case <-ctx.Done():
				return ctx.Err()
			}
			return httpRejection(rej) // the scenarios' upstreams always fail
		}
		// run is level k's Do; gone holds the attempt contexts of callers
		// further out than a layer that does not receive their deadline.
		var run func(ctx context.Context, client, k int, gone []context.Context) error
		run = func(ctx context.Context, client, k int, gone []context.Context) error {
			mu.Lock()
			counts[k].in++
			mu.Unlock()
			var prev policies.Outcome
			n := 0
			op := func(actx context.Context, _ policies.Attempt) error {
				n++
				mu.Lock()
				counts[k].attempts++
				if n > 1 {
					counts[k].retries[retryClassName(prev.Class)]++
				}
				if slices.ContainsFunc(gone, func(c context.Context) bool { return c.Err() != nil }) {
					counts[k].late++
				}
				mu.Unlock()
				var err error
				switch {
				case k == len(levels)-1:
					err = server(actx)
				case pol.Layers[k].NoDeadlinePropagation:
					done := make(chan error, 1)
					orphans.Go(func() { done <- run(context.WithoutCancel(actx), client, k+1, append(slices.Clone(gone), actx)) })
					select {
					case err = <-done:
					case <-actx.Done():
						err = actx.Err()
					}
				default:
					err = run(actx, client, k+1, gone)
				}
				prev = policies.ClassifyError(err, time.Now())
				return err
			}
			opts := append([]policies.Option{policies.WithPolicy(levels[k].Rules),
				policies.WithRand(rand.New(rand.NewPCG(s.Seed, uint64(client*len(levels)+k))))}, shared[k]...)
			return policies.Do(ctx, op, opts...)
		}
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				err := run(t.Context(), c, 0, nil)
				mu.Lock()
				if err == nil {
					completed++
				} else {
					gaveUp++
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		orphans.Wait() // time goes on for them only while the bubble's main goroutine waits
	})
	got := map[string]int64{"completed": completed, "gave_up": gaveUp, "attempts": counts[len(levels)-1].attempts,
		"layers.outer.attempts": counts[0].attempts, "layers.after_giveup": counts[len(levels)-1].late}
	for k, l := range levels {
		for _, class := range sim.RetryClassNames() {
			got["layers."+l.Name+".retries_"+class] = counts[k].retries[class]
		}
		if k > 0 {
			got["layers."+l.Name+".attempts_in"] = counts[k].in
			got["layers."+l.Name+".attempts"] = counts[k].attempts
			got["layers."+l.Name+".after_giveup"] = counts[k].late
		}
	}
	return got
}

func TestSameLayersInSimulatorAndProduction(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	tested, passedBack := 0, 0 // passedBack: layers whose retry_on passed a failure back
	for _, s := range f.Scenarios {
		for i, p := range s.Policies {
			if len(p.Layers) == 0 {
				continue
			}
			tested++
			t.Run(s.Name+"/"+p.Name, func(t *testing.T) {
				res, err := sim.Run(s.Config(i, s.Seed))
				if err != nil {
					t.Fatal(err)
				}
				prod := produceLayers(t, s, i)
				simulated := map[string]int64{"completed": int64(res.Completed), "gave_up": int64(res.GaveUp), "attempts": int64(res.Attempts)}
				for _, c := range res.Counters {
					if len(c.Name) > 7 && c.Name[:7] == "layers." {
						simulated[c.Name] = c.Value
					}
				}
				if len(simulated) != len(prod) {
					t.Errorf("the simulator reports %d counts, production %d", len(simulated), len(prod))
				}
				for name, want := range simulated {
					if got, ok := prod[name]; !ok || got != want {
						t.Errorf("%s: production %d, simulator %d", name, got, want)
					}
				}
				if simulated["attempts"] == 0 || simulated["layers.outer.attempts"] >= simulated["attempts"] {
					t.Errorf("%v: the layers multiply no attempts; the case tests nothing", simulated)
				}
				for _, l := range p.Layers {
					// Every request in, one out, no retries: the rule
					// passed each failure back.
					if !l.Rules.RetryOn.IsZero() && simulated["layers."+l.Name+".attempts"] == simulated["layers."+l.Name+".attempts_in"] {
						passedBack++
					}
				}
				t.Log(fmt.Sprint(simulated))
			})
		}
	}
	if tested < 4 {
		t.Errorf("%d layered policies among the built-in scenarios, want at least 4", tested)
	}
	if passedBack == 0 {
		t.Error("no built-in layer's retry_on passes a failure back: the test does not check the rule in both worlds")
	}
}

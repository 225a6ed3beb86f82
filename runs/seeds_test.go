package runs

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// runAll runs k seeds of s on workers workers and returns a copy of every
// result, indexed [seed][policy].
func runAll(t *testing.T, s *scenarios.Scenario, k, workers int) [][]sim.Result {
	t.Helper()
	out := make([][]sim.Result, k)
	for i := range out {
		out[i] = make([]sim.Result, len(s.Policies))
	}
	err := Seeds(context.Background(), s, s.Seed, k, workers, func(seed, p int, r *sim.Result) {
		c := *r
		c.Latencies = slices.Clone(r.Latencies) // r is only valid during the call
		out[seed][p] = c
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Which worker runs which (seed, policy), and in what chunks, must not reach
// the results.
func TestSeedsResultsDoNotDependOnWorkers(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	const k = 101 // not a multiple of any chunk size
	want := runAll(t, s, k, 1)
	for _, workers := range []int{2, 7} {
		got := runAll(t, s, k, workers)
		for seed := range want {
			for p := range want[seed] {
				if !reflect.DeepEqual(got[seed][p], want[seed][p]) {
					t.Fatalf("workers=%d, seed %d, policy %d:\n got %+v\nwant %+v", workers, seed, p, got[seed][p], want[seed][p])
				}
			}
		}
	}
}

// The error returned is the first in (seed, policy) order, however the runs
// are spread.
func TestSeedsFirstErrorInOrder(t *testing.T) {
	s := *scenariotest.Builtin(t, "overload-burst")
	bad := func(name string) sim.Policy {
		p := s.Policies[0]
		p.Name, p.Rules.MaxAttempts, p.Rules.Deadline = name, 0, 0
		return p
	}
	s.Policies = []sim.Policy{s.Policies[0], bad("first-bad"), bad("second-bad")}
	for _, workers := range []int{1, 2, 7} {
		err := Seeds(context.Background(), &s, 1, 50, workers, func(int, int, *sim.Result) {})
		if err == nil || !strings.Contains(err.Error(), `"first-bad"`) {
			t.Errorf("workers=%d: err = %v, want the first bad policy's", workers, err)
		}
	}
}

// Cancelling stops the runs: each worker finishes the run it is in and
// starts no other.
func TestSeedsStopsWhenCancelled(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	const workers, stopAfter = 2, 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	runs := 0
	err := Seeds(ctx, s, 1, 1000, workers, func(int, int, *sim.Result) {
		mu.Lock()
		defer mu.Unlock()
		if runs++; runs == stopAfter {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if runs > stopAfter+workers-1 {
		t.Fatalf("%d runs after cancelling at run %d with %d workers", runs, stopAfter, workers)
	}
}

func TestChunkSize(t *testing.T) {
	for _, tt := range []struct{ total, workers, want int }{
		{4000, 2, 125}, // --seeds 1000, 4 policies: 16 chunks a worker
		{4000, 1, 250},
		{8, 2, 1}, // few long runs: one at a time
		{0, 0, 1},
	} {
		if got := chunkSize(tt.total, tt.workers); got != tt.want {
			t.Errorf("chunkSize(%d, %d) = %d, want %d", tt.total, tt.workers, got, tt.want)
		}
	}
}

// Every built-in scenario must run. The large ones (huge-burst, 1,000,000
// clients) take seconds, far more under -race; .ci/run runs them through
// 'retrysim check', whose expectations bound their results.
func TestBuiltinScenariosRun(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Scenarios {
		if s.Operations() > 100_000 {
			continue
		}
		res, err := One(t.Context(), s, s.Seed)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		for _, r := range res {
			if r.Completed+r.GaveUp != r.Clients {
				t.Errorf("%s/%s: %d completed + %d gave up != %d clients", s.Name, r.Policy, r.Completed, r.GaveUp, r.Clients)
			}
		}
	}
}

package runs

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/sim"
)

// A Progress in the context is told of every run: its events add up to
// the results' events, and every run, timelines included, ends once.
func TestProgressSeesEveryRun(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	s.Workload = sim.Burst{Clients: 3000} // enough events for calls during the runs
	const k = 3
	var mu sync.Mutex
	told := make([]int, len(s.Policies))
	done := make([]int, len(s.Policies))
	doneEvents := make([]int, len(s.Policies))
	ctx := WithProgress(context.Background(), &Progress{
		Events: func(p, more int) { mu.Lock(); told[p] += more; mu.Unlock() },
		Done:   func(p, events int) { mu.Lock(); done[p]++; doneEvents[p] += events; mu.Unlock() },
	})
	want := make([]int, len(s.Policies))
	err := Seeds(ctx, s, s.Seed, k, 2, func(_, p int, r *sim.Result) {
		mu.Lock()
		want[p] += r.Events
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range s.Policies {
		if told[p] != want[p] || doneEvents[p] != want[p] || done[p] != k {
			t.Errorf("policy %d: told %d events, %d at the end of %d runs; the runs processed %d in %d", p, told[p], doneEvents[p], done[p], want[p], k)
		}
	}
	clear(done)
	if _, err := CollectPlotData(ctx, s, s.Seed, k, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	for p := range s.Policies {
		if done[p] != k+1 {
			t.Errorf("policy %d: %d runs ended for plots of %d seeds, want %d (with the timeline)", p, done[p], k, k+1)
		}
	}
}

package sim

import (
	"math/rand/v2"
	"time"
)

// The random sources of a run, for drivers outside this package that replay
// a scenario on another clock (package serve's validation runs the clients
// on the real clock against a real HTTP server). Given the same seed they
// draw exactly what a simulated run draws, so that a client that meets the
// same outcomes makes the same choices.

// PolicyRand returns the source of operation i's policy draws (backoff and
// jitter) in a run with seed.
func PolicyRand(seed uint64, i int) *rand.Rand {
	pcg := newStream(seed, streamPolicy, uint64(i))
	return rand.New(&pcg)
}

// WorkloadRand returns the source a run with seed gives a Chained
// workload's Chain.Next (and a StartDrawer's draws).
func WorkloadRand(seed uint64) *rand.Rand {
	pcg := newStream(seed, streamWorkload, 0)
	return rand.New(&pcg)
}

// ServerRand returns the source a run with seed gives ServerModel.NewServer.
func ServerRand(seed uint64) *rand.Rand {
	pcg := newStream(seed, streamServer, 0)
	return rand.New(&pcg)
}

// StartTimes returns when each of w's operations starts in a run with seed:
// the starts a StartDrawer draws, as the engine draws them, or else
// Start(i) for each operation. (A Chained workload's later operations
// start when others end: only its leaders' starts are known up front.)
func StartTimes(seed uint64, w Workload) []time.Duration {
	if d, ok := w.(StartDrawer); ok {
		pcg := newStream(seed, streamWorkload, 0)
		return d.DrawStarts(rand.New(&pcg), nil)
	}
	starts := make([]time.Duration, w.Operations())
	for i := range starts {
		pcg := newStream(seed, streamStart, uint64(i))
		starts[i] = w.Start(i, rand.New(&pcg))
	}
	return starts
}

package sim

import (
	"math/rand/v2"
	"time"
)

// Test-only access for sim_test: the random stream a client's policy draws
// from, and a server model driven by hand.

// ClientPolicyStream returns the PCG stream client i's policy draws from in
// a run with the given seed.
func ClientPolicyStream(seed uint64, i int) *rand.PCG {
	p := newStream(seed, streamPolicy, uint64(i))
	return &p
}

// NewServerModel returns the admission function of m as a run with the given
// seed builds it: calls must come in time order.
func NewServerModel(m *CapacityWindows, seed uint64) func(now time.Duration) (admitted bool, rej Rejection, respondAt time.Duration) {
	pcg := newStream(seed, streamServer, 0)
	return newServerState(m, rand.New(&pcg)).arrive
}

// ClientStart returns client i's start time in a run with the given seed
// and workload spread.
func ClientStart(seed uint64, i int, spread time.Duration) time.Duration {
	return startTime(seed, uint64(i), spread)
}

// RunTraced runs cfg as Run does and calls trace with every event just
// before the run processes it: its time, its client and what it does
// ("ready", "send" or "response"). Whatever the run reports while
// processing the event (OnRequest, Hooks) belongs to that client.
func RunTraced(cfg Config, trace func(at time.Duration, client int, kind string)) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	r := runner{trace: func(at time.Duration, i int32, kind eventKind) {
		trace(at, int(i), [...]string{evReady: "ready", evSend: "send", evResponse: "response"}[kind])
	}}
	return r.run(&cfg)
}

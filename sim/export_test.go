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

package sim

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Burst is a workload of Clients operations, one per client, starting at
// t = 0, or spread uniformly over [0, Spread) when Spread > 0.
type Burst struct {
	Clients int
	Spread  time.Duration
}

// MaxOperations bounds the operations of one run (they are indexed by int32).
const MaxOperations = 1<<31 - 1

// Validate checks the burst's size and spread.
func (b Burst) Validate() error {
	switch {
	case b.Clients <= 0:
		return fmt.Errorf("workload needs at least one client (got %d)", b.Clients)
	case b.Clients > MaxOperations:
		return fmt.Errorf("workload has %d clients; at most %d are supported", b.Clients, MaxOperations)
	case b.Spread < 0:
		return fmt.Errorf("workload spread is negative (%v)", b.Spread)
	}
	return nil
}

// Operations returns the number of clients: one operation each.
func (b Burst) Operations() int { return b.Clients }

// Start returns 0, or a draw uniform over [0, Spread) when Spread > 0.
func (b Burst) Start(_ int, rng *rand.Rand) time.Duration {
	return spreadStart(b.Spread, rng)
}

// spreadStart is a start uniform over [0, spread), or 0 when spread <= 0
// (no draw).
func spreadStart(spread time.Duration, rng *rand.Rand) time.Duration {
	if spread <= 0 {
		return 0
	}
	return time.Duration(rng.Int64N(int64(spread)))
}

package runs

import (
	"testing"

	"github.com/retrysim/retrysim/kinds"
)

// Parallel runs use a core each, but huge bursts run fewer at a time so that
// together they stay within parallelMemory (docs/performance.md).
func TestAutoWorkersBoundsMemory(t *testing.T) {
	for _, tt := range []struct{ cores, clients, want int }{
		{2, 20, 2},                // small runs: every core
		{24, 1_000_000, 24},       // huge-burst: 24 × 120 MB fits
		{24, 50_000_000, 2},       // 50M clients: 2 × 8 GB fit in 16 GiB
		{2, 50_000_000, 2},        // fewer cores than that: the cores
		{24, kinds.MaxClients, 1}, // 100M clients: 16 GB, one at a time
		{64, 200_000_000, 1},      // beyond the budget: still one
		{2, 0, 2},                 // an open loop expecting no arrivals
	} {
		if got := ParallelWorkers(tt.cores, tt.clients); got != tt.want {
			t.Errorf("ParallelWorkers(%d cores, %d clients) = %d, want %d", tt.cores, tt.clients, got, tt.want)
		}
	}
}

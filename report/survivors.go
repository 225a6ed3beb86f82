package report

import (
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/runs"
)

// LowCompletion is the completed share, relative to the share of the
// policy that completes the most, below which a policy is marked where a
// single number per policy is shown without a test (plots, sweep tables):
// drawn hollow, or its survivor statistics starred. Its latencies describe
// only the operations that survived. docs/plots.md states the rule.
const LowCompletion = 0.95

// CompletedShares returns, per policy of m, the share of its operations
// (those that completed plus those that gave up, over every seed) that
// completed, and whether that share is below LowCompletion times the
// largest share.
func CompletedShares(m *runs.MultiSeed) (share []float64, low []bool) {
	n := len(m.Policies)
	share, low = make([]float64, n), make([]bool, n)
	best := 0.0
	for p := range n {
		done, ops := 0.0, 0.0
		for _, metric := range []*metrics.Metric{metrics.Completed, metrics.GaveUp} {
			vals, _ := m.Values(p, metric)
			for _, v := range vals {
				ops += v
				if metric == metrics.Completed {
					done += v
				}
			}
		}
		if ops > 0 {
			share[p] = done / ops
		}
		best = max(best, share[p])
	}
	for p := range n {
		low[p] = share[p] < LowCompletion*best
	}
	return share, low
}

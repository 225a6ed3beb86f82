// Package stats holds the statistics retrysim takes over seeds: a centre
// and a spread (Summarize), the paired Wilcoxon signed-rank test
// (SignedRank) and the comparison of two samples paired by seed (Paired),
// with warnings where a test cannot reach significance, in the manner of
// benchstat. It is a leaf: it knows nothing of simulations or metrics.
//
// Every function gives the same bits for the same inputs in the same order:
// sums run in the order given, and no product is left to a fused
// multiply-add.
package stats

package stats

import "math"

// z975 is the 0.975 quantile of the standard normal distribution.
const z975 = 1.959963984540054

// Wilson returns the 95% Wilson score interval of a proportion p observed
// over n trials: it stays inside [0, 1], and unlike the normal
// approximation it is not of width 0 when p is 0 or 1. For n < 1 it
// returns (p, p).
//
// Over seeds, p is the mean of n values in [0, 1] (the share of seeds that
// recovered, the mean completed share). For 0/1 values this is the
// textbook interval; for shares the values' variance is at most p(1−p), so
// the interval is at least as wide as it needs to be.
func Wilson(p float64, n int) (lo, hi float64) {
	if n < 1 {
		return p, p
	}
	p = min(max(p, 0), 1)
	nf := float64(n)
	z2 := z975 * z975
	denom := 1 + z2/nf
	centre := (p + z2/(2*nf)) / denom
	half := z975 * math.Sqrt(float64(p*(1-p))/nf+z2/(4*nf*nf)) / denom
	return max(0, centre-half), min(1, centre+half)
}

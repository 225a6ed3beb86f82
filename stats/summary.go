package stats

import (
	"math"
	"slices"
)

// Summary describes one metric over many seeds.
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	CILow  float64 `json:"ci95_low"`  // 95% confidence interval of the mean
	CIHigh float64 `json:"ci95_high"` // (Student's t; equal to Mean when N < 2)
	StdDev float64 `json:"stddev"`    // sample standard deviation
	Median float64 `json:"median"`
	P5     float64 `json:"p5"`
	P95    float64 `json:"p95"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Summarize computes a Summary of xs. Quantiles interpolate linearly between
// order statistics (Hyndman–Fan type 7, as R and NumPy do by default). Sums
// run in the order given, so the same xs give the same bits.
func Summarize(xs []float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{}
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	s := Summary{N: n, Mean: mean, CILow: mean, CIHigh: mean, Min: sorted[0], Max: sorted[n-1],
		Median: Quantile(sorted, 0.5), P5: Quantile(sorted, 0.05), P95: Quantile(sorted, 0.95)}
	if n >= 2 {
		var ss float64
		for _, x := range xs {
			d := x - mean
			ss += float64(d * d) // explicit conversion: no fused multiply-add, same bits everywhere
		}
		s.StdDev = math.Sqrt(ss / float64(n-1))
		half := float64(tQuantile975(n-1) * s.StdDev / math.Sqrt(float64(n)))
		s.CILow, s.CIHigh = mean-half, mean+half
	}
	return s
}

// Quantile returns the q-quantile (0 <= q <= 1) of sorted values by linear
// interpolation; 0 when there are none.
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	h := float64(n-1) * q
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	frac := h - float64(lo)
	return sorted[lo] + float64(frac*(sorted[lo+1]-sorted[lo]))
}

// tTable holds the 0.975 quantile of Student's t for 1..30 degrees of freedom.
var tTable = [...]float64{
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
}

// tQuantile975 returns the 0.975 quantile of Student's t with df degrees of
// freedom: from the table up to 30, then the Cornish–Fisher expansion around
// the normal quantile (error below 1e-3 for df > 30).
func tQuantile975(df int) float64 {
	if df <= 0 {
		return math.NaN()
	}
	if df <= len(tTable) {
		return tTable[df-1]
	}
	const z = 1.959963984540054
	v := float64(df)
	z3, z5 := z*z*z, z*z*z*z*z
	return z + (z3+z)/float64(4*v) + (float64(5*z5)+float64(16*z3)+float64(3*z))/float64(96*v*v)
}

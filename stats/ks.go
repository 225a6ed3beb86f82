package stats

import (
	"math"
	"slices"
)

// KolmogorovSmirnov is the two-sample Kolmogorov-Smirnov test: d is the
// largest distance between the empirical distribution functions of a and
// b, p its asymptotic p-value (Kolmogorov's distribution with Stephens'
// small-sample correction, as Numerical Recipes gives it). With an empty
// sample d is 0 and p is 1. a and b are not changed.
func KolmogorovSmirnov(a, b []float64) (d, p float64) {
	if len(a) == 0 || len(b) == 0 {
		return 0, 1
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	i, j := 0, 0
	n, m := float64(len(x)), float64(len(y))
	for i < len(x) && j < len(y) {
		v := min(x[i], y[j])
		for i < len(x) && x[i] == v {
			i++
		}
		for j < len(y) && y[j] == v {
			j++
		}
		d = max(d, math.Abs(float64(i)/n-float64(j)/m))
	}
	ne := n * m / (n + m)
	sq := math.Sqrt(ne)
	return d, kolmogorovQ((sq + 0.12 + 0.11/sq) * d)
}

// kolmogorovQ is Q_KS(λ) = 2 Σ_{k≥1} (−1)^(k−1) e^(−2k²λ²).
func kolmogorovQ(lambda float64) float64 {
	if lambda < 1e-3 {
		return 1
	}
	sum, sign := 0.0, 1.0
	for k := 1; k <= 100; k++ {
		term := sign * 2 * math.Exp(-2*float64(k*k)*lambda*lambda)
		sum += term
		if math.Abs(term) < 1e-12 {
			break
		}
		sign = -sign
	}
	return min(max(sum, 0), 1)
}

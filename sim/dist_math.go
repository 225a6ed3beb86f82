package sim

import "math"

// Portable exp and log for the distributions. math.Exp and math.Log have
// assembly versions on some architectures (amd64 picks one by CPU feature),
// and those may round differently from the pure-Go ones; a draw that lands
// on the other side of a nanosecond would change a run. These use only
// additions, products and divisions, each product converted explicitly so
// that no platform fuses it into a multiply-add, and exact bit operations:
// every platform computes the same bits. They are accurate to a few ulp,
// which is far more than a duration in nanoseconds needs.

const (
	ln2Hi = 6.93147180369123816490e-01 // ln 2, high part (exact in few bits)
	ln2Lo = 1.90821492927058770002e-10 // ln 2 − ln2Hi
)

// portableLog returns the natural logarithm of x > 0 (finite). It returns
// -Inf for 0 and NaN for negative x or NaN.
func portableLog(x float64) float64 {
	switch {
	case x != x || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	}
	b := math.Float64bits(x)
	e := int(b>>52&0x7ff) - 1023
	if b>>52&0x7ff == 0 { // subnormal: scale into the normal range first
		x = float64(x * (1 << 54))
		b = math.Float64bits(x)
		e = int(b>>52&0x7ff) - 1023 - 54
	}
	m := math.Float64frombits(b&^(0x7ff<<52) | 1023<<52) // mantissa in [1, 2)
	if m > math.Sqrt2 {
		m /= 2 // exact
		e++
	}
	// ln m = 2·atanh(s), s = (m−1)/(m+1), |s| <= 0.1716:
	// 2s·(1 + s²/3 + s⁴/5 + …), 11 terms (the next is below 1e-18).
	s := (m - 1) / (m + 1)
	s2 := float64(s * s)
	p := 1.0 / 21
	for k := 19; k >= 1; k -= 2 {
		p = float64(p*s2) + 1/float64(k)
	}
	lnm := float64(float64(2*s) * p)
	fe := float64(e)
	return float64(fe*ln2Hi) + (float64(fe*ln2Lo) + lnm)
}

// invFact[n] is 1/n!.
var invFact = [...]float64{
	1, 1, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
	1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800,
	1.0 / 479001600, 1.0 / 6227020800,
}

// portableExp returns e**x: +Inf above 709.78, 0 below -745.2.
func portableExp(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > 709.78:
		return math.Inf(1)
	case x < -745.2:
		return 0
	}
	// x = k·ln 2 + r with |r| <= ln2/2; e**r by its Taylor series to r¹³
	// (the next term is below 5e-18).
	k := math.Floor(float64(x/math.Ln2) + 0.5)
	r := x - float64(k*ln2Hi) - float64(k*ln2Lo)
	p := invFact[len(invFact)-1]
	for n := len(invFact) - 2; n >= 0; n-- {
		p = float64(p*r) + invFact[n]
	}
	return math.Ldexp(p, int(k))
}

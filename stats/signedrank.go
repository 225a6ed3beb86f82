package stats

import (
	"math"
	"slices"
	"strconv"
)

// exactSignedRankMax is the largest number of non-zero pairs for which
// SignedRank computes the exact null distribution; above it, the normal
// approximation is used.
const exactSignedRankMax = 50

// SignedRankTest is the outcome of a two-sided Wilcoxon signed-rank test.
type SignedRankTest struct {
	// N is the number of pairs with a non-zero difference (zeros are
	// dropped, as in Wilcoxon's original method).
	N int
	// WPlus and WMinus are the sums of the ranks of |y−x| over the pairs
	// where y > x and y < x; tied magnitudes get their mean rank.
	WPlus, WMinus float64
	// P is the two-sided p-value: exact (conditional on the observed ranks)
	// when N <= 50, else from the normal approximation with tie and
	// continuity corrections. P is 1 when N is 0.
	P float64
	// Exact reports whether P comes from the exact distribution.
	Exact bool
}

// SignedRank runs a two-sided Wilcoxon signed-rank test on paired samples:
// x[i] and y[i] were measured under the same conditions (here: the same
// seed). It panics if the lengths differ. Its result depends only on the
// values, in the order given, so the same inputs give the same bits.
func SignedRank(x, y []float64) SignedRankTest {
	if len(x) != len(y) {
		panic("stats.SignedRank: samples of different lengths")
	}
	type diff struct {
		abs float64
		pos bool
	}
	var ds []diff
	for i := range x {
		d := PairDifference(x[i], y[i])
		if d != 0 && !math.IsNaN(d) {
			ds = append(ds, diff{abs: math.Abs(d), pos: d > 0})
		}
	}
	n := len(ds)
	t := SignedRankTest{N: n, P: 1}
	if n == 0 {
		return t
	}
	slices.SortStableFunc(ds, func(a, b diff) int {
		switch {
		case a.abs < b.abs:
			return -1
		case a.abs > b.abs:
			return 1
		}
		return 0
	})
	// Doubled mid-ranks are integers: a tie group over positions i..j-1
	// (0-based) has mean rank (i+1+j)/2, doubled i+1+j.
	ranks2 := make([]int, n)
	var tieTerm float64 // Σ (t³ − t) over tie groups
	for i := 0; i < n; {
		j := i + 1
		for j < n && ds[j].abs == ds[i].abs {
			j++
		}
		for k := i; k < j; k++ {
			ranks2[k] = i + 1 + j
		}
		if g := float64(j - i); g > 1 {
			tieTerm += float64(g*g*g) - g
		}
		i = j
	}
	w2 := 0 // doubled W+
	for i, d := range ds {
		if d.pos {
			w2 += ranks2[i]
			t.WPlus += float64(ranks2[i]) / 2
		} else {
			t.WMinus += float64(ranks2[i]) / 2
		}
	}
	if n <= exactSignedRankMax {
		t.Exact = true
		t.P = exactSignedRankP(ranks2, w2)
		return t
	}
	nf := float64(n)
	mean := float64(nf*(nf+1)) / 4
	variance := float64(nf*(nf+1)*(2*nf+1))/24 - tieTerm/48
	if variance <= 0 {
		return t
	}
	dev := math.Abs(t.WPlus-mean) - 0.5
	if dev <= 0 {
		return t
	}
	z := dev / math.Sqrt(variance)
	t.P = min(1, math.Erfc(z/math.Sqrt2))
	return t
}

// PairDifference is y − x to 10 significant digits: values recorded to a
// few decimals (5.3 and 5.25) differ by what their decimals say (0.05),
// not by the binary rounding of the subtraction (0.04999999999999982), so
// that equal differences tie, as the test's ranks assume.
func PairDifference(x, y float64) float64 {
	d := y - x
	if d == 0 || math.IsNaN(d) || math.IsInf(d, 0) {
		return d
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(d, 'g', 10, 64), 64)
	return r
}

// exactSignedRankP returns the two-sided p-value of the doubled statistic w2
// under the null hypothesis that each rank's sign is + or − with equal
// probability, by counting sign assignments with dynamic programming.
func exactSignedRankP(ranks2 []int, w2 int) float64 {
	total := 0
	for _, r := range ranks2 {
		total += r
	}
	// counts[s] = number of sign assignments whose doubled W+ is s. Counts
	// stay below 2^50, so float64 holds them exactly.
	counts := make([]float64, total+1)
	counts[0] = 1
	top := 0
	for _, r := range ranks2 {
		for s := top; s >= 0; s-- {
			if counts[s] != 0 {
				counts[s+r] += counts[s]
			}
		}
		top += r
	}
	var le, ge, all float64
	for s, c := range counts {
		all += c
		if s <= w2 {
			le += c
		}
		if s >= w2 {
			ge += c
		}
	}
	return min(1, 2*min(le, ge)/all)
}

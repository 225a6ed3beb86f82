package stats

import (
	"cmp"
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
	var ranks2 []int
	group := map[int]int{} // doubled rank → pairs that share it
	w2 := 0                // doubled W+
	t := SignedRankTest{P: 1}
	for _, r := range SignedRanks(x, y) {
		switch {
		case r > 0:
			w2 += r
			t.WPlus += float64(r) / 2
		case r < 0:
			r = -r
			t.WMinus += float64(r) / 2
		default:
			continue
		}
		ranks2 = append(ranks2, r)
		group[r]++
	}
	n := len(ranks2)
	t.N = n
	if n == 0 {
		return t
	}
	var tieTerm float64 // Σ (g³ − g) over tie groups, in a fixed order
	sizes := make([]int, 0, len(group))
	for _, g := range group {
		sizes = append(sizes, g)
	}
	slices.Sort(sizes)
	for _, g := range sizes {
		if g > 1 {
			gf := float64(g)
			tieTerm += gf*gf*gf - gf
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

// SignedRanks returns, for each pair, the doubled mid-rank of |y − x|
// among the pairs that differ (ties share their mean rank; doubled, it is
// an integer: a tie group over sorted positions i..j−1, 0-based, has
// doubled rank i+1+j), signed as y − x; 0 where the two are equal or one
// is NaN. Differences are PairDifference's.
func SignedRanks(x, y []float64) []int {
	type diff struct {
		at  int
		abs float64
		pos bool
	}
	var ds []diff
	for i := range x {
		d := PairDifference(x[i], y[i])
		if d != 0 && !math.IsNaN(d) {
			ds = append(ds, diff{at: i, abs: math.Abs(d), pos: d > 0})
		}
	}
	slices.SortStableFunc(ds, func(a, b diff) int { return cmp.Compare(a.abs, b.abs) })
	out := make([]int, len(x))
	for i := 0; i < len(ds); {
		j := i + 1
		for j < len(ds) && ds[j].abs == ds[i].abs {
			j++
		}
		for _, d := range ds[i:j] {
			out[d.at] = i + 1 + j
			if !d.pos {
				out[d.at] = -out[d.at]
			}
		}
		i = j
	}
	return out
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

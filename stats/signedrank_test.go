package stats

import (
	"math"
	"testing"
)

func TestSignedRankKnownValues(t *testing.T) {
	tests := []struct {
		name  string
		x, y  []float64
		n     int
		wplus float64
		p     float64
		exact bool
	}{
		// All ten differences positive and distinct: W+ = 55, the most
		// extreme of 2^10 sign patterns on each side: p = 2/1024.
		{"all-positive", make([]float64, 10), []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10, 55, 2.0 / 1024, true},
		// Zeros are dropped; nothing left means no evidence.
		{"all-zero", []float64{1, 2, 3}, []float64{1, 2, 3}, 0, 0, 1, false},
		// Five positive differences can never reach p < 0.05: 2/32.
		{"five-pairs", make([]float64, 5), []float64{3, 3, 3, 3, 3}, 5, 15, 2.0 / 32, true},
		// Symmetric differences: W+ = W−, p = 1.
		{"symmetric", []float64{0, 0, 0, 0}, []float64{1, -1, 2, -2}, 4, 5, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SignedRank(tt.x, tt.y)
			if got.N != tt.n || got.WPlus != tt.wplus || got.Exact != tt.exact || math.Abs(got.P-tt.p) > 1e-12 {
				t.Errorf("SignedRank = %+v, want N=%d W+=%v P=%v exact=%v", got, tt.n, tt.wplus, tt.p, tt.exact)
			}
		})
	}
}

// R: wilcox.test(c(1.83,0.50,1.62,2.48,1.68,1.88,1.55,3.06,1.30),
//
//	c(0.878,0.647,0.598,2.05,1.06,1.29,1.06,3.14,1.29), paired=TRUE)
//
// gives V = 40, p-value = 0.03906.
func TestSignedRankMatchesR(t *testing.T) {
	x := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	y := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	got := SignedRank(x, y)
	if got.WPlus != 40 || math.Abs(got.P-0.0390625) > 1e-9 {
		t.Errorf("got W+=%v p=%v, want 40 and 0.0390625", got.WPlus, got.P)
	}
}

// Above 50 pairs the normal approximation applies; check it against the
// exact distribution just below the switch, where both are available.
func TestSignedRankNormalApproximation(t *testing.T) {
	const n = 60
	x := make([]float64, n)
	y := make([]float64, n)
	for i := range n {
		y[i] = float64(i + 1)
		if i%3 == 0 {
			y[i] = -y[i]
		}
	}
	got := SignedRank(x, y)
	if got.Exact {
		t.Fatal("expected the normal approximation for 60 pairs")
	}
	// W+ = 1830 − 590 = 1240; mean 915, variance 18452.5, so with the
	// continuity correction z = 324.5/135.84 = 2.389 and p = 0.0169.
	if math.Abs(got.P-0.0169) > 0.0005 {
		t.Errorf("p = %v, want 0.0169", got.P)
	}
	// With ties: 60 equal positive differences: maximal evidence.
	for i := range y {
		y[i] = 1
	}
	if got := SignedRank(x, y); got.P > 1e-10 {
		t.Errorf("all-equal positive differences: p = %v, want tiny", got.P)
	}
}

// Differences of values recorded to a few decimals tie when their
// decimals are equal, whatever the binary rounding of the subtraction.
func TestSignedRankTiesRecordedDifferences(t *testing.T) {
	x, y := []float64{0.1, 1.1, 2}, []float64{0.3, 1.3, 2.5}
	if d1, d2 := y[0]-x[0], y[1]-x[1]; d1 == d2 {
		t.Fatalf("the float differences %v and %v are equal: the test shows nothing", d1, d2)
	}
	if got := SignedRank(x, y); got.WPlus != 6 || got.N != 3 {
		t.Fatalf("%+v", got)
	}
	// Ranks 1.5, 1.5, 3: the tie is seen.
	if PairDifference(x[0], y[0]) != PairDifference(x[1], y[1]) {
		t.Errorf("PairDifference: %v, %v", PairDifference(x[0], y[0]), PairDifference(x[1], y[1]))
	}
}

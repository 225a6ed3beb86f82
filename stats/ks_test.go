package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Samples of one distribution pass; a shifted one fails; d is exact on a
// small case.
func TestKolmogorovSmirnov(t *testing.T) {
	if d, _ := KolmogorovSmirnov([]float64{1, 2, 3}, []float64{4, 5, 6}); d != 1 {
		t.Errorf("disjoint samples: d = %v, want 1", d)
	}
	if d, _ := KolmogorovSmirnov([]float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}); d != 0 {
		t.Errorf("equal samples: d = %v, want 0", d)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int, shift float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = rng.NormFloat64() + shift
		}
		return xs
	}
	if _, p := KolmogorovSmirnov(draw(500, 0), draw(300, 0)); p < 0.01 {
		t.Errorf("same distribution: p = %v", p)
	}
	if _, p := KolmogorovSmirnov(draw(500, 0), draw(300, 0.5)); p > 1e-6 {
		t.Errorf("shifted by half a sd: p = %v", p)
	}
	// Q_KS(1.36) is about 0.05, the textbook critical value.
	if q := kolmogorovQ(1.36); math.Abs(q-0.0494) > 0.001 {
		t.Errorf("Q(1.36) = %v", q)
	}
}

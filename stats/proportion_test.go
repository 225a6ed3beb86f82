package stats

import (
	"math"
	"testing"
)

// Wilson intervals against published values (Newcombe 1998, table I:
// 81/263 gives 0.2553–0.3662; 0/10 gives 0–0.2775), and they stay in
// [0, 1] where Student's t interval of 0/1 values does not.
func TestWilson(t *testing.T) {
	for _, c := range []struct {
		p      float64
		n      int
		lo, hi float64
	}{
		{81.0 / 263, 263, 0.2553, 0.3662},
		{0, 10, 0, 0.2775},
		{1, 10, 0.7225, 1},
		{0.5, 1, 0.0546, 0.9454},
	} {
		lo, hi := Wilson(c.p, c.n)
		if math.Abs(lo-c.lo) > 5e-4 || math.Abs(hi-c.hi) > 5e-4 {
			t.Errorf("Wilson(%v, %d) = %.4f–%.4f, want %.4f–%.4f", c.p, c.n, lo, hi, c.lo, c.hi)
		}
	}
	// 19 of 20 seeds recovered: t reaches above 1, Wilson does not.
	vals := make([]float64, 20)
	for i := range 19 {
		vals[i] = 1
	}
	if s := Summarize(vals); s.CIHigh <= 1 {
		t.Fatalf("t interval %v–%v: the test needs one that leaves [0, 1]", s.CILow, s.CIHigh)
	}
	if lo, hi := Wilson(0.95, 20); lo < 0 || hi > 1 || lo >= 0.95 || hi <= 0.95 {
		t.Errorf("Wilson(0.95, 20) = %v–%v", lo, hi)
	}
}

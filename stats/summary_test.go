package stats

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{4, 1, 3, 2, 5})
	if s.N != 5 || s.Mean != 3 || s.Median != 3 || s.Min != 1 || s.Max != 5 {
		t.Fatalf("summary %+v", s)
	}
	// Sample sd of 1..5 is sqrt(2.5); t(0.975, 4) = 2.776.
	half := 2.776 * math.Sqrt(2.5) / math.Sqrt(5)
	if math.Abs(s.StdDev-math.Sqrt(2.5)) > 1e-12 || math.Abs(s.CIHigh-(3+half)) > 1e-9 || math.Abs(s.CILow-(3-half)) > 1e-9 {
		t.Fatalf("sd %v CI [%v, %v], want sd %v half-width %v", s.StdDev, s.CILow, s.CIHigh, math.Sqrt(2.5), half)
	}
	// Type-7 quantiles: p5 of 1..5 is 1 + 0.05·4 = 1.2.
	if math.Abs(s.P5-1.2) > 1e-12 || math.Abs(s.P95-4.8) > 1e-12 {
		t.Fatalf("p5 %v p95 %v, want 1.2 and 4.8", s.P5, s.P95)
	}
	if one := Summarize([]float64{7}); one.CILow != 7 || one.CIHigh != 7 || one.StdDev != 0 || len(one.Warnings()) != 1 {
		t.Fatalf("single value: %+v", one)
	}
	if (Summarize(nil) != Summary{}) {
		t.Fatal("empty input gave a non-zero summary")
	}
}

func TestTQuantileIsContinuousPastTheTable(t *testing.T) {
	if got := tQuantile975(31); math.Abs(got-2.0395) > 2e-3 {
		t.Fatalf("t(31) = %v, want about 2.0395", got)
	}
	if got := tQuantile975(1000); math.Abs(got-1.9623) > 1e-3 {
		t.Fatalf("t(1000) = %v, want about 1.9623", got)
	}
}

func TestPaired(t *testing.T) {
	nan := math.NaN()
	base := []float64{10, 10, 10, 10, 10, 10, 10, nan}
	better := []float64{12, 13, 11, 14, 12, 15, 16, 1}
	d := Paired(base, better, HigherIsBetter)
	if d.Pairs != 7 || d.Verdict != Better || len(d.Warnings) != 0 {
		t.Fatalf("higher values where higher is better: %+v", d)
	}
	if d := Paired(base, better, LowerIsBetter); d.Verdict != Worse {
		t.Fatalf("higher values where lower is better: %+v", d)
	}
	// Five differing pairs can never be significant: say so.
	few := Paired([]float64{0, 0, 0, 0, 0, 0}, []float64{1, 1, 1, 1, 1, 0}, HigherIsBetter)
	if few.Verdict != Same || len(few.Warnings) != 1 || !math.IsNaN(few.DeltaPercent) {
		t.Fatalf("five differing pairs: %+v", few)
	}
	if none := Paired([]float64{nan}, []float64{1}, HigherIsBetter); none.Pairs != 0 || len(none.Warnings) != 1 || none.Test.P != 1 {
		t.Fatalf("no pairs: %+v", none)
	}
}

package stats

import (
	"fmt"
	"math"
)

// Alpha is the significance level of the comparisons.
const Alpha = 0.05

// Direction says which way a measure improves.
type Direction int

const (
	HigherIsBetter Direction = iota + 1
	LowerIsBetter
)

// String is "higher is better" or "lower is better".
func (d Direction) String() string {
	if d == HigherIsBetter {
		return "higher is better"
	}
	return "lower is better"
}

// Word is "higher" or "lower", as the JSON reports write it.
func (d Direction) Word() string {
	if d == HigherIsBetter {
		return "higher"
	}
	return "lower"
}

// Verdict is the outcome of a comparison.
type Verdict int

const (
	// Same means no significant difference ("~").
	Same Verdict = iota
	Better
	Worse
	// NotComparable: the values describe different operations (a latency
	// of policies that complete different numbers of them); the test of
	// the values, whatever it says, ranks nothing. Paired never returns
	// it: the caller who knows what the values are over decides.
	NotComparable
)

// String is "~", "better", "worse" or "not comparable".
func (v Verdict) String() string {
	switch v {
	case Better:
		return "better"
	case Worse:
		return "worse"
	case NotComparable:
		return "not comparable"
	}
	return "~"
}

// Difference compares a sample with a baseline sample, paired by index
// (in retrysim: by seed). Values are unrounded.
type Difference struct {
	// Pairs is the number of pairs where both values exist.
	Pairs int
	// DeltaMean is the mean over the pairs of (sample − baseline).
	DeltaMean float64
	// DeltaPercent is DeltaMean relative to the baseline's mean over the
	// same pairs; NaN when that mean is 0.
	DeltaPercent float64
	// Test is the two-sided Wilcoxon signed-rank test of the pairs.
	Test SignedRankTest
	// Verdict is Better or Worse when Test.P < Alpha, else Same.
	Verdict Verdict
	// Warnings are the reasons the comparison could not find a difference
	// even if there were one, such as too few pairs that differ.
	Warnings []string
}

// MinDifferingPairs is the fewest pairs that differ with which the exact
// two-sided signed-rank test can reach p < Alpha: its smallest p-value with
// n such pairs is 2/2^n, and 2/2^5 = 0.0625.
const MinDifferingPairs = 6

// Paired compares sample with base, pairing x[i] with y[i]; NaN marks a
// value that does not exist, and a pair with a NaN is left out. better says
// which direction of the difference is an improvement. It panics if the
// lengths differ.
func Paired(base, sample []float64, better Direction) Difference {
	if len(base) != len(sample) {
		panic("stats.Paired: samples of different lengths")
	}
	var xs, ys []float64
	for i, x := range base {
		if y := sample[i]; !math.IsNaN(x) && !math.IsNaN(y) {
			xs = append(xs, x)
			ys = append(ys, y)
		}
	}
	d := Difference{Pairs: len(xs), DeltaPercent: math.NaN(), Test: SignedRankTest{P: 1}}
	if len(xs) == 0 {
		d.Warnings = append(d.Warnings, "no pairs: the values exist together on no seed")
		return d
	}
	var sumX, sumD float64
	for i := range xs {
		sumX += xs[i]
		sumD += ys[i] - xs[i]
	}
	n := float64(len(xs))
	d.DeltaMean = sumD / n
	if meanX := sumX / n; meanX != 0 {
		d.DeltaPercent = 100 * d.DeltaMean / meanX
	}
	d.Test = SignedRank(xs, ys)
	if t := d.Test.N; t > 0 && t < MinDifferingPairs {
		d.Warnings = append(d.Warnings, fmt.Sprintf("only %d of %d pairs differ: need at least %d for significance at α = %.2f", t, d.Pairs, MinDifferingPairs, Alpha))
	}
	if d.Test.P < Alpha {
		higher := d.Test.WPlus > d.Test.WMinus
		if higher == (better == HigherIsBetter) {
			d.Verdict = Better
		} else {
			d.Verdict = Worse
		}
	}
	return d
}

// Warnings of a Summary: why its spread says less than it seems to.
func (s Summary) Warnings() []string {
	if s.N == 1 {
		return []string{"one value: no confidence interval"}
	}
	return nil
}

// MarshalText writes the verdict as String does, for JSON.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (v *Verdict) UnmarshalText(b []byte) error {
	for _, x := range []Verdict{Same, Better, Worse, NotComparable} {
		if x.String() == string(b) {
			*v = x
			return nil
		}
	}
	return fmt.Errorf("unknown verdict %q", b)
}

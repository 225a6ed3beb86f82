package sim

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDistributionRules(t *testing.T) {
	for _, tt := range []struct {
		name string
		d    Distribution
		// every draw lies in [lo, hi]
		lo, hi time.Duration
		// the mean of many draws is mean ± tol
		mean, tol time.Duration
	}{
		{"fixed", Fixed(3 * ms), 3 * ms, 3 * ms, 3 * ms, 0},
		{"uniform", Uniform{Min: 10 * ms, Max: 20 * ms}, 10 * ms, 20*ms - 1, 15 * ms, 100 * time.Microsecond},
		{"uniform empty", Uniform{Min: 7 * ms, Max: 7 * ms}, 7 * ms, 7 * ms, 7 * ms, 0},
		{"exponential", Exponential{Mean: 100 * ms}, 0, MaxSample, 100 * ms, 2 * ms},
		{"exponential 0", Exponential{}, 0, 0, 0, 0},
		{"lognormal", LogNormal{Median: 100 * ms, P99: 1000 * ms}, 0, MaxSample, LogNormal{Median: 100 * ms, P99: 1000 * ms}.Mean(), 6 * ms},
		{"lognormal degenerate", LogNormal{Median: 5 * ms, P99: 5 * ms}, 5 * ms, 5 * ms, 5 * ms, 0},
		{"lognormal capped", LogNormal{Median: 900 * time.Hour, P99: 100_000 * time.Hour}, 0, MaxSample, 0, -1},
		{"folded normal", FoldedNormal{Mean: 10 * ms, StdDev: 2 * ms}, 0, MaxSample, 10 * ms, 30 * time.Microsecond},
		// Folded at 0: E|N(0, σ)| = σ·√(2/π) ≈ 0.7979σ.
		{"folded normal at 0", FoldedNormal{StdDev: 10 * ms}, 0, MaxSample, 7979 * time.Microsecond, 60 * time.Microsecond},
		{"folded normal degenerate", FoldedNormal{Mean: 4 * ms}, 4 * ms, 4 * ms, 4 * ms, 0},
	} {
		rng := rand.New(rand.NewPCG(7, 8))
		const n = 100_000
		var sum float64
		for range n {
			x := tt.d.Sample(rng)
			if x < tt.lo || x > tt.hi {
				t.Fatalf("%s: draw %v outside [%v, %v]", tt.name, x, tt.lo, tt.hi)
			}
			sum += float64(x)
		}
		if tt.tol < 0 {
			continue
		}
		if mean := time.Duration(sum / n); mean < tt.mean-tt.tol || mean > tt.mean+tt.tol {
			t.Errorf("%s: mean of %d draws %v, want %v ± %v", tt.name, n, mean, tt.mean, tt.tol)
		}
	}
}

// A lognormal given by median and p99 has them: half the draws below the
// median, 1% above p99 (within sampling error).
func TestLogNormalQuantiles(t *testing.T) {
	d := LogNormal{Median: 200 * ms, P99: 3 * sec}
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 200_000
	below, above := 0, 0
	for range n {
		x := d.Sample(rng)
		if x < d.Median {
			below++
		}
		if x > d.P99 {
			above++
		}
	}
	if f := float64(below) / n; f < 0.495 || f > 0.505 {
		t.Errorf("share below the median %.4f, want 0.5", f)
	}
	if f := float64(above) / n; f < 0.009 || f > 0.011 {
		t.Errorf("share above p99 %.4f, want 0.01", f)
	}
}

// Draws are pinned: they depend only on the rng's stream, and the portable
// exp and log make them the same on every machine. A change here changes
// every run that uses these distributions.
func TestDistributionDrawsPinned(t *testing.T) {
	for _, tt := range []struct {
		d    Distribution
		want []time.Duration
	}{
		{Exponential{Mean: sec}, []time.Duration{1128419110, 618756509, 710389778, 561755376}},
		{LogNormal{Median: sec, P99: 10 * sec}, []time.Duration{7037701357, 1397342876, 3479211692, 2775500700}},
		{Uniform{Min: sec, Max: 2 * sec}, []time.Duration{1769373269, 1616436223, 1784428001, 1796596578}},
		{FoldedNormal{Mean: 10 * ms, StdDev: 2 * ms}, []time.Duration{13942837, 10676050, 12519345, 12062732}},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		var got []time.Duration
		for range len(tt.want) {
			got = append(got, tt.d.Sample(rng))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%T: draws %d, want %d", tt.d, got, tt.want)
		}
	}
}

// Exponential by hand: a draw is Mean·(−ln(1−U)) for U = rng.Float64().
func TestExponentialByHand(t *testing.T) {
	u := rand.New(rand.NewPCG(3, 4)).Float64()
	got := Exponential{Mean: sec}.Sample(rand.New(rand.NewPCG(3, 4)))
	want := time.Duration(-portableLog(1-u) * float64(sec))
	if got != want {
		t.Fatalf("draw %v, want %v (U = %v)", got, want, u)
	}
}

func TestDistributionValidation(t *testing.T) {
	for _, tt := range []struct {
		d    Distribution
		want string // "" for valid
	}{
		{Fixed(0), ""},
		{Fixed(-1), "negative"},
		{Exponential{Mean: -1}, "negative"},
		{Exponential{}, ""},
		{LogNormal{Median: 0, P99: sec}, "median"},
		{LogNormal{Median: sec, P99: ms}, "below its median"},
		{LogNormal{Median: sec, P99: sec}, ""},
		{Uniform{Min: -1, Max: 0}, "negative"},
		{Uniform{Min: 2, Max: 1}, "below its min"},
		{Uniform{Min: 1, Max: 1}, ""},
		{FoldedNormal{Mean: -1, StdDev: 1}, "mean"},
		{FoldedNormal{Mean: 1, StdDev: -1}, "standard deviation"},
		{FoldedNormal{}, ""},
		{nil, "no distribution"},
	} {
		err := validateDistribution("x", tt.d)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%#v: %v", tt.d, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%#v: error %v, want one containing %q", tt.d, err, tt.want)
		}
	}
}

// A folded normal draw by hand: |Mean + StdDev·Z| with Z the standard
// normal LogNormal draws; a draw whose normal is negative is folded.
func TestFoldedNormalByHand(t *testing.T) {
	d := FoldedNormal{Mean: 1 * ms, StdDev: 10 * ms}
	folded := 0
	for seed := range uint64(50) {
		z := standardNormal(rand.New(rand.NewPCG(seed, 9)))
		got := d.Sample(rand.New(rand.NewPCG(seed, 9)))
		x := float64(ms) + float64(10*ms)*z
		if x < 0 {
			x, folded = -x, folded+1
		}
		if want := time.Duration(x); got != want {
			t.Fatalf("seed %d: draw %v, want %v (Z = %v)", seed, got, want, z)
		}
	}
	if folded == 0 {
		t.Fatal("no draw was folded: the test does not test folding")
	}
	if m, ok := MeanOf(d); !ok || m < 8*ms || m > 8200*time.Microsecond {
		// E|N(1, 10)| = 10·√(2/π)·e^(−1/200) + 1·erf(0.1/√2) ≈ 8.019 ms.
		t.Fatalf("MeanOf = %v, %v; want about 8.02ms", m, ok)
	}
}

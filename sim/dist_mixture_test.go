package sim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// A mixture of 99% exponential(1 ms) and 1% fixed 100 ms: the share of
// draws from the slow part is binomial (within 5 standard deviations of
// 1%), and the sample mean is within 5 standard errors of the mixture's
// mean, 0.99·1 ms + 0.01·100 ms = 1.99 ms.
func TestMixtureDraws(t *testing.T) {
	m := &Mixture{Parts: []MixturePart{{P: 0.99, Draw: Exponential{Mean: time.Millisecond}}, {P: 0.01, Draw: Fixed(100 * time.Millisecond)}}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := m.MeanDraw(); got != 1990*time.Microsecond {
		t.Errorf("mean %v, want 1.99ms", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200_000
	slow, sum, sumSq := 0, 0.0, 0.0
	run := forRun(m)
	for range n {
		d := run.Sample(rng)
		if d == 100*time.Millisecond {
			slow++
		}
		x := float64(d)
		sum, sumSq = sum+x, sumSq+x*x
	}
	if sd := math.Sqrt(n * 0.01 * 0.99); math.Abs(float64(slow)-n*0.01) > 5*sd {
		t.Errorf("%d slow draws of %d, want %.0f ± %.0f", slow, n, n*0.01, 5*sd)
	}
	mean := sum / n
	se := math.Sqrt((sumSq/n - mean*mean) / n)
	if math.Abs(mean-float64(m.MeanDraw())) > 5*se {
		t.Errorf("sample mean %v, want %v ± %v", time.Duration(mean), m.MeanDraw(), time.Duration(5*se))
	}
}

func TestMixtureValidate(t *testing.T) {
	for _, m := range []*Mixture{
		{},
		{Parts: []MixturePart{{P: 0.5, Draw: Fixed(0)}}},
		{Parts: []MixturePart{{P: 1.5, Draw: Fixed(0)}, {P: -0.5, Draw: Fixed(0)}}},
		{Parts: []MixturePart{{P: 1}}},
		{Parts: []MixturePart{{P: 1, Draw: Exponential{Mean: -1}}}},
	} {
		if err := m.Validate(); err == nil {
			t.Errorf("%+v accepted", m)
		}
	}
}

package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Mixture is a Distribution that draws from one of its parts, chosen with
// the parts' probabilities: 99 % exponential(1 ms) and 1 % exponential(100
// ms) is a fast service with a slow tail. A draw takes one rng.Float64()
// to choose the part (the first part whose cumulative probability exceeds
// it; the last part for the rounding left over), then the part's own
// draws. Use it by pointer: a *Mixture compares by identity.
type Mixture struct {
	Parts []MixturePart
}

// MixturePart is one part of a Mixture.
type MixturePart struct {
	P    float64 // in [0, 1]; the parts' P add up to 1
	Draw Distribution
}

// MaxMixtureParts bounds a Mixture's parts.
const MaxMixtureParts = 64

// Sample draws a part, then from it.
func (m *Mixture) Sample(rng *rand.Rand) time.Duration {
	u := rng.Float64()
	acc := 0.0
	for _, p := range m.Parts[:len(m.Parts)-1] {
		if acc += p.P; u < acc {
			return p.Draw.Sample(rng)
		}
	}
	return m.Parts[len(m.Parts)-1].Draw.Sample(rng)
}

// Validate reports parts that are missing, too many, invalid, or whose
// probabilities do not add up to 1 (within 1e-9).
func (m *Mixture) Validate() error {
	if len(m.Parts) == 0 || len(m.Parts) > MaxMixtureParts {
		return fmt.Errorf("mixture needs 1 to %d parts (got %d)", MaxMixtureParts, len(m.Parts))
	}
	sum := 0.0
	for i, p := range m.Parts {
		if !(p.P >= 0 && p.P <= 1) {
			return fmt.Errorf("mixture part %d: probability %v is not in [0, 1]", i, p.P)
		}
		sum += p.P
		if err := validateDistribution(fmt.Sprintf("mixture part %d", i), p.Draw); err != nil {
			return err
		}
	}
	if math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("mixture probabilities add up to %v, not 1", sum)
	}
	return nil
}

// MeanDraw is the parts' means weighted by their probabilities (a part
// whose mean is not known counts 0).
func (m *Mixture) MeanDraw() time.Duration {
	mean := 0.0
	for _, p := range m.Parts {
		d, _ := MeanOf(p.Draw)
		mean += p.P * float64(d)
	}
	return time.Duration(mean)
}

// forRun returns the mixture with its parts ready for a run.
func (m *Mixture) forRun() *Mixture {
	out := &Mixture{Parts: make([]MixturePart, len(m.Parts))}
	for i, p := range m.Parts {
		out.Parts[i] = MixturePart{P: p.P, Draw: forRun(p.Draw)}
	}
	return out
}

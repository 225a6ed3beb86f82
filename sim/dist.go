package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// MaxSample bounds every draw of the distributions in this file: a draw
// that would be longer is MaxSample (1000 h, the longest duration a
// scenario may give).
const MaxSample = 1000 * time.Hour

// z99 is the standard normal distribution's 99th percentile.
const z99 = 2.3263478740408408

// Validate reports a negative duration.
func (f Fixed) Validate() error {
	if f < 0 {
		return fmt.Errorf("fixed duration %v is negative", time.Duration(f))
	}
	return nil
}

// Mean returns the fixed duration.
func (f Fixed) Mean() time.Duration { return time.Duration(f) }

// MeanDraw returns the fixed duration.
func (f Fixed) MeanDraw() time.Duration { return time.Duration(f) }

// Exponential is a Distribution with the given mean: memoryless, like the
// gaps between independent arrivals. Mean 0 always gives 0.
type Exponential struct {
	Mean time.Duration
}

// Sample draws one value: Mean·(−ln(1−U)) with U = rng.Float64() (one
// draw), truncated to whole nanoseconds and at most MaxSample.
func (e Exponential) Sample(rng *rand.Rand) time.Duration {
	x := -portableLog(1 - rng.Float64())
	return clampSample(float64(x * float64(e.Mean)))
}

// Validate reports a negative mean.
func (e Exponential) Validate() error {
	if e.Mean < 0 {
		return fmt.Errorf("exponential mean %v is negative", e.Mean)
	}
	return nil
}

// MeanDraw returns the mean.
func (e Exponential) MeanDraw() time.Duration { return e.Mean }

// LogNormal is a Distribution whose logarithm is normal, given by its
// median and its 99th percentile: the long right tail of real response
// times. With σ = ln(P99/Median)/2.3263 (the normal's 99th percentile), a
// draw is Median·e^(σ·Z) for a standard normal Z. P99 == Median gives the
// median every time.
type LogNormal struct {
	Median time.Duration
	P99    time.Duration
}

// Sample draws one value. Z comes from Marsaglia's polar method: pairs
// (u, v) = (2·rng.Float64()−1, 2·rng.Float64()−1) are drawn until
// 0 < s = u²+v² < 1 (on average 1.27 pairs), then Z = u·√(−2·ln s / s); the
// pair's second normal is not used. The result is truncated to whole
// nanoseconds and at most MaxSample.
func (l LogNormal) Sample(rng *rand.Rand) time.Duration {
	if l.P99 <= l.Median {
		return l.Median
	}
	sigma := l.sigma()
	return clampSample(float64(float64(l.Median) * portableExp(float64(sigma*standardNormal(rng)))))
}

// standardNormal draws a standard normal value (see LogNormal.Sample).
func standardNormal(rng *rand.Rand) float64 {
	for {
		u := 2*rng.Float64() - 1
		v := 2*rng.Float64() - 1
		s := float64(u*u) + float64(v*v)
		if s > 0 && s < 1 {
			return float64(u * math.Sqrt(-2*portableLog(s)/s))
		}
	}
}

// Validate reports a median that is not positive or a P99 below it.
func (l LogNormal) Validate() error {
	switch {
	case l.Median <= 0:
		return fmt.Errorf("lognormal median %v must be > 0", l.Median)
	case l.P99 < l.Median:
		return fmt.Errorf("lognormal p99 %v is below its median %v", l.P99, l.Median)
	}
	return nil
}

// Mean returns the distribution's mean, Median·e^(σ²/2) (before the
// MaxSample bound), truncated to nanoseconds.
func (l LogNormal) Mean() time.Duration {
	if l.P99 <= l.Median {
		return l.Median
	}
	sigma := l.sigma()
	return clampSample(float64(float64(l.Median) * portableExp(float64(sigma*sigma)/2)))
}

// MeanDraw returns Mean.
func (l LogNormal) MeanDraw() time.Duration { return l.Mean() }

// sigma is the standard deviation of the logarithm: ln(P99/Median)/z99.
func (l LogNormal) sigma() float64 {
	return portableLog(float64(l.P99)/float64(l.Median)) / z99
}

// FoldedNormal is a Distribution whose draws are the absolute value of a
// normal draw: |N(Mean, StdDev)|, as network delays are modelled in the AWS
// Architecture Blog's backoff study (|N(10 ms, 2 ms)|). With Mean several
// StdDev above 0, folding almost never changes a draw; it only keeps draws
// from being negative. StdDev 0 gives Mean every time.
type FoldedNormal struct {
	Mean, StdDev time.Duration
}

// Sample draws |Mean + StdDev·Z| for a standard normal Z from Marsaglia's
// polar method (as LogNormal.Sample draws it), truncated to whole
// nanoseconds and at most MaxSample; Mean without a draw when StdDev is 0.
func (f FoldedNormal) Sample(rng *rand.Rand) time.Duration {
	if f.StdDev <= 0 {
		return f.Mean
	}
	return clampSample(math.Abs(float64(f.Mean) + float64(float64(f.StdDev)*standardNormal(rng))))
}

// Validate reports a negative mean or standard deviation.
func (f FoldedNormal) Validate() error {
	switch {
	case f.Mean < 0:
		return fmt.Errorf("normal mean %v is negative", f.Mean)
	case f.StdDev < 0:
		return fmt.Errorf("normal standard deviation %v is negative", f.StdDev)
	}
	return nil
}

// MeanDraw returns the mean of the draws, σ·√(2/π)·e^(−μ²/2σ²) + μ·erf(μ/(σ·√2))
// (before the MaxSample bound), truncated to nanoseconds: a little above
// Mean when StdDev is large beside it. It uses math.Erf, so unlike a draw it
// may differ in the last nanosecond between machines; nothing a run draws
// depends on it.
func (f FoldedNormal) MeanDraw() time.Duration {
	if f.StdDev <= 0 {
		return f.Mean
	}
	mu, sigma := float64(f.Mean), float64(f.StdDev)
	x := mu / sigma
	return clampSample(sigma*math.Sqrt(2/math.Pi)*portableExp(-x*x/2) + mu*math.Erf(x/math.Sqrt2))
}

// Uniform is a Distribution uniform over [Min, Max) in whole nanoseconds;
// Max == Min always gives Min.
type Uniform struct {
	Min, Max time.Duration
}

// Sample returns Min + rng.Int64N(Max−Min) (one draw), or Min when
// Max == Min (no draw).
func (u Uniform) Sample(rng *rand.Rand) time.Duration {
	if u.Max <= u.Min {
		return u.Min
	}
	return u.Min + time.Duration(rng.Int64N(int64(u.Max-u.Min)))
}

// Validate reports a negative Min or a Max below Min.
func (u Uniform) Validate() error {
	switch {
	case u.Min < 0:
		return fmt.Errorf("uniform min %v is negative", u.Min)
	case u.Max < u.Min:
		return fmt.Errorf("uniform max %v is below its min %v", u.Max, u.Min)
	}
	return nil
}

// Mean returns (Min+Max)/2, less half a nanosecond (the draws are whole
// nanoseconds below Max), truncated.
func (u Uniform) Mean() time.Duration {
	if u.Max <= u.Min {
		return u.Min
	}
	return u.Min + (u.Max-u.Min-1)/2
}

// MeanDraw returns Mean.
func (u Uniform) MeanDraw() time.Duration { return u.Mean() }

// clampSample truncates x (nanoseconds, >= 0) to a duration of at most
// MaxSample.
func clampSample(x float64) time.Duration {
	if !(x < float64(MaxSample)) { // also +Inf and NaN
		return MaxSample
	}
	if x < 0 {
		return 0
	}
	return time.Duration(x)
}

// validateDistribution reports a missing distribution, or the problem its
// Validate method (if it has one) finds, prefixed with what it is for.
func validateDistribution(what string, d Distribution) error {
	if d == nil {
		return fmt.Errorf("%s: no distribution", what)
	}
	if v, ok := d.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// forRun returns d ready for the many draws of a run: a LogNormal with its
// sigma computed once (the draws are bit for bit the same); other
// distributions as they are.
func forRun(d Distribution) Distribution {
	if l, ok := d.(LogNormal); ok && l.P99 > l.Median {
		return logNormalRun{median: l.Median, sigma: l.sigma()}
	}
	if m, ok := d.(*Mixture); ok {
		return m.forRun()
	}
	return d
}

// logNormalRun is a LogNormal whose sigma is known (see forRun).
type logNormalRun struct {
	median time.Duration
	sigma  float64
}

// Sample draws as LogNormal.Sample does.
func (l logNormalRun) Sample(rng *rand.Rand) time.Duration {
	return clampSample(float64(float64(l.median) * portableExp(float64(l.sigma*standardNormal(rng)))))
}

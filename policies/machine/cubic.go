package machine

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// CubicRateConfig sets the constants of a CubicRate limiter. The zero
// value means the defaults, which are those of the AWS SDKs' "adaptive"
// retry mode (AWS SDK for Go v2, aws/retry; botocore's adaptive mode): the
// published constants, reimplemented here.
type CubicRateConfig struct {
	// Beta is the multiplicative decrease on a throttled response: the
	// send rate falls to Beta times the rate in use. Default 0.7.
	Beta float64
	// Scale is the CUBIC scale constant of the recovery curve. Default 0.4.
	Scale float64
	// Smoothing weighs the newest measurement of the send rate against the
	// running one. Default 0.8.
	Smoothing float64
	// MinFillRate is the lowest send rate in tokens (requests) per second.
	// Default 0.5.
	MinFillRate float64
	// ThrottleOnCapacity also treats Capacity outcomes (529, 503) as
	// throttling; by default only RetryAfter (429) outcomes are.
	ThrottleOnCapacity bool
}

// WithDefaults returns c with every unset field at the value the control
// runs with (what a report shows as its effective settings).
func (c CubicRateConfig) WithDefaults() CubicRateConfig {
	if c.Beta <= 0 || c.Beta >= 1 {
		c.Beta = 0.7
	}
	if c.Scale <= 0 {
		c.Scale = 0.4
	}
	if c.Smoothing <= 0 || c.Smoothing > 1 {
		c.Smoothing = 0.8
	}
	if c.MinFillRate <= 0 {
		c.MinFillRate = 0.5
	}
	return c
}

// Validate reports constants outside their ranges (0 takes the default).
func (c CubicRateConfig) Validate() error {
	bad := func(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }
	if bad(c.Beta) || c.Beta >= 1 || bad(c.Scale) || bad(c.Smoothing) || c.Smoothing > 1 || bad(c.MinFillRate) {
		return fmt.Errorf("cubic rate needs beta in [0, 1), smoothing in [0, 1], scale and minimum fill rate >= 0 (got %+v)", c)
	}
	return nil
}

// String describes the configuration with its defaults filled in.
func (c CubicRateConfig) String() string {
	c = c.WithDefaults()
	return fmt.Sprintf("cubic rate (beta %g, scale %g, smoothing %g, min %g/s)", c.Beta, c.Scale, c.Smoothing, c.MinFillRate)
}

// CubicRate is a client-side send-rate limiter in the style of the AWS SDKs'
// adaptive retry mode. It does nothing until the first throttled response.
// From then on every attempt (first or retry) takes a token from a bucket
// filled at the current send rate, waiting for one if the bucket is empty.
// A throttled response cuts the rate to Beta times the rate in use; each
// other response lets it grow back along a cubic curve centred on the rate
// at the last throttle:
//
//	rate(t) = Scale·(t − T − K)³ + Wmax,   K = ∛(Wmax·(1 − Beta)/Scale)
//
// where T is the time of the last throttle and Wmax the rate in use then.
// The new rate is never more than twice the measured send rate (smoothed
// over half-second buckets), nor less than MinFillRate. Safe for concurrent
// use.
type CubicRate struct {
	cfg CubicRateConfig

	mu       sync.Mutex
	origin   time.Time // time 0 of the seconds below
	started  bool
	enabled  bool    // a throttle was seen: tokens are required
	fillRate float64 // tokens per second
	capacity float64 // bucket size, in tokens
	tokens   float64 // may go negative: starts booked ahead
	refilled float64 // when tokens was last brought up to date
	measured float64 // smoothed send rate, per second
	bucket   float64 // start of the current half-second measuring bucket
	count    float64 // responses in the current bucket
	maxRate  float64 // Wmax: the rate in use at the last throttle
	throttle float64 // T: the time of the last throttle
	window   float64 // K
}

// NewCubicRate returns a limiter with cfg (zero fields: defaults). It
// refuses constants that Validate reports: a NaN or infinite one would build
// a limiter that never limits.
func NewCubicRate(cfg CubicRateConfig) (*CubicRate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &CubicRate{cfg: cfg.WithDefaults()}, nil
}

// seconds returns now in seconds since the limiter's first use.
func (l *CubicRate) seconds(now time.Time) float64 {
	if !l.started {
		l.origin, l.started = now, true
	}
	return now.Sub(l.origin).Seconds()
}

// refill brings the bucket up to time t.
func (l *CubicRate) refill(t float64) {
	if t > l.refilled {
		l.tokens = min(l.capacity, l.tokens+float64((t-l.refilled)*l.fillRate))
	}
	l.refilled = max(l.refilled, t)
}

// Admit lets every attempt through until the first throttle; then it books
// the attempt's token and grants the attempt at the time the token is there.
// A token later than Ask.Latest stops the operation (StopDeadline).
func (l *CubicRate) Admit(now time.Time, a Ask) Admission {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.seconds(now)
	if !l.enabled {
		return Admission{Kind: AdmitPass}
	}
	l.refill(t)
	if l.tokens >= 1 {
		l.tokens--
		return Admission{Kind: AdmitGrant, At: now}
	}
	// Whole nanoseconds, rounded up, so the token is there when the wait ends.
	wait := time.Duration(math.Ceil((1 - l.tokens) / l.fillRate * 1e9))
	at := now.Add(wait)
	if !startsBy(at, a.Latest) {
		return Admission{Kind: AdmitDeny, Reason: StopDeadline, Cause: ErrTooLate}
	}
	l.tokens--
	return Admission{Kind: AdmitGrant, At: at}
}

// AdmitCopy takes a token for a hedge if one is there now, or lets it go
// before the first throttle (CopyAdmitter); it never books one ahead.
func (l *CubicRate) AdmitCopy(now time.Time, _ Ask) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.seconds(now)
	if !l.enabled {
		return true
	}
	l.refill(t)
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

// Observe measures the send rate and adapts the fill rate to the outcome.
func (l *CubicRate) Observe(now time.Time, _ int, out Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.seconds(now)
	l.measure(t)
	var rate float64
	if out.Class == RetryAfter || l.cfg.ThrottleOnCapacity && out.Class == Capacity {
		inUse := l.measured
		if l.enabled {
			inUse = min(l.measured, l.fillRate)
		}
		l.maxRate, l.throttle, l.enabled = inUse, t, true
		l.window = math.Cbrt(float64(l.maxRate*(1-l.cfg.Beta)) / l.cfg.Scale)
		rate = float64(inUse * l.cfg.Beta)
	} else {
		d := t - l.throttle - l.window
		rate = float64(l.cfg.Scale*float64(float64(d*d)*d)) + l.maxRate
	}
	l.setRate(t, min(rate, float64(2*l.measured)))
}

// measure counts a response at t and updates the smoothed send rate at each
// new half-second bucket.
func (l *CubicRate) measure(t float64) {
	b := math.Floor(float64(t*2)) / 2
	l.count++
	if b > l.bucket {
		current := l.count / (b - l.bucket)
		l.measured = float64(current*l.cfg.Smoothing) + float64(l.measured*(1-l.cfg.Smoothing))
		l.count, l.bucket = 0, b
	}
}

// setRate changes the fill rate (and the bucket's size) from time t on.
func (l *CubicRate) setRate(t, rate float64) {
	l.refill(t)
	l.fillRate = max(rate, l.cfg.MinFillRate)
	l.capacity = max(rate, 1)
	l.tokens = min(l.tokens, l.capacity)
}

// Release does nothing: a booked token that goes unused is not given back.
func (l *CubicRate) Release(time.Time, Waiter, bool) {}

// Rate returns the current fill rate (tokens per second) and whether the
// limiter is enforcing it yet.
func (l *CubicRate) Rate() (perSecond float64, enabled bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fillRate, l.enabled
}

// NewCoordinator returns a fresh CubicRate: a CubicRateConfig is its Spec.
func (c CubicRateConfig) NewCoordinator() (Coordinator, error) { return NewCubicRate(c) }

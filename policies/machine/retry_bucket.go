package machine

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// The two retry controls of Marc Brooker's "Fixing retries with token
// buckets and circuit breakers" (2022), as his simulation runs them: a
// token bucket that every call fills a little, and a breaker that stops
// only retries.

// ErrRetryBucket is the cause of a retry a RetryBucket refused.
var ErrRetryBucket = errors.New("retry bucket: not enough tokens for a retry")

// ErrRetryBreaker is the cause of a retry a RetryBreaker refused.
var ErrRetryBreaker = errors.New("retry breaker: too many failures for a retry")

// RetryBucketConfig configures a RetryBucket. Zero fields take Brooker's
// values: capacity 5, deposit 0.1, threshold 1, cost 1.
type RetryBucketConfig struct {
	// Capacity is the most tokens the bucket holds; it starts full.
	Capacity float64
	// Deposit is what each call (an operation's first attempt) adds.
	Deposit float64
	// Threshold: a retry may start only while the bucket holds more.
	Threshold float64
	// Cost is what a retry takes.
	Cost float64
}

// WithDefaults returns c with Brooker's values in its zero fields.
func (c RetryBucketConfig) WithDefaults() RetryBucketConfig {
	if c.Capacity == 0 {
		c.Capacity = 5
	}
	if c.Deposit == 0 {
		c.Deposit = 0.1
	}
	if c.Threshold == 0 {
		c.Threshold = 1
	}
	if c.Cost == 0 {
		c.Cost = 1
	}
	return c
}

// Validate reports a negative or non-finite field.
func (c RetryBucketConfig) Validate() error {
	for _, v := range []float64{c.Capacity, c.Deposit, c.Threshold, c.Cost} {
		if !(v >= 0 && v <= math.MaxFloat32) {
			return fmt.Errorf("retry bucket needs capacity, deposit, threshold and cost >= 0 and finite (got %+v)", c)
		}
	}
	return nil
}

// NewCoordinator returns a fresh RetryBucket.
func (c RetryBucketConfig) NewCoordinator() (Coordinator, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.WithDefaults()
	return &RetryBucket{cfg: c, tokens: c.Capacity}, nil
}

// Stops reports that a retry bucket stops operations with StopBudget.
func (RetryBucketConfig) Stops() StopReason { return StopBudget }

// RetryBucket is Brooker's "adaptive" retry token bucket: it starts full;
// every call adds Deposit (up to Capacity) when its first attempt is
// sent; a retry may start only while the bucket holds more than
// Threshold, and takes Cost, given back if the retry is not sent after all
// (a later coordinator stopped it). First attempts always pass. Below the
// threshold the operation stops (StopBudget).
type RetryBucket struct {
	mu     sync.Mutex
	cfg    RetryBucketConfig
	tokens float64
}

// Tokens returns the tokens the bucket holds now.
func (b *RetryBucket) Tokens() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens
}

// Admit lets a first attempt pass; a retry takes its cost (AdmitGrant) or
// stops the operation.
func (b *RetryBucket) Admit(now time.Time, a Ask) Admission {
	if !a.Retry {
		return Admission{Kind: AdmitPass}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens <= b.cfg.Threshold {
		return Admission{Kind: AdmitDeny, Reason: StopBudget, Cause: ErrRetryBucket}
	}
	b.tokens -= b.cfg.Cost
	return Admission{Kind: AdmitGrant, At: now}
}

// Observe adds the deposit of a call whose first attempt was sent.
func (b *RetryBucket) Observe(_ time.Time, attempt int, _ Outcome) {
	if attempt == 1 {
		b.mu.Lock()
		b.tokens = min(b.tokens+b.cfg.Deposit, b.cfg.Capacity)
		b.mu.Unlock()
	}
}

// Settle gives back the cost of a retry that was not sent.
func (b *RetryBucket) Settle(_ time.Time, s Settlement) {
	if !s.Sent {
		b.mu.Lock()
		b.tokens = min(b.tokens+b.cfg.Cost, b.cfg.Capacity)
		b.mu.Unlock()
	}
}

// Release does nothing: the Op calls Settle instead.
func (b *RetryBucket) Release(time.Time, Waiter, bool) {}

// RetryBreakerConfig configures a RetryBreaker. MaxFailureRatio 0 means
// Brooker's 0.1.
type RetryBreakerConfig struct {
	MaxFailureRatio float64
}

// WithDefaults returns c with Brooker's value if it has none.
func (c RetryBreakerConfig) WithDefaults() RetryBreakerConfig {
	if c.MaxFailureRatio == 0 {
		c.MaxFailureRatio = 0.1
	}
	return c
}

// Validate reports a ratio outside [0, 1].
func (c RetryBreakerConfig) Validate() error {
	if !(c.MaxFailureRatio >= 0 && c.MaxFailureRatio <= 1) {
		return fmt.Errorf("retry breaker needs a failure ratio in [0, 1] (got %v)", c.MaxFailureRatio)
	}
	return nil
}

// NewCoordinator returns a fresh RetryBreaker.
func (c RetryBreakerConfig) NewCoordinator() (Coordinator, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &RetryBreaker{cfg: c.WithDefaults()}, nil
}

// Stops reports that a retry breaker stops operations with
// StopCircuitOpen.
func (RetryBreakerConfig) Stops() StopReason { return StopCircuitOpen }

// RetryBreaker is Brooker's breaker that stops only retries: it counts
// every attempt's outcome since it was made (no window), and lets a retry
// start only while failures are at most MaxFailureRatio of the outcomes
// (with none yet, it lets it). First attempts always pass. Otherwise the
// operation stops (StopCircuitOpen).
type RetryBreaker struct {
	mu              sync.Mutex
	cfg             RetryBreakerConfig
	calls, failures int64
}

// Admit lets a first attempt pass, and a retry while the failures are
// few enough.
func (b *RetryBreaker) Admit(_ time.Time, a Ask) Admission {
	if !a.Retry {
		return Admission{Kind: AdmitPass}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.calls > 0 && float64(b.failures) > b.cfg.MaxFailureRatio*float64(b.calls) {
		return Admission{Kind: AdmitDeny, Reason: StopCircuitOpen, Cause: ErrRetryBreaker}
	}
	return Admission{Kind: AdmitPass}
}

// Observe counts an attempt's outcome.
func (b *RetryBreaker) Observe(_ time.Time, _ int, out Outcome) {
	b.mu.Lock()
	b.calls++
	if out.Class != Success {
		b.failures++
	}
	b.mu.Unlock()
}

// Release does nothing: the breaker holds nothing for an attempt.
func (b *RetryBreaker) Release(time.Time, Waiter, bool) {}

package kinds

import (
	"fmt"
	"math"
	"strconv"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/schema"
)

// Marc Brooker's two retry controls (machine.RetryBucket and
// machine.RetryBreaker), each a policy field whose mapping is its config.
func registerBrookerControls() {
	registerControl("retry_bucket", "a retry token bucket", "retry_bucket: {capacity, deposit, threshold, cost} is Brooker's adaptive retry bucket: every call adds a deposit, a retry needs more than the threshold (budget)",
		false,
		func(m *schema.Mapping) policies.RetryBucketConfig {
			// 0 in policies.RetryBucketConfig means Brooker's value, so an
			// explicit 0 would silently become the default: each field
			// says why it is refused instead.
			return policies.RetryBucketConfig{
				Capacity:  positive(m, "capacity", math.MaxFloat32, "a bucket of 0 tokens allows no retry: for none, set max_attempts: 1"),
				Deposit:   positive(m, "deposit", math.MaxFloat32, "a bucket that calls never refill is not one retrysim runs; leave deposit out for Brooker's 0.1"),
				Threshold: positive(m, "threshold", math.MaxFloat32, "0 is not expressible here (it would read as Brooker's 1); for retries while the bucket holds any tokens, give a small threshold such as 0.001"),
				Cost:      positive(m, "cost", math.MaxFloat32, "retries that cost nothing never empty the bucket: leave retry_bucket out for no limit"),
			}
		},
		func(c policies.RetryBucketConfig) string {
			c = c.WithDefaults()
			return fmt.Sprintf("retry bucket of %g tokens (each call +%g; a retry needs more than %g and takes %g)", c.Capacity, c.Deposit, c.Threshold, c.Cost)
		})
	registerControl("retry_breaker", "a retry breaker", "retry_breaker: {max_failure_ratio} is Brooker's breaker for retries only: none while failures since the start exceed the ratio (circuit_open)",
		false,
		func(m *schema.Mapping) policies.RetryBreakerConfig {
			return policies.RetryBreakerConfig{MaxFailureRatio: positive(m, "max_failure_ratio", 1,
				"every retry follows a failure, so 0 would refuse them all (and 0 in the breaker's config means Brooker's 0.1): for no retries, set max_attempts: 1")}
		},
		func(c policies.RetryBreakerConfig) string {
			c = c.WithDefaults()
			return fmt.Sprintf("retry breaker (retries while failures are at most %g of attempts since the start)", c.MaxFailureRatio)
		})
	setScale("retry_breaker", scaleFree) // a ratio of failures to attempts
	setScale("retry_bucket", scaleSpec(func(c policies.RetryBucketConfig, f float64) (policies.RetryBucketConfig, error) {
		// Deposits and costs come with the calls; the bucket scales.
		c = c.WithDefaults()
		c.Capacity *= f
		c.Threshold *= f
		return c, nil
	}))
}

// positive reads an optional number in (0, hi]; an explicit 0 is an
// error that says why, since 0 in the policy's config means the default.
func positive(m *schema.Mapping, key string, hi float64, whyNotZero string) float64 {
	f := m.Number(key, 0, 0, hi)
	if v := m.Get(key); v != nil && f == 0 {
		if given, err := strconv.ParseFloat(v.Value, 64); err == nil && given == 0 {
			m.Errorf(key, "must be > 0: %s", whyNotZero)
		}
	}
	return f
}

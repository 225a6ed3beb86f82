package kinds

import (
	"fmt"
	"math"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/schema"
)

// Marc Brooker's two retry controls (policies.RetryBucket and
// policies.RetryBreaker), each a policy field whose mapping is its config.
func registerBrookerControls() {
	registerControl("retry_bucket", "a retry token bucket", "retry_bucket: {capacity, deposit, threshold, cost} is Brooker's adaptive retry bucket: every call adds a deposit, a retry needs more than the threshold (budget)",
		false,
		func(m *schema.Mapping) policies.RetryBucketConfig {
			n := func(k string) float64 { return m.Number(k, 0, 0, math.MaxFloat32) }
			return policies.RetryBucketConfig{Capacity: n("capacity"), Deposit: n("deposit"), Threshold: n("threshold"), Cost: n("cost")}
		},
		func(c policies.RetryBucketConfig) string {
			c = c.WithDefaults()
			return fmt.Sprintf("retry bucket of %g tokens (each call +%g; a retry needs more than %g and takes %g)", c.Capacity, c.Deposit, c.Threshold, c.Cost)
		})
	registerControl("retry_breaker", "a retry breaker", "retry_breaker: {max_failure_ratio} is Brooker's breaker for retries only: none while failures since the start exceed the ratio (circuit_open)",
		false,
		func(m *schema.Mapping) policies.RetryBreakerConfig {
			return policies.RetryBreakerConfig{MaxFailureRatio: m.Number("max_failure_ratio", 0, 0, 1)}
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

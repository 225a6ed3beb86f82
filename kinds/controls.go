package kinds

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The retry controls (docs/policies.md) as coordinator kinds: each is a
// mapping field of a policy whose fields are the control's config; an empty
// mapping ({}) takes every default.
func registerControls() {
	registerControl("breaker", "a circuit breaker", "breaker: {consecutive_failures, failure_ratio, min_requests, window, open_for, max_open_for, probes} opens after failures and rejects locally (circuit_open)",
		false,
		func(m *schema.Mapping) policies.BreakerConfig {
			return policies.BreakerConfig{
				ConsecutiveFailures: int(m.Integer("consecutive_failures", 0, 0, 1<<31-1)),
				FailureRatio:        m.Number("failure_ratio", 0, 0, 1),
				MinRequests:         int(m.Integer("min_requests", 0, 0, 1<<31-1)),
				Window:              m.Duration("window", 0),
				OpenFor:             m.Duration("open_for", 0),
				MaxOpenFor:          m.Duration("max_open_for", 0),
				Probes:              int(m.Integer("probes", 0, 0, 1<<31-1)),
			}
		},
		describeBreaker)
	setScale("breaker", scaleSpec(func(c policies.BreakerConfig, f float64) (policies.BreakerConfig, error) {
		// Runs and ratios of failures do not depend on the clients; the
		// requests a window needs do (at least 1).
		c = c.WithDefaults()
		c.MinRequests = max(1, int(math.Round(float64(c.MinRequests)*f)))
		return c, nil
	}))
	registerControl("adaptive_throttle", "adaptive throttling", "adaptive_throttle: {k, window} rejects locally with probability (requests − k·accepts)/(requests + 1) (throttled)",
		false,
		func(m *schema.Mapping) policies.AdaptiveThrottleConfig {
			return policies.AdaptiveThrottleConfig{K: m.Number("k", 0, 0, math.MaxFloat64), Window: m.Duration("window", 0)}
		},
		func(c policies.AdaptiveThrottleConfig) string {
			c = c.WithDefaults()
			return fmt.Sprintf("adaptive throttling (k %g over %v)", c.K, c.Window)
		})
	setScale("adaptive_throttle", scaleFree) // a ratio of requests to accepts
	registerControl("retry_throttling", "gRPC retry throttling", "retry_throttling: {max_tokens, token_ratio} is gRPC's retry throttling (budget)",
		false,
		func(m *schema.Mapping) policies.RetryThrottlingConfig {
			return policies.RetryThrottlingConfig{MaxTokens: int(m.Integer("max_tokens", 0, 0, 1000)), TokenRatio: m.Number("token_ratio", 0, 0, math.MaxFloat64)}
		},
		func(c policies.RetryThrottlingConfig) string {
			c = c.WithDefaults()
			return fmt.Sprintf("gRPC retry throttling (%d tokens, a failure −1, a success +%g; retries while above %g)", c.MaxTokens, c.TokenRatio, float64(c.MaxTokens)/2)
		})
	// The shared budgets: tokens come and go with the requests, so a bucket
	// scaled with the clients drains and fills in the same time.
	setScale("retry_throttling", scaleSpec(func(c policies.RetryThrottlingConfig, f float64) (policies.RetryThrottlingConfig, error) {
		c = c.WithDefaults()
		var err error
		c.MaxTokens, err = scaleCount(c.MaxTokens, f, "max_tokens")
		return c, err
	}))
	registerControl("ratio_budget", "a retry budget", "ratio_budget: {percent, min_per_second, window, count_retries} allows retries up to a share of requests (budget)",
		false,
		func(m *schema.Mapping) policies.RatioBudgetConfig {
			return policies.RatioBudgetConfig{
				Percent:      int(m.Integer("percent", 0, -1, 1<<31-1)),
				MinPerSecond: int(m.Integer("min_per_second", 0, -1, 1<<31-1)),
				Window:       m.Duration("window", 0),
				CountRetries: m.Boolean("count_retries", false),
			}
		},
		func(c policies.RatioBudgetConfig) string {
			c = c.WithDefaults()
			of := "of requests"
			if c.CountRetries {
				of = "of requests, retries included,"
			}
			return fmt.Sprintf("retry budget %d%% %s over %v, plus %d a second", c.Percent, of, c.Window, c.MinPerSecond)
		})
	setScale("ratio_budget", scaleSpec(func(c policies.RatioBudgetConfig, f float64) (policies.RatioBudgetConfig, error) {
		// A share of requests, plus a reserve that scales with them; a
		// reserve below half a retry a second rounds to none.
		c = c.WithDefaults()
		if c.Percent == 0 {
			c.Percent = -1
		}
		c.MinPerSecond = int(math.Round(float64(c.MinPerSecond) * f))
		if c.MinPerSecond == 0 {
			c.MinPerSecond = -1
		}
		return c, nil
	}))
	registerControl("retry_quota", "a retry quota", "retry_quota: {capacity, retry_cost, timeout_retry_cost, throttle_retry_cost, success_refund, refund_every_success} is the AWS SDKs' retry token bucket (budget)",
		false,
		func(m *schema.Mapping) policies.RetryQuotaConfig {
			n := func(k string) int { return int(m.Integer(k, 0, 0, 1<<31-1)) }
			return policies.RetryQuotaConfig{Capacity: n("capacity"), RetryCost: n("retry_cost"), TimeoutRetryCost: n("timeout_retry_cost"),
				ThrottleRetryCost: n("throttle_retry_cost"), SuccessRefund: int(m.Integer("success_refund", 0, -1, 1<<31-1)),
				RefundEverySuccess: m.Boolean("refund_every_success", false)}
		},
		func(c policies.RetryQuotaConfig) string {
			c = c.WithDefaults()
			which := "a first attempt's"
			if c.RefundEverySuccess {
				which = "every"
			}
			return fmt.Sprintf("retry quota of %d tokens (a retry costs %d, after a timeout %d, after a rejection %d; %s success refunds %d)",
				c.Capacity, c.RetryCost, c.TimeoutRetryCost, c.ThrottleRetryCost, which, c.SuccessRefund)
		})
	setScale("retry_quota", scaleSpec(func(c policies.RetryQuotaConfig, f float64) (policies.RetryQuotaConfig, error) {
		c = c.WithDefaults()
		var err error
		c.Capacity, err = scaleCount(c.Capacity, f, "capacity")
		return c, err
	}))
	registerControl("cubic_rate", "an adaptive send rate", "cubic_rate: {beta, scale, smoothing, min_fill_rate, throttle_on_capacity} is the AWS SDKs' adaptive send-rate limiter",
		true,
		func(m *schema.Mapping) policies.CubicRateConfig {
			return policies.CubicRateConfig{
				Beta:               m.Number("beta", 0, 0, 0.999999),
				Scale:              m.Number("scale", 0, 0, math.MaxFloat64),
				Smoothing:          m.Number("smoothing", 0, 0, 1),
				MinFillRate:        m.Number("min_fill_rate", 0, 0, math.MaxFloat64),
				ThrottleOnCapacity: m.Boolean("throttle_on_capacity", false),
			}
		},
		func(c policies.CubicRateConfig) string { return c.String() })
	setScale("cubic_rate", scaleSpec(func(c policies.CubicRateConfig, f float64) (policies.CubicRateConfig, error) {
		// A send rate: the cubic curve's scale and the lowest rate go with
		// it (its K, a time, stays).
		c = c.WithDefaults()
		c.Scale *= f
		c.MinFillRate *= f
		return c, nil
	}))
}

// registerControl registers one control whose config, a spec of type C,
// a policy lists among its coordinators; noun names it in a sentence.
func registerControl[C machine.Spec](name, noun, about string, paces bool, decode func(*schema.Mapping) C, describe func(C) string) {
	registerCoordinator(&coordinatorKind{
		Kind: registerKind(&Kind{Category: Coordinators, Name: name, Fields: []string{name}, About: about}),
		decode: func(d *schema.Decoder, m *schema.Mapping, p *sim.Policy, on bool) {
			n := m.Get(name)
			if n == nil {
				if _, ok := specOf[C](p); on && !ok {
					var zero C
					setSpec(p, zero)
				}
				return
			}
			cm := d.Mapping(n, m.Field(name))
			c := decode(cm)
			cm.Finish()
			setSpec(p, c)
		},
		describe: func(p *sim.Policy) string {
			if c, ok := specOf[C](p); ok {
				return describe(c)
			}
			return ""
		},
		is:    isSpec[C],
		paces: paces,
		noun:  noun,
	})
}

// decodeRules reads the policy fields of policies.Policy beyond attempts and
// deadline: attempt_timeout, retry_capacity, retry_mid_stream, retry_by
// and server_wait.
func decodeRules(d *schema.Decoder, m *schema.Mapping, r *policies.Policy) {
	r.AttemptTimeout = m.Duration("attempt_timeout", r.AttemptTimeout)
	r.StreamIdleTimeout = m.Duration("stream_idle_timeout", r.StreamIdleTimeout)
	r.StreamFirstByteTimeout = m.Duration("stream_first_byte_timeout", r.StreamFirstByteTimeout)
	r.NoCapacityRetries = !m.Boolean("retry_capacity", !r.NoCapacityRetries)
	r.NoMidStreamRetries = !m.Boolean("retry_mid_stream", !r.NoMidStreamRetries)
	if m.Has("retry_by") {
		switch by := m.Str("retry_by", ""); by {
		case "class":
			r.RetryByStatus = false
		case "status":
			r.RetryByStatus = true
		default:
			m.Errorf("retry_by", "unknown rule %q; choose class (terminal failures are not retried) or status (the SDKs' rule: 408, 409, 429, 5xx and connection errors, x-should-retry where given)", by)
		}
	}
	if m.Has("retry_on") {
		if m.Has("retry_by") {
			m.Errorf("retry_by", "retry_on replaces the rule retry_by chooses: give one of them")
		}
		r.RetryOn = decodeRetryOn(d, m)
	}
	if n := m.Get("server_wait"); n != nil {
		sm := d.Mapping(n, m.Field("server_wait"))
		r.ServerWaitJitter = sm.Duration("jitter", r.ServerWaitJitter)
		r.AtLeastBackoff = sm.Boolean("at_least_backoff", r.AtLeastBackoff)
		r.IgnoreServerWaitAbove = sm.Duration("ignore_above", r.IgnoreServerWaitAbove)
		r.ClampServerWait = sm.Duration("clamp_to", r.ClampServerWait)
		r.FailServerWaitAbove = sm.Duration("fail_above", r.FailServerWaitAbove)
		if c := sm.Duration("total_cap", r.TotalServerWaitCap); c > machine.MaxTotalServerWaitCap {
			sm.Errorf("total_cap", "must be at most %v (an operation sums its server waits in %v units), got %v", machine.MaxTotalServerWaitCap, machine.ServerWaitUnit, c)
		} else {
			r.TotalServerWaitCap = c
		}
		var set []string
		for _, f := range []string{"ignore_above", "clamp_to", "fail_above"} {
			if sm.Has(f) {
				set = append(set, f)
			}
		}
		if len(set) > 1 {
			sm.Errorf(set[1], "give at most one of ignore_above, clamp_to and fail_above (%s is given too)", set[0])
		}
		sm.Finish()
	}
}

// rulesFields are the fields decodeRules reads.
var rulesFields = []string{"attempt_timeout", "retry_capacity", "retry_mid_stream", "retry_by", "retry_on", "server_wait", "stream_idle_timeout", "stream_first_byte_timeout"}

// retryOnClasses are the class names retry_on takes: the classes a
// failure can have, but terminal (list a status to retry one).
var retryOnClasses = []policies.Class{policies.RetryAfter, policies.Capacity, policies.Transient}

// retryOnClassNames lists the class names retry_on takes.
func retryOnClassNames() string {
	var names []string
	for _, c := range retryOnClasses {
		names = append(names, c.String())
	}
	return strings.Join(names, ", ")
}

// retryOnNames says what retry_on takes, for its errors.
func retryOnNames() string {
	return fmt.Sprintf("a status from %d to %d, or a class: %s", machine.MinRetryStatus, machine.MaxRetryStatus, retryOnClassNames())
}

// checkRetryOn refuses a retry_on that lists capacity failures for a
// policy that never retries them (retry_capacity: false, its own or its
// type's): the entries would do nothing.
func checkRetryOn(m *schema.Mapping, r *policies.Policy, typ string) {
	on := r.RetryOn
	if !r.NoCapacityRetries || !on.Classes.Has(policies.Capacity) && !on.Statuses.Has(503) && !on.Statuses.Has(529) {
		return
	}
	why := "retry_capacity: false"
	if !m.Has("retry_capacity") {
		why = "type " + typ + " sets retry_capacity: false"
	}
	m.Errorf("retry_on", "lists capacity failures (capacity, 503, 529), which this policy never retries (%s)", why)
}

// decodeRetryOn reads retry_on: a list of statuses (numbers) and class
// names, the only failures the policy retries (machine.RetryOn).
func decodeRetryOn(d *schema.Decoder, m *schema.Mapping) machine.RetryOn {
	items := m.Sequence("retry_on")
	if len(items) == 0 {
		if m.Get("retry_on").Kind == yaml.SequenceNode {
			m.Errorf("retry_on", "the list is empty: list what is retried (%s), or for no retries set max_attempts: 1", retryOnNames())
		}
		return machine.RetryOn{}
	}
	var statuses []int
	var on machine.RetryOn
	for i, item := range items {
		field := fmt.Sprintf("%s[%d]", m.Field("retry_on"), i)
		item = schema.Resolve(item)
		if item.Kind != yaml.ScalarNode {
			d.Errorf(item, field, "want %s, got %s", retryOnNames(), schema.Describe(item))
			continue
		}
		if item.Tag == "!!int" {
			code, err := strconv.Atoi(item.Value)
			if err == nil && (code < machine.MinRetryStatus || code > machine.MaxRetryStatus) {
				err = fmt.Errorf("%d is not an error status", code)
			}
			if err != nil {
				d.Errorf(item, field, "want %s, got %s", retryOnNames(), item.Value)
				continue
			}
			if slices.Contains(statuses, code) {
				d.Errorf(item, field, "%d is listed twice", code)
			}
			statuses = append(statuses, code)
			continue
		}
		name := item.Value
		k := slices.IndexFunc(retryOnClasses, func(c policies.Class) bool { return c.String() == name })
		switch {
		case item.Tag != "!!str":
			d.Errorf(item, field, "want %s, got %s", retryOnNames(), schema.Describe(item))
		case name == policies.Terminal.String():
			d.Errorf(item, field, "a terminal failure is never retried by its class; list its status (such as 400) to retry it")
		case k < 0:
			d.Errorf(item, field, "unknown class %q%s; want %s", name, didYouMean(name, retryOnClassNames()), retryOnNames())
		case on.Classes.Has(retryOnClasses[k]):
			d.Errorf(item, field, "%s is listed twice", name)
		default:
			on.Classes |= policies.Classes(retryOnClasses[k])
		}
	}
	on.Statuses, _ = machine.Statuses(statuses...) // each checked above
	return on
}

// describeBreaker writes a breaker's rules with the defaults filled in.
func describeBreaker(c policies.BreakerConfig) string {
	c = c.WithDefaults()
	var trips []string
	if c.ConsecutiveFailures > 0 {
		trips = append(trips, fmt.Sprintf("%d failures in a row", c.ConsecutiveFailures))
	}
	if c.FailureRatio > 0 {
		trips = append(trips, fmt.Sprintf("a failure ratio of %g over %v (≥ %d outcomes)", c.FailureRatio, c.Window, c.MinRequests))
	}
	open := fmt.Sprintf("open for %v", c.OpenFor)
	if c.MaxOpenFor > c.OpenFor {
		open += fmt.Sprintf(", doubling up to %v", c.MaxOpenFor)
	}
	return fmt.Sprintf("circuit breaker (opens after %s; %s; %d probe(s) half-open)", strings.Join(trips, " or "), open, c.Probes)
}

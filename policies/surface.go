package policies

import (
	"net/http"
	"time"

	"github.com/retrysim/retrysim/policies/machine"
)

// The names below are the client's share of package machine, where they are
// defined and documented with their fields and methods (go doc
// github.com/retrysim/retrysim/policies/machine.NAME). Each type is an alias,
// so a value made here is the value the simulator runs.

// Policy is a retry policy: backoff, attempts, budget, server waits, stream
// watchdog (machine.Policy).
type Policy = machine.Policy

// Backoff chooses the wait before a retry; the types below implement it.
type (
	Backoff            = machine.Backoff
	Constant           = machine.Constant
	Exponential        = machine.Exponential
	FullJitter         = machine.FullJitter
	EqualJitter        = machine.EqualJitter
	DecorrelatedJitter = machine.DecorrelatedJitter
	SDKJitter          = machine.SDKJitter
	AddedJitter        = machine.AddedJitter
	DoublingJitter     = machine.DoublingJitter
	GRPCJitter         = machine.GRPCJitter
)

// Classification: what an attempt's answer means for the retry decision.
type (
	Class      = machine.Class
	ClassSet   = machine.ClassSet
	Outcome    = machine.Outcome
	Classifier = machine.Classifier
	// HTTPError is an HTTP status (and headers) an Operation returns for a
	// failed answer, for ClassifyError.
	HTTPError = machine.HTTPError
	// StreamError is a stream that ended without message_stop.
	StreamError = machine.StreamError
	// ServerWaitError is a server wait longer than the policy allows.
	ServerWaitError = machine.ServerWaitError
)

// The classes of an Outcome.
const (
	Success    = machine.Success
	RetryAfter = machine.RetryAfter
	Capacity   = machine.Capacity
	Transient  = machine.Transient
	Terminal   = machine.Terminal
)

// Classes returns the set of cs.
func Classes(cs ...Class) ClassSet { return machine.Classes(cs...) }

// ClassifyError is Do's default classifier (machine.ClassifyError).
func ClassifyError(err error, now time.Time) Outcome { return machine.ClassifyError(err, now) }

// ClassifyResponse classifies an HTTP answer (machine.ClassifyResponse).
func ClassifyResponse(status int, header http.Header, body []byte, now time.Time) Outcome {
	return machine.ClassifyResponse(status, header, body, now)
}

// ClassifyEvent classifies a stream's error event (machine.ClassifyEvent).
func ClassifyEvent(event string, data []byte) Outcome { return machine.ClassifyEvent(event, data) }

// ServerWait returns the wait an answer's headers ask for (retry-after-ms,
// retry-after), if any (machine.ServerWait).
func ServerWait(header http.Header, now time.Time) (time.Duration, bool) {
	return machine.ServerWait(header, now)
}

// Error is what Do returns when it gives up; StopReason says why.
type (
	Error      = machine.Error
	StopReason = machine.StopReason
)

// The reasons Do stops (Error.Reason).
const (
	StopAttempts    = machine.StopAttempts
	StopDeadline    = machine.StopDeadline
	StopTerminal    = machine.StopTerminal
	StopQueueFull   = machine.StopQueueFull
	StopCancelled   = machine.StopCancelled
	StopBudget      = machine.StopBudget
	StopThrottled   = machine.StopThrottled
	StopCircuitOpen = machine.StopCircuitOpen
)

// Hooks are called as Do decides (WithHooks); the events they receive.
type (
	Hooks         = machine.Hooks
	RetryEvent    = machine.RetryEvent
	FallbackEvent = machine.FallbackEvent
)

// Coordinators shared by the operations of one API key: pass one to
// WithCoordinator (or WithGate, WithThrottle, WithLimiter). A config
// type builds its coordinator with New... or its NewCoordinator method.
type (
	Coordinator            = machine.Coordinator
	Gate                   = machine.Gate
	Throttle               = machine.Throttle
	Limiter                = machine.Limiter
	Pacer                  = machine.Pacer
	PacerConfig            = machine.PacerConfig
	ResetGate              = machine.ResetGate
	ResetGateConfig        = machine.ResetGateConfig
	Breaker                = machine.Breaker
	BreakerConfig          = machine.BreakerConfig
	AdaptiveThrottle       = machine.AdaptiveThrottle
	AdaptiveThrottleConfig = machine.AdaptiveThrottleConfig
	RatioBudget            = machine.RatioBudget
	RatioBudgetConfig      = machine.RatioBudgetConfig
	RetryQuota             = machine.RetryQuota
	RetryQuotaConfig       = machine.RetryQuotaConfig
	RetryThrottling        = machine.RetryThrottling
	RetryThrottlingConfig  = machine.RetryThrottlingConfig
	RetryBucketConfig      = machine.RetryBucketConfig
	RetryBreakerConfig     = machine.RetryBreakerConfig
	CubicRate              = machine.CubicRate
	CubicRateConfig        = machine.CubicRateConfig
	Hedger                 = machine.Hedger
	HedgeConfig            = machine.HedgeConfig
	// GateClosedError and PacedError are the causes of a stop by a gate
	// and a pacer (Error.Err).
	GateClosedError = machine.GateClosedError
	PacedError      = machine.PacedError
	// ModelFallback moves an operation to another model (WithFallback).
	ModelFallback = machine.ModelFallback
)

// NewThrottle returns a throttle of count sends per period with a wait
// queue of maxQueue operations.
func NewThrottle(count int, per time.Duration, maxQueue int) (*Throttle, error) {
	return machine.NewThrottle(count, per, maxQueue)
}

// NewLimiter returns a limit of maxInFlight attempts with a wait queue of
// maxQueue operations.
func NewLimiter(maxInFlight, maxQueue int) (*Limiter, error) {
	return machine.NewLimiter(maxInFlight, maxQueue)
}

// NewPacer returns a pacer by the rate-limit headers (see HeaderObserver).
func NewPacer(c PacerConfig) (*Pacer, error) { return machine.NewPacer(c) }

// NewBreaker returns a circuit breaker.
func NewBreaker(c BreakerConfig) (*Breaker, error) { return machine.NewBreaker(c) }

// NewAdaptiveThrottle returns Google SRE's client-side adaptive throttling.
func NewAdaptiveThrottle(c AdaptiveThrottleConfig) (*AdaptiveThrottle, error) {
	return machine.NewAdaptiveThrottle(c)
}

// NewRatioBudget returns a retry budget of a ratio of the first attempts.
func NewRatioBudget(c RatioBudgetConfig) (*RatioBudget, error) { return machine.NewRatioBudget(c) }

// NewRetryQuota returns a token-bucket retry quota (the AWS SDKs').
func NewRetryQuota(c RetryQuotaConfig) (*RetryQuota, error) { return machine.NewRetryQuota(c) }

// DefaultRetryQuota is the AWS SDKs' standard retry quota.
func DefaultRetryQuota() RetryQuotaConfig { return machine.DefaultRetryQuota() }

// NewRetryThrottling returns gRPC's retry throttling.
func NewRetryThrottling(c RetryThrottlingConfig) (*RetryThrottling, error) {
	return machine.NewRetryThrottling(c)
}

// NewCubicRate returns the AWS SDKs' adaptive (CUBIC) send rate.
func NewCubicRate(c CubicRateConfig) (*CubicRate, error) { return machine.NewCubicRate(c) }

// NewHedger returns a hedger: a second copy of an attempt that is slow to answer.
func NewHedger(c HedgeConfig) (*Hedger, error) { return machine.NewHedger(c) }

// The errors a coordinator stops an operation with (Error.Err), and a
// deadline's end during an attempt.
var (
	ErrQueueFull      = machine.ErrQueueFull
	ErrTooLate        = machine.ErrTooLate
	ErrLimitQueueFull = machine.ErrLimitQueueFull
	ErrCircuitOpen    = machine.ErrCircuitOpen
	ErrRetryBudget    = machine.ErrRetryBudget
	ErrRetryBucket    = machine.ErrRetryBucket
	ErrRetryBreaker   = machine.ErrRetryBreaker
	ErrThrottled      = machine.ErrThrottled
	ErrBudgetEnded    = machine.ErrBudgetEnded
)

// Rate-limit headers, for pacers: RateLimits is what an answer's headers
// say; a HeaderObserver (a Pacer, a ResetGate) is told them by
// ObservingTransport.
type (
	RateLimits     = machine.RateLimits
	HeaderObserver = machine.HeaderObserver
)

// ObservingTransport tells obs the rate-limit headers of every answer base
// returns.
func ObservingTransport(base http.RoundTripper, obs ...HeaderObserver) http.RoundTripper {
	return machine.ObservingTransport(base, obs...)
}

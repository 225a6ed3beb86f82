package policies

import (
	"context"
	crand "crypto/rand"
	"math/rand/v2"
	"time"

	"github.com/retrysim/retrysim/policies/machine"
)

// Option configures Do and Transport.
type Option func(*config)

type config struct {
	policy       Policy
	classify     Classifier
	gate         *Gate
	throttle     *Throttle
	limiter      *Limiter
	coordinators []Coordinator
	fallback     *ModelFallback
	hooks        Hooks
	clock        machine.Clock
	rng          *rand.Rand
	// inputTokens and outputTokens size every attempt (WithRequestTokens).
	inputTokens, outputTokens int
	// deadlineHeader, if set, names the header Transport sends the
	// remaining budget in (WithDeadlineHeader).
	deadlineHeader string
}

// WithRequestTokens tells the coordinators the size of the request every
// attempt sends, in input and output tokens (Ask.InputTokens and
// OutputTokens), for a Pacer that paces by tokens. Negative counts read 0
// (unknown).
func WithRequestTokens(input, output int) Option {
	return func(c *config) { c.inputTokens, c.outputTokens = max(input, 0), max(output, 0) }
}

// DefaultPolicy is the policy Do uses unless told otherwise: full-jitter
// exponential backoff with ceilings 0.5 s, 1 s, 2 s, … capped at 30 s, no
// bound on attempts, and a budget (Deadline) of 2 minutes from Do's start,
// sleeps included.
func DefaultPolicy() Policy {
	return Policy{
		Backoff:  FullJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 30 * time.Second},
		Deadline: 2 * time.Minute,
	}
}

// WithPolicy replaces the whole policy (backoff, max attempts, budget). A
// policy without a backoff gets DefaultPolicy's. A policy with neither
// MaxAttempts nor Deadline retries until the context ends; one with a
// negative Deadline sends nothing (see WithBudget).
func WithPolicy(p Policy) Option { return func(c *config) { c.policy = p } }

// WithBackoff sets the backoff.
func WithBackoff(b Backoff) Option { return func(c *config) { c.policy.Backoff = b } }

// WithMaxAttempts bounds the attempts of one operation, the first included;
// 0 sets no bound of its own (an operation still stops after 2^31−1
// attempts, with StopAttempts).
func WithMaxAttempts(n int) Option { return func(c *config) { c.policy.MaxAttempts = max(n, 0) } }

// WithBudget sets the wall-clock budget of one operation, measured from Do's
// start and including every wait: an attempt that would start after it is
// not sent, and a wait that would end after it is not begun. 0 means none.
// A negative budget is already spent: Do sends nothing and returns
// StopDeadline with 0 attempts (as it does for a Policy whose Deadline is
// negative). An attempt still running when the budget ends is cut short:
// its context ends there, and Do returns StopDeadline with ErrBudgetEnded
// as the cause, so Do returns within the budget (plus the time op takes to
// notice its context).
func WithBudget(d time.Duration) Option {
	return func(c *config) { c.policy.Deadline = d }
}

// WithServerWaitJitter adds a uniform draw from [0, d) to every server-given
// wait and every gate hold (Policy.ServerWaitJitter).
func WithServerWaitJitter(d time.Duration) Option {
	return func(c *config) { c.policy.ServerWaitJitter = max(d, 0) }
}

// WithClassifier replaces ClassifyError.
func WithClassifier(f Classifier) Option { return func(c *config) { c.classify = f } }

// WithGate makes Do wait for g before every attempt and push it on every
// RetryAfter outcome with a server wait. Share one Gate per API key.
func WithGate(g *Gate) Option { return func(c *config) { c.gate = g } }

// WithThrottle makes every attempt book a start in t first; waiting for the
// slot counts against the budget.
func WithThrottle(t *Throttle) Option { return func(c *config) { c.throttle = t } }

// WithLimiter makes every attempt hold a slot of l while it runs (until its
// outcome is classified and the gate pushed). Waiting for the slot counts
// against the budget: a slot that frees after it stops Do (StopDeadline).
// Under a Transport an attempt ends when the response headers arrive, so a
// streamed body the caller reads afterwards is not counted; put Do around
// the whole call to count it.
func WithLimiter(l *Limiter) Option { return func(c *config) { c.limiter = l } }

// WithCoordinator adds c to the coordinators every attempt asks (a retry
// budget, a circuit breaker, adaptive throttling, or one of your own). They
// are asked after the gate, throttle and limiter, in the order the options
// give them; Do takes at most 16 coordinators in all
// (machine.MaxCoordinators) and fails at once with more. Share one c across
// the Do calls of one API key; it must be safe for concurrent use.
func WithCoordinator(c Coordinator) Option {
	return func(cfg *config) {
		if c != nil {
			cfg.coordinators = append(cfg.coordinators, c)
		}
	}
}

// WithFallback enables the model fallback f; Attempt.Model carries the model.
func WithFallback(f *ModelFallback) Option { return func(c *config) { c.fallback = f } }

// WithHooks sets the hooks.
func WithHooks(h Hooks) Option { return func(c *config) { c.hooks = h } }

// WithRand sets the random source of the backoff. A *rand.Rand is not safe
// for concurrent use: give each concurrent Do its own. (A Transport does
// that itself: each request draws from its own generator, seeded from r
// under a lock.) Without it, every Do call draws from a fresh ChaCha8 source
// seeded from crypto/rand.
func WithRand(r *rand.Rand) Option { return func(c *config) { c.rng = r } }

// WithAttemptTimeout bounds each attempt; an attempt that times out is
// Transient (as context.DeadlineExceeded is to ClassifyError). 0 means none.
func WithAttemptTimeout(d time.Duration) Option {
	return func(c *config) { c.policy.AttemptTimeout = max(d, 0) }
}

// newConfig applies opts; the clock is the one ctx carries, if any
// (machine.WithClock), else the real clock.
func newConfig(ctx context.Context, opts []Option) config {
	c := config{policy: DefaultPolicy(), classify: ClassifyError, clock: realClock{}}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.policy.Backoff == nil {
		c.policy.Backoff = DefaultPolicy().Backoff
	}
	if c.classify == nil {
		c.classify = ClassifyError
	}
	if clk, ok := machine.ClockFrom(ctx); ok {
		c.clock = clk
	}
	if c.rng == nil {
		var seed [32]byte
		_, _ = crand.Read(seed[:]) // never fails (crypto/rand crashes the program instead)
		c.rng = rand.New(rand.NewChaCha8(seed))
	}
	return c
}

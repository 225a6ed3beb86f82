package policies

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Attempt tells an operation which attempt it is making.
type Attempt struct {
	// Number is the attempt's number within the operation, from 1.
	Number int
	// Model is the model this attempt should call: ModelFallback.Primary,
	// or its Fallback after the switch. Empty when Do has no ModelFallback.
	Model string
}

// Operation is one attempt at the work Do retries, e.g. one model call. It
// returns nil on success. It must honour ctx: Do cancels it when the caller's
// context ends or the attempt timeout passes. A failed operation must leave
// nothing behind that a repeat would duplicate (retry the model call, never a
// tool call with side effects).
type Operation func(ctx context.Context, a Attempt) error

// Clock is the time source of the production loop. Production uses the real
// clock; tests either run under testing/synctest, which fakes the real clock,
// or pass their own Clock with WithClock.
type Clock interface {
	Now() time.Time
	// Sleep waits for d, or until ctx is done, when it returns ctx.Err().
	// A d <= 0 returns nil at once.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RetryEvent describes a retry that Do has scheduled.
type RetryEvent struct {
	// Attempt is the number of the attempt that failed, from 1.
	Attempt int
	// Outcome is how the failure was classified.
	Outcome Outcome
	// Delay is the wait before the next attempt, not counting any wait for
	// the gate, throttle or in-flight limit; never negative.
	Delay time.Duration
	// Err is the failed attempt's error.
	Err error
}

// FallbackEvent describes a switch to the fallback model.
type FallbackEvent struct {
	// Attempt is the number of the attempt whose failure caused the switch;
	// the next attempt uses To.
	Attempt  int
	From, To string
}

// Hooks are told what Do does, synchronously, on Do's goroutine. Any may be
// nil. They must not block for long: the operation waits for them.
type Hooks struct {
	OnRetryScheduled func(RetryEvent)
	OnGiveUp         func(*Error)
	OnFallback       func(FallbackEvent)
}

// Error is what Do returns when it stops without a success.
type Error struct {
	// Reason says why Do stopped: StopAttempts, StopDeadline (the budget),
	// StopTerminal, StopQueueFull, StopCancelled, or, from a coordinator
	// added with WithCoordinator, StopBudget, StopThrottled or
	// StopCircuitOpen.
	Reason StopReason
	// Attempts is the number of attempts sent.
	Attempts int
	// Last is the last attempt's error; nil if no attempt was sent.
	Last error
	// LastOutcome is how Last was classified. It is the zero Outcome if no
	// attempt was classified (none was sent, or the caller cancelled during
	// the attempt), and the zero Outcome's Class is Success, which prints
	// "success": check HasOutcome before reading it.
	LastOutcome Outcome
	// Cause is what stopped Do apart from Last, if anything: the context's
	// error for StopCancelled, ErrQueueFull, ErrLimitQueueFull,
	// ErrTooLate, ErrRetryBudget, ErrThrottled or ErrCircuitOpen; otherwise
	// nil.
	Cause error
	// Elapsed is the time from Do's start to its return.
	Elapsed time.Duration
}

// HasOutcome reports whether LastOutcome holds the classification of an
// attempt. It is false when no attempt was classified: none was sent, or the
// caller cancelled during the last one. (A classified failure is never
// Success: Do counts a failed attempt classified as Success as Terminal.)
func (e *Error) HasOutcome() bool { return e.LastOutcome.Class != Success }

func (e *Error) Error() string {
	msg := fmt.Sprintf("retry stopped (%v) after %d attempt(s) in %v", e.Reason, e.Attempts, e.Elapsed)
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	if e.Last != nil {
		msg += ": last error: " + e.Last.Error()
	}
	return msg
}

// Unwrap returns Last and Cause, so errors.Is and errors.As see both.
func (e *Error) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.Last, e.Cause} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Option configures Do and Transport.
type Option func(*config)

type config struct {
	policy         Policy
	classify       Classifier
	gate           *Gate
	throttle       *Throttle
	limiter        *Limiter
	coordinators   []Coordinator
	fallback       *ModelFallback
	hooks          Hooks
	clock          Clock
	rng            *rand.Rand
	attemptTimeout time.Duration
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
// 0 means no bound.
func WithMaxAttempts(n int) Option { return func(c *config) { c.policy.MaxAttempts = max(n, 0) } }

// WithBudget sets the wall-clock budget of one operation, measured from Do's
// start and including every wait: an attempt that would start after it is
// not sent, and a wait that would end after it is not begun. 0 means none.
// A negative budget is already spent: Do sends nothing and returns
// StopDeadline with 0 attempts (as it does for a Policy whose Deadline is
// negative). An attempt already running is not cut short by the budget; use
// WithAttemptTimeout or the context for that.
func WithBudget(d time.Duration) Option {
	return func(c *config) { c.policy.Deadline = d }
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
// give them; a Plan holds at most MaxCoordinators in all, and Do fails at
// once with more. Share one c across the Do calls of one API key; it must be
// safe for concurrent use.
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

// WithClock replaces the real clock (for tests that do not use synctest).
func WithClock(clk Clock) Option { return func(c *config) { c.clock = clk } }

// WithRand sets the random source of the backoff. A *rand.Rand is not safe
// for concurrent use: give each concurrent Do its own. (A Transport does
// that itself: each request draws from its own generator, seeded from r
// under a lock.) Without it, every Do call draws from a fresh ChaCha8 source
// seeded from crypto/rand.
func WithRand(r *rand.Rand) Option { return func(c *config) { c.rng = r } }

// WithAttemptTimeout bounds each attempt; an attempt that times out is
// Transient (as context.DeadlineExceeded is to ClassifyError). 0 means none.
func WithAttemptTimeout(d time.Duration) Option {
	return func(c *config) { c.attemptTimeout = max(d, 0) }
}

func newConfig(opts []Option) config {
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
	if c.clock == nil {
		c.clock = realClock{}
	}
	if c.rng == nil {
		var seed [32]byte
		_, _ = crand.Read(seed[:]) // never fails (crypto/rand crashes the program instead)
		c.rng = rand.New(rand.NewChaCha8(seed))
	}
	return c
}

// attemptKey marks the context of an attempt run by Do, so that a Transport
// beneath it steps aside instead of retrying too.
type attemptKey struct{}

// InAttempt reports whether ctx belongs to an attempt that Do is running.
func InAttempt(ctx context.Context) bool { return ctx.Value(attemptKey{}) != nil }

// Do runs op until it succeeds or the policy says stop, and returns nil or
// an *Error. It drives the same state machine (Op) the simulator drives:
//
//   - each failed attempt is classified (ClassifyError unless
//     WithClassifier); Terminal outcomes are never retried;
//   - the wait before a retry is the backoff's draw, but never less than a
//     server-given wait; if that wait would end after the budget, Do stops at
//     once (StopDeadline) instead of sleeping;
//   - before each attempt Do waits for the gate, a throttle slot and an
//     in-flight slot, in that order, if configured; those waits count
//     against the budget: a gate that opens or a throttle slot that comes
//     after it stops Do at once, and the wait for an in-flight slot ends
//     with it (StopDeadline); a gate closed again meanwhile sends the
//     attempt back to wait for it;
//   - the caller's context deadline counts as part of the budget: a wait
//     known to end at or after it stops Do at once (StopDeadline);
//   - a RetryAfter outcome pushes the gate before the attempt's in-flight
//     slot is released, so no queued worker starts in between;
//   - the caller's context ends every wait immediately, and a failure that
//     coincides with the caller's cancellation is never retried
//     (StopCancelled);
//   - after ModelFallback.After capacity failures the remaining attempts are
//     told to use the fallback model.
//
// Without options Do uses DefaultPolicy (a 2-minute budget). Do starts no
// goroutines: when it returns, nothing of it is left running.
func Do(ctx context.Context, op Operation, opts ...Option) error {
	if op == nil {
		return errors.New("policies.Do: nil operation")
	}
	if ctx == nil {
		return errors.New("policies.Do: nil context")
	}
	c := newConfig(opts)
	r := &run{config: c, plan: c.plan(), start: c.clock.Now(), waiter: newChanWaiter()}
	if n := len(r.plan.Coordinators); n > MaxCoordinators {
		return fmt.Errorf("policies.Do: %d coordinators, at most %d", n, MaxCoordinators)
	}
	r.op.Start(&r.plan)
	return r.loop(ctx, op)
}

// plan turns the options into the Plan the Op runs: the gate, throttle and
// limiter as coordinators, in that order, then those of WithCoordinator.
func (c *config) plan() Plan {
	p := Plan{Policy: c.policy, Fallback: c.fallback, Hooks: c.hooks}
	if c.gate != nil {
		p.Coordinators = append(p.Coordinators, c.gate)
	}
	if c.throttle != nil {
		p.Coordinators = append(p.Coordinators, c.throttle)
	}
	if c.limiter != nil {
		p.Coordinators = append(p.Coordinators, c.limiter)
	}
	p.Coordinators = append(p.Coordinators, c.coordinators...)
	return p
}

// run is the state of one Do call: the Op and what only the production
// driver has (the last error, the waiter of a goroutine).
type run struct {
	config
	plan    Plan
	op      Op
	start   time.Time
	waiter  *chanWaiter
	lastErr error
	lastOut Outcome
}

func (r *run) loop(ctx context.Context, op Operation) error {
	defer r.abandon() // in case op panics while holding a limiter slot
	for {
		if err := ctx.Err(); err != nil {
			return r.stop(Step{Reason: StopCancelled, Cause: err})
		}
		st := r.op.Before(&r.plan, r.moment(ctx), r.waiter, r.rng)
		switch st.Kind {
		case StepStop:
			return r.stop(st)
		case StepWait:
			if err := r.clock.Sleep(ctx, st.Delay); err != nil {
				r.abandon()
				return r.stop(Step{Reason: StopCancelled, Cause: err})
			}
			continue
		case StepBlock:
			if st, stopped := r.block(ctx); stopped {
				return r.stop(st)
			}
			continue
		}
		// StepSend.
		err := r.attempt(ctx, op)
		m := r.moment(ctx)
		if err == nil {
			r.op.After(&r.plan, m, Outcome{}, false, nil, r.rng)
			return nil
		}
		r.lastErr, r.lastOut = err, Outcome{}
		if ctxErr := ctx.Err(); ctxErr != nil {
			r.abandon()
			return r.stop(Step{Reason: StopCancelled, Cause: ctxErr})
		}
		out := r.classify(err, m.Now)
		if out.Class == Success {
			out.Class = Terminal // a failed operation cannot succeed; do not loop on it
		}
		r.lastOut = out
		st = r.op.After(&r.plan, m, out, true, err, r.rng)
		if st.Kind == StepStop {
			return r.stop(st)
		}
		if err := r.clock.Sleep(ctx, st.Delay); err != nil {
			return r.stop(Step{Reason: StopCancelled, Cause: err})
		}
	}
}

// moment reads the clock for the Op. The context's deadline becomes the
// cutoff: the last instant before it, measured on the real clock (a
// context deadline is a real-clock time; Do's clock may be a fake one).
func (r *run) moment(ctx context.Context) Moment {
	now := r.clock.Now()
	m := Moment{Now: now, Since: now.Sub(r.start)}
	if dl, ok := ctx.Deadline(); ok {
		m.Cutoff = now.Add(time.Until(dl) - 1)
	}
	return m
}

// block waits until the coordinator that queued the operation wakes it; it
// stops the operation when the budget ends first (StopDeadline) or ctx does
// (StopCancelled).
func (r *run) block(ctx context.Context) (Step, bool) {
	wctx := ctx
	if d := r.policy.Deadline; d > 0 {
		// A timeout from the clock's now, not a deadline: the clock may be
		// a fake one (WithClock), while the context runs on the real clock.
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, r.start.Add(d).Sub(r.clock.Now()))
		defer cancel()
	}
	select {
	case granted := <-r.waiter.ch:
		r.op.Woken(granted)
		return Step{}, false
	case <-wctx.Done():
		r.abandon()
		if err := ctx.Err(); err != nil {
			return Step{Reason: StopCancelled, Cause: err}, true
		}
		return Step{Reason: StopDeadline}, true
	}
}

// abandon gives back whatever the coordinators hold for the pending attempt
// and forgets a wake that raced with it.
func (r *run) abandon() {
	r.op.Abandon(&r.plan, r.clock.Now(), r.waiter)
	r.waiter.drain()
}

// attempt runs op once.
func (r *run) attempt(ctx context.Context, op Operation) error {
	actx := context.WithValue(ctx, attemptKey{}, true)
	if r.attemptTimeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(actx, r.attemptTimeout)
		defer cancel()
	}
	return op(actx, Attempt{Number: r.op.Attempts(), Model: r.op.Model(&r.plan)})
}

func (r *run) stop(st Step) error {
	return r.op.GiveUp(&r.plan, st, r.clock.Now().Sub(r.start), r.lastErr, r.lastOut)
}

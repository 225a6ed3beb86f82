package policies

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/retrysim/retrysim/policies/machine"
)

// Attempt tells an operation which attempt it is making.
type Attempt struct {
	// Number is the attempt's number within the operation, from 1.
	Number int
	// Model is the model this attempt should call: ModelFallback.Primary,
	// or its Fallback after the switch. Empty when Do has no ModelFallback.
	Model string
	// Copy is 0 for an attempt's first copy and k for its k-th hedge (see
	// HedgeConfig); each copy has its own Number.
	Copy int
}

// Operation is one attempt at the work Do retries, e.g. one model call. It
// returns nil on success. It must honour ctx: Do cancels it when the caller's
// context ends or the attempt timeout passes. A failed operation must leave
// nothing behind that a repeat would duplicate (retry the model call, never a
// tool call with side effects).
//
// With a Hedger among Do's coordinators, the copies of an attempt run
// concurrently, each in its own goroutine: the function runs concurrently
// with itself, so what it shares between calls must be safe for that. A
// copy's panic is re-raised in Do's goroutine once the other copies have
// returned.
type Operation func(ctx context.Context, a Attempt) error

// attemptKey marks the context of an attempt run by Do, so that a Transport
// beneath it steps aside instead of retrying too.
type attemptKey struct{}

// InAttempt reports whether ctx belongs to an attempt that Do is running.
func InAttempt(ctx context.Context) bool { return ctx.Value(attemptKey{}) != nil }

// Do runs op until it succeeds or the policy says stop, and returns nil or
// an *Error. It drives the same state machine (machine.Op) the simulator drives:
//
//   - each failed attempt is classified (ClassifyError unless
//     WithClassifier); Terminal outcomes are never retried;
//   - the wait before a retry is the server-given wait if there is one
//     (plus Policy.ServerWaitJitter), else the backoff's draw
//     (Policy.AtLeastBackoff: the larger of the two); if that wait would end
//     after the budget, Do stops at once (StopDeadline) instead of sleeping;
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
// goroutines, except for a hedged attempt (a Hedger among its
// coordinators): one per copy, and one per hedge delay that it waits out;
// it waits for those: when it returns, nothing of it is left running.
func Do(ctx context.Context, op Operation, opts ...Option) error {
	if op == nil {
		return errors.New("policies.Do: nil operation")
	}
	if ctx == nil {
		return errors.New("policies.Do: nil context")
	}
	c := newConfig(ctx, opts)
	r := &run{config: c, plan: c.plan(), start: c.clock.Now(), waiter: machine.NewChanWaiter()}
	if n := len(r.plan.Coordinators); n > machine.MaxCoordinators {
		return fmt.Errorf("policies.Do: %d coordinators, at most %d", n, machine.MaxCoordinators)
	}
	r.op.Start(&r.plan)
	return r.loop(ctx, op)
}

// plan turns the options into the Plan the Op runs: the gate, throttle and
// limiter as coordinators, in that order, then those of WithCoordinator.
func (c *config) plan() machine.Plan {
	p := machine.Plan{Policy: c.policy, Fallback: c.fallback, Hooks: c.hooks}
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

// run is the state of one Do call: the machine.Op and what only the production
// driver has (the last error, the waiter of a goroutine).
type run struct {
	config
	plan    machine.Plan
	op      machine.Op
	start   time.Time
	waiter  *machine.ChanWaiter
	lastErr error
	lastOut Outcome
	hedges  int // hedges sent (machine.Moment.Hedges)
}

func (r *run) loop(ctx context.Context, op Operation) error {
	defer r.abandon() // in case op panics while holding a limiter slot
	for {
		if err := ctx.Err(); err != nil {
			return r.stop(machine.Step{Reason: StopCancelled, Cause: err})
		}
		st := r.op.Before(&r.plan, r.moment(ctx), r.waiter, r.rng)
		switch st.Kind {
		case machine.StepStop:
			return r.stop(st)
		case machine.StepWait:
			if err := r.clock.Sleep(ctx, st.Delay); err != nil {
				r.abandon()
				return r.stop(machine.Step{Reason: StopCancelled, Cause: err})
			}
			continue
		case machine.StepBlock:
			if st, stopped := r.block(ctx); stopped {
				return r.stop(st)
			}
			continue
		}
		// machine.StepSend.
		err, cut := r.send(ctx, op)
		m := r.moment(ctx)
		if err == nil {
			r.op.After(&r.plan, m, Outcome{}, false, nil, r.rng)
			return nil
		}
		r.lastErr, r.lastOut = err, Outcome{}
		if ctxErr := ctx.Err(); ctxErr != nil {
			r.abandon()
			return r.stop(machine.Step{Reason: StopCancelled, Cause: ctxErr})
		}
		if cut {
			r.lastOut = Outcome{Class: Transient}
			return r.stop(r.op.Expire(&r.plan, m))
		}
		out := r.classify(err, m.Now)
		if out.Class == Success {
			out.Class = Terminal // a failed operation cannot succeed; do not loop on it
		}
		r.lastOut = out
		r.lastOut.Limits = nil // see Outcome.Limits
		st = r.op.After(&r.plan, m, out, true, err, r.rng)
		if st.Kind == machine.StepStop {
			return r.stop(st)
		}
		if err := r.clock.Sleep(ctx, st.Delay); err != nil {
			return r.stop(machine.Step{Reason: StopCancelled, Cause: err})
		}
	}
}

// moment reads the clock for the machine.Op. The context's deadline becomes the
// cutoff: the last instant before it, measured on the real clock (a
// context deadline is a real-clock time; Do's clock may be a fake one).
func (r *run) moment(ctx context.Context) machine.Moment {
	now := r.clock.Now()
	m := machine.Moment{Now: now, Since: now.Sub(r.start), InputTokens: r.inputTokens, OutputTokens: r.outputTokens, Hedges: r.hedges}
	if dl, ok := ctx.Deadline(); ok {
		m.Cutoff = now.Add(time.Until(dl) - 1)
	}
	return m
}

// block waits until the coordinator that queued the operation wakes it; it
// stops the operation when the budget ends first (StopDeadline) or ctx does
// (StopCancelled).
func (r *run) block(ctx context.Context) (machine.Step, bool) {
	wctx := ctx
	if d := r.policy.Deadline; d > 0 {
		// A timeout from the clock's now, not a deadline: the clock may be
		// a fake one (machine.WithClock), while the context runs on the real clock.
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, r.start.Add(d).Sub(r.clock.Now()))
		defer cancel()
	}
	select {
	case granted := <-r.waiter.Woken():
		r.op.Woken(granted)
		return machine.Step{}, false
	case <-wctx.Done():
		r.abandon()
		if err := ctx.Err(); err != nil {
			return machine.Step{Reason: StopCancelled, Cause: err}, true
		}
		return machine.Step{Reason: StopDeadline}, true
	}
}

// abandon gives back whatever the coordinators hold for the pending attempt
// and forgets a wake that raced with it.
func (r *run) abandon() {
	r.op.Abandon(&r.plan, r.clock.Now(), r.waiter)
	r.waiter.Drain()
}

// attempt runs op once. Its context ends when the budget does (cut reports
// that this is why it failed), or after the attempt timeout.
func (r *run) attempt(ctx context.Context, op Operation, a Attempt) (err error, cut bool) {
	actx := context.WithValue(ctx, attemptKey{}, true)
	if d := r.policy.Deadline; d > 0 {
		// A timeout from the clock's now, not a deadline: the clock may be
		// a fake one (machine.WithClock), while the context runs on the real clock.
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeoutCause(actx, r.start.Add(d).Sub(r.clock.Now()), ErrBudgetEnded)
		defer cancel()
	}
	if t := r.policy.AttemptTimeout; t > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(actx, t)
		defer cancel()
	}
	if w := r.policy.Watchdog(); w.On() {
		var stop func() (int, bool)
		actx, stop = watched(actx, w)
		err = op(actx, a)
		if n, fired := stop(); fired && err != nil && !errors.Is(context.Cause(actx), ErrBudgetEnded) {
			err = &StreamError{Content: n, Stalled: true, Err: err}
		}
	} else {
		err = op(actx, a)
	}
	return err, err != nil && errors.Is(context.Cause(actx), ErrBudgetEnded)
}

func (r *run) stop(st machine.Step) error {
	return r.op.GiveUp(&r.plan, st, r.clock.Now().Sub(r.start), r.lastErr, r.lastOut)
}

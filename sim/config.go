// Package sim is retrysim's discrete-event simulator: virtual time, a
// workload of operations, a server model, and the client side of every
// operation driven by the policies package's state machine (machine.Op),
// the same one policies.Do drives in production.
//
// A run is single-threaded and deterministic: the same Config gives the same
// Result on any machine. Time is a time.Duration since the run's origin;
// randomness comes only from math/rand/v2 PCG streams derived from the seed.
package sim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// Fallback configures a model fallback (policies.ModelFallback): after
// After capacity failures (0 means machine.DefaultFallbackAfter) an
// operation's remaining attempts call the fallback model.
type Fallback struct {
	After       int
	Sticky      bool
	Consecutive bool // count only capacity failures in a row
	Restart     bool // the retries start again on the fallback (policies.ModelFallback.Restart)
}

// Policy is one retry policy as the simulator runs it: the decision rules
// from the policies package plus the shared coordination its operations use,
// built afresh for every run.
type Policy struct {
	Name  string
	Rules policies.Policy
	// Coordinators are the shared coordination its operations use, asked
	// in this order before every attempt; each may hold or stop an
	// operation. The scenario loader lists them in the documented order
	// (docs/policies.md): gate, throttle, in-flight limit, then the retry
	// controls. Zero fields of their configs take the documented defaults.
	Coordinators []machine.Spec
	// Fallback, if set, moves operations to the fallback model.
	Fallback *Fallback
	// Layers, if set, are retry layers inside this one, outermost first
	// (an SDK inside the application's loop, an HTTP client inside the
	// SDK): each attempt of a layer is a whole retry loop of the next,
	// and only the innermost sends to the server (see Layer). A run puts
	// its server behind them (Layered); the engine knows nothing of them.
	Layers []Layer
}

// Plan builds a machine.Plan for the policy with fresh shared state: a
// coordinator for each of its specs, in their order (policies.Do asks
// those given by WithCoordinator in that order too), and a fallback whose
// models are named "primary" and "fallback". A run builds one; a
// production client builds one per API key (scenarios.ClientOptions).
func (p *Policy) Plan(hooks policies.Hooks) (machine.Plan, error) {
	plan := machine.Plan{Policy: p.Rules, Hooks: hooks}
	if n := len(p.Coordinators); n > machine.MaxCoordinators {
		return plan, fmt.Errorf("policy %q: %d coordinators, at most %d", p.Name, n, machine.MaxCoordinators)
	}
	for _, s := range p.Coordinators {
		c, err := s.NewCoordinator()
		if err != nil {
			return plan, fmt.Errorf("policy %q: %w", p.Name, err)
		}
		plan.Coordinators = append(plan.Coordinators, c)
	}
	if f := p.Fallback; f != nil {
		plan.Fallback = &policies.ModelFallback{Primary: "primary", Fallback: "fallback", After: f.After, Sticky: f.Sticky, Consecutive: f.Consecutive, Restart: f.Restart}
	}
	return plan, nil
}

// Queues reports whether a coordinator of p queues operations (an
// in-flight limit): the run then keeps a waiter per operation.
func (p *Policy) Queues() bool {
	for _, s := range p.Coordinators {
		if q, ok := s.(machine.Queuer); ok && q.Queues() {
			return true
		}
	}
	return false
}

// MaxHedges is the most hedged copies p sends beside an attempt; ok is
// false if p does not hedge (no policies.HedgeConfig among its
// coordinators).
func (p *Policy) MaxHedges() (n int, ok bool) {
	for _, s := range p.Coordinators {
		if h, isHedge := s.(policies.HedgeConfig); isHedge {
			return h.WithDefaults().MaxHedges, true
		}
	}
	return 0, false
}

// MayStop reports whether a coordinator of p stops operations locally
// with reason (machine.Stopper).
func (p *Policy) MayStop(reason policies.StopReason) bool {
	for _, s := range p.Coordinators {
		if st, ok := s.(machine.Stopper); ok && st.Stops() == reason {
			return true
		}
	}
	return false
}

// Config is everything one run needs.
type Config struct {
	Seed     uint64
	Server   ServerModel
	Workload Workload
	Policy   Policy
	// Priorities, if set, give the operations of a workload that is no
	// Prioritizer their priorities (Request.Priority).
	Priorities PriorityShares
	// Incident, if set (End > 0), is the span of the scenario's trigger:
	// the run then measures its Recovery.
	Incident Incident
	// Observer, if any of its hooks is set, is told of every attempt sent,
	// decided and answered and of every operation's end (Observer). A hook
	// left nil costs nothing.
	Observer Observer
	// OnProgress, if set, is told every 16,384 engine events of the events
	// the run has processed so far, from the run's goroutine, for a
	// progress display. Nothing it does may reach the run.
	OnProgress func(events int)
	// Hooks, if set, are told of every retry scheduled, fallback and
	// give-up, by the same state machine that tells them in production.
	// Their Err and Last fields are nil (a simulated rejection is not a Go
	// error) and Elapsed is virtual time since the operation's start. Runs
	// call them from one goroutine, in event order.
	Hooks policies.Hooks

	// maxSeq, when > 0, lowers the event queue's largest sequence number,
	// so that a run renumbers its events often; only tests set it
	// (withMaxSeq, export_test.go).
	maxSeq uint64
}

// Observer holds hooks a run calls as it goes, from the run's goroutine,
// in event order (times never decrease from one call to the next). op is
// the operation's index in the run; at is virtual time since the run's
// origin. Every hook is optional. Nothing a hook does may reach the run.
//
// An attempt is sent (OnSend), decided by the server (OnDecision) and
// answered (OnResponse), exactly once each. Most servers decide at the
// attempt's arrival, right after OnSend; a Decider decides later, and when
// the client stops waiting first, OnResponse (its timeout) and even the
// operation's next attempts come before that OnDecision. A hedged copy is
// an attempt: one cancelled because another copy won is answered at its
// cancellation, as policies.Transient. An operation ends at most once: it completes (OnComplete,
// right after the successful response) or gives up (OnGiveUp).
type Observer struct {
	// OnSend: operation op sent an attempt; retry is false for its first.
	OnSend func(at time.Duration, op int, retry bool)
	// OnDecision: the server admitted the attempt of op (class
	// policies.Success) or rejected it with class.
	OnDecision func(at time.Duration, op int, class policies.Class)
	// OnWasted: the attempt of op just admitted (OnDecision, same time)
	// is answered after its client stopped waiting (its attempt timeout or
	// the deadline): the server's work on it is wasted. For a queue these
	// are the requests the counter server.wasted counts.
	OnWasted func(at time.Duration, op int)
	// OnResponse: the attempt's answer reached op's client, with the class
	// the client saw: a timeout, or the end of the operation's deadline
	// while it waited, is policies.Transient.
	OnResponse func(at time.Duration, op int, class policies.Class)
	// OnComplete: operation op succeeded.
	OnComplete func(at time.Duration, op int)
	// OnGiveUp: operation op stopped without success, for reason. The retry
	// controls' local rejections are policies.StopBudget, StopThrottled and
	// StopCircuitOpen: the attempt was not sent.
	OnGiveUp func(at time.Duration, op int, reason policies.StopReason)
}

// Validate checks a Config before it runs.
func (c *Config) Validate() error {
	if c.Server == nil {
		return errors.New("no server model")
	}
	if err := c.Server.Validate(); err != nil {
		return err
	}
	if c.Workload == nil {
		return errors.New("no workload")
	}
	if err := c.Workload.Validate(); err != nil {
		return err
	}
	if c.Incident != (Incident{}) {
		if err := c.Incident.Validate(); err != nil {
			return err
		}
	}
	if err := c.validatePolicy(&c.Policy); err != nil {
		return err
	}
	if w, ok := c.Workload.(fixedPolicies); ok {
		if ps, some := w.FixedPolicies(); some {
			if why := fixedPolicyProblem(&c.Policy); why != "" {
				return fmt.Errorf("policy %q %s, and some client groups have a policy of their own", c.Policy.Name, why)
			}
			for _, p := range ps {
				if err := c.validatePolicy(p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// validatePolicy checks one policy of the run: the compared one, or a
// client group's own.
func (c *Config) validatePolicy(p *Policy) error {
	d := p.Rules
	if d.Backoff == nil {
		return fmt.Errorf("policy %q has no backoff", p.Name)
	}
	if d.MaxAttempts <= 0 && d.Deadline <= 0 {
		// Against a server that never admits, the run would never end.
		return fmt.Errorf("policy %q needs max attempts or a deadline", p.Name)
	}
	if f := p.Fallback; f != nil && f.After < 0 {
		return fmt.Errorf("policy %q: fallback after must be >= 0", p.Name)
	}
	for _, s := range p.Coordinators {
		if s == nil {
			return fmt.Errorf("policy %q: a nil coordinator spec", p.Name)
		}
		if err := s.Validate(); err != nil {
			return fmt.Errorf("policy %q: %w", p.Name, err)
		}
		if _, ok := s.(policies.HedgeConfig); ok && DecidesLater(c.Server) {
			return fmt.Errorf("policy %q hedges, and hedging needs a server that decides each request when it arrives (this one decides some later)", p.Name)
		}
		if _, ok := s.(policies.HedgeConfig); ok && len(p.Layers) > 0 {
			return fmt.Errorf("policy %q hedges and has retry layers inside; a layered policy cannot hedge (yet)", p.Name)
		}
	}
	if err := ValidateLayers(p.Layers); err != nil {
		return fmt.Errorf("policy %q: %w", p.Name, err)
	}
	return nil
}

// Run simulates one policy against the server and workload of cfg.
func Run(cfg Config) (Result, error) { return RunContext(context.Background(), cfg) }

// RunContext is Run, stopping with ctx's error soon after ctx is done (the
// engine looks at it every few thousand events).
func RunContext(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.withLayers()
	var r runner
	return r.run(ctx, &cfg)
}

// A Runner runs simulations one after another and reuses its working memory
// (operation state and event queue) from run to run, which saves allocation
// and garbage collection when one goroutine runs many seeds. Each Result is
// the run's own. The zero Runner is ready to use; it is not safe for
// concurrent use.
type Runner struct{ r runner }

// Run simulates one policy against the server and workload of cfg, exactly
// as the function Run does.
func (x *Runner) Run(cfg Config) (Result, error) { return x.RunContext(context.Background(), cfg) }

// RunContext is Run with a context, as the function RunContext.
func (x *Runner) RunContext(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.withLayers()
	res, err := x.r.run(ctx, &cfg)
	// Keep the buffers; drop everything that belongs to this run.
	x.r = runner{ops: x.r.ops[:0], q: x.r.q.buffers(), starts: x.r.starts[:0]}
	return res, err
}

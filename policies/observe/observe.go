// Package observe turns what Do does into one record per attempt and one per
// operation, for telemetry: the attempt log (package attemptlog) and
// OpenTelemetry (package otelretry) are Sinks of these records.
//
// Do's hooks (policies.Hooks) say when a retry is scheduled, the model
// switched or the operation given up, but not when an attempt is sent or
// answered, nor that an operation succeeded. A Tracker adds what they lack
// without changing Do: it wraps the Operation (the attempt's send and answer
// times, its error, its model) and chains the hooks (the attempt's outcome,
// the backoff chosen, the stop reason), and reports each attempt once both
// halves are known. Do runs the hooks synchronously before the next attempt
// starts, so an attempt's record is complete before the next one is sent.
//
// Like policies, observe is standard library only.
package observe

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// Attempt is one attempt of an operation.
type Attempt struct {
	// Number is the attempt's number within the operation, from 1
	// (policies.Attempt.Number).
	Number int
	// Copy is 0 for an attempt's first copy and k for its k-th hedge.
	Copy int
	// Model is the model the attempt called; empty without a model fallback.
	Model string
	// Sent and Answered are when the attempt began and when it returned.
	// Answered is the zero time until the attempt returns.
	Sent, Answered time.Time
	// Outcome is how Do classified the attempt; valid when Classified.
	// Its Limits are never set.
	Outcome policies.Outcome
	// Classified is false for an attempt Do did not classify: the caller
	// cancelled during it, or it is a hedged copy whose answer Do did not
	// use.
	Classified bool
	// Err is the attempt's error; nil on success.
	Err error
	// Retry says Do scheduled a retry after this attempt, Backoff long (the
	// wait chosen before the next attempt, server wait included, not
	// counting waits for the gate, throttle or in-flight limit).
	Retry   bool
	Backoff time.Duration
	// FallbackTo, if not empty, is the model the operation switched to
	// after this attempt.
	FallbackTo string
	// InputTokens and OutputTokens are what the operation reported with
	// SetTokens during the attempt; 0 when unknown.
	InputTokens, OutputTokens int
}

// Operation is one call of Do.
type Operation struct {
	// ID names the operation in the records; a Sink may set it in Start
	// when it is empty (the attempt log numbers operations).
	ID string
	// Start is when the operation began; End when it ended (zero until
	// then).
	Start, End time.Time
	// Attempts is the number of attempts sent, hedges included.
	Attempts int
	// Err is nil if the operation succeeded, otherwise the error Do
	// returned; GaveUp, if not nil, is its *policies.Error (Reason says why
	// Do stopped).
	Err    error
	GaveUp *policies.Error
}

// Sink receives the records of operations. Start and Send return the
// context the operation and the attempt run with, so a tracing Sink can put
// its spans there; Answer and End are given those contexts back. A Sink is
// called from Do's goroutine, or from the goroutines of hedged copies
// (Send, and Answer on success): it must be safe for concurrent use across
// operations and attempts.
type Sink interface {
	Start(ctx context.Context, op *Operation) context.Context
	Send(ctx context.Context, op *Operation, a *Attempt) context.Context
	// Answer reports an attempt whose record is complete.
	Answer(ctx context.Context, op *Operation, a *Attempt)
	// End reports the operation's end, after all its attempts.
	End(ctx context.Context, op *Operation)
}

// Tracker follows one operation: wrap its Operation with Wrap, give Do the
// hooks from Hooks and the context from Context, and call End with what Do
// returned. Do (below) does all of that.
type Tracker struct {
	sink Sink
	now  func() time.Time
	ctx  context.Context
	op   Operation

	mu       sync.Mutex
	pending  []*attempt // failed attempts waiting for their outcome, in answer order
	fallback string     // the model switched to by the attempt being classified
	ended    bool
}

// attempt is an attempt in flight or waiting for its outcome.
type attempt struct {
	ctx context.Context
	a   Attempt
	mu  sync.Mutex // guards a's token counts (SetTokens)
}

// Start begins tracking an operation named id ("" lets the sink name it),
// now. now is the clock the records read (nil: time.Now); give the same
// clock as machine.WithClock, if any.
func Start(ctx context.Context, sink Sink, id string, now func() time.Time) *Tracker {
	if now == nil {
		now = time.Now
	}
	t := &Tracker{sink: sink, now: now, op: Operation{ID: id}}
	t.op.Start = now()
	t.ctx = sink.Start(ctx, &t.op)
	return t
}

// Context is the operation's context: pass it to Do, so that the attempts'
// contexts (and spans) descend from the operation's.
func (t *Tracker) Context() context.Context { return t.ctx }

// ID returns the operation's id.
func (t *Tracker) ID() string { return t.op.ID }

// Wrap returns op reporting each attempt it makes; nil if op is nil (Do
// refuses it).
func (t *Tracker) Wrap(op policies.Operation) policies.Operation {
	if op == nil {
		return nil
	}
	return func(ctx context.Context, pa policies.Attempt) error {
		at := &attempt{a: Attempt{Number: pa.Number, Copy: pa.Copy, Model: pa.Model, Sent: t.now()}}
		t.mu.Lock()
		t.op.Attempts++
		t.mu.Unlock()
		at.ctx = context.WithValue(t.sink.Send(ctx, &t.op, &at.a), attemptKey{}, at)
		err := op(at.ctx, pa)
		answered := t.now()
		at.mu.Lock()
		at.a.Answered, at.a.Err = answered, err
		at.mu.Unlock()
		if err == nil {
			at.a.Outcome, at.a.Classified = policies.Outcome{Class: policies.Success}, true
			t.sink.Answer(at.ctx, &t.op, &at.a)
			return nil
		}
		t.mu.Lock()
		t.pending = append(t.pending, at)
		t.mu.Unlock()
		return err
	}
}

// Hooks returns hooks that tell the tracker what Do decided, then call
// next's.
func (t *Tracker) Hooks(next policies.Hooks) policies.Hooks {
	return policies.Hooks{
		OnFallback: func(e policies.FallbackEvent) {
			t.mu.Lock()
			t.fallback = e.To
			t.mu.Unlock()
			if next.OnFallback != nil {
				next.OnFallback(e)
			}
		},
		OnRetryScheduled: func(e policies.RetryEvent) {
			t.classify(e.Outcome, true, true, e.Delay)
			if next.OnRetryScheduled != nil {
				next.OnRetryScheduled(e)
			}
		},
		OnGiveUp: func(e *policies.Error) {
			t.mu.Lock()
			t.op.GaveUp = e
			t.mu.Unlock()
			t.classify(e.LastOutcome, e.HasOutcome(), false, 0)
			if next.OnGiveUp != nil {
				next.OnGiveUp(e)
			}
		},
	}
}

// classify completes the last answered attempt with its outcome (if
// classified) and what Do chose after it, and reports it; earlier pending
// attempts (hedged copies Do did not use) are reported unclassified.
func (t *Tracker) classify(out policies.Outcome, classified, retry bool, backoff time.Duration) {
	t.mu.Lock()
	pending, fallback := t.pending, t.fallback
	t.pending, t.fallback = nil, ""
	t.mu.Unlock()
	out.Limits = nil
	for i, at := range pending {
		if i == len(pending)-1 {
			at.a.Outcome, at.a.Classified = out, classified
			at.a.Retry, at.a.Backoff, at.a.FallbackTo = retry, backoff, fallback
		}
		t.sink.Answer(at.ctx, &t.op, &at.a)
	}
}

// End ends the operation with err, what Do returned; later calls do
// nothing. Attempts still waiting for an outcome are reported
// unclassified first.
func (t *Tracker) End(err error) {
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		return
	}
	t.ended = true
	t.mu.Unlock()
	t.classify(policies.Outcome{}, false, false, 0)
	t.mu.Lock()
	t.op.End, t.op.Err = t.now(), err
	if t.op.GaveUp == nil && err != nil {
		errors.As(err, &t.op.GaveUp)
	}
	t.mu.Unlock()
	t.sink.End(t.ctx, &t.op)
}

// Do calls policies.Do with op and opts, tracked for sink: the operation's
// records go to sink. Its hooks are added after opts, so they replace any
// that opts set with policies.WithHooks; to keep hooks of your own, use a
// Tracker and pass yours to Hooks.
func Do(ctx context.Context, sink Sink, op policies.Operation, opts ...policies.Option) error {
	t := Start(ctx, sink, "", nil)
	err := policies.Do(t.Context(), t.Wrap(op), append(opts[:len(opts):len(opts)], policies.WithHooks(t.Hooks(policies.Hooks{})))...)
	t.End(err)
	return err
}

type attemptKey struct{}

// SetTokens records the tokens of the attempt whose context ctx is (the
// context a tracked Operation is given): the request's input tokens and the
// response's output tokens, for the attempt's record. It does nothing
// outside a tracked attempt.
func SetTokens(ctx context.Context, input, output int) {
	at, ok := ctx.Value(attemptKey{}).(*attempt)
	if !ok {
		return
	}
	at.mu.Lock()
	at.a.InputTokens, at.a.OutputTokens = max(input, 0), max(output, 0)
	at.mu.Unlock()
}

// Tee returns a Sink that passes every record to each of sinks in order;
// each gets the context the previous one returned.
func Tee(sinks ...Sink) Sink { return tee(sinks) }

type tee []Sink

func (s tee) Start(ctx context.Context, op *Operation) context.Context {
	for _, k := range s {
		ctx = k.Start(ctx, op)
	}
	return ctx
}

func (s tee) Send(ctx context.Context, op *Operation, a *Attempt) context.Context {
	for _, k := range s {
		ctx = k.Send(ctx, op, a)
	}
	return ctx
}

func (s tee) Answer(ctx context.Context, op *Operation, a *Attempt) {
	for _, k := range s {
		k.Answer(ctx, op, a)
	}
}

func (s tee) End(ctx context.Context, op *Operation) {
	for _, k := range s {
		k.End(ctx, op)
	}
}

// Package simlog writes a simulated run's attempt log, in the format of
// package policies/attemptlog ("retrysim/attempt-log/v1"), from the run's
// Observer and the hooks its retry state machine calls.
//
// Simulated time is virtual: a record's times are the run's virtual time
// since its origin, written as instants from the Unix epoch
// (1970-01-01T00:00:00Z is the run's origin, so "1970-01-01T00:00:02.5Z"
// is 2.5 s into the run). The same scenario and seed give the same bytes
// on any machine and GOMAXPROCS: the log follows the run's events in order.
//
// What a simulated record leaves out (docs/attempt-log.md): "error" (a
// simulated rejection is no Go error), "model" and the token counts (the
// run does not report them per attempt), an attempt's "status" on success,
// and an operation's "start" when it completed (the run reports when it
// ended, not when it began; a given-up operation's start is its end less
// its elapsed time). Policies with retry layers or hedging are refused.
package simlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/attemptlog"
	"github.com/retrysim/retrysim/policies/observe"
	"github.com/retrysim/retrysim/sim"
)

// Origin is the instant a simulated run's virtual time 0 is written as.
var Origin = time.Unix(0, 0).UTC()

// ErrUnsupported is returned by Attach for a policy whose runs the log
// cannot follow attempt by attempt.
var ErrUnsupported = errors.New("the attempt log does not follow this policy")

// Recorder writes one run's attempt log.
type Recorder struct {
	h      slog.Handler
	policy string
	ops    map[int]*opState
	last   int       // the operation the next hook call is about
	lastAt time.Time // when it gave up, for the hooks' OnGiveUp
	err    error     // the first write error
}

// opState is what the recorder knows of an operation under way.
type opState struct {
	index    int
	id       string
	attempts int
	cur      observe.Attempt
	pending  bool // cur was answered and is not yet written
	fallback string
}

// Attach sets cfg's Observer and Hooks (replacing any) so that its run
// writes its attempt log to h, each record naming policy. Check Err after
// the run.
func Attach(cfg *sim.Config, policy string, h slog.Handler) (*Recorder, error) {
	if len(cfg.Policy.Layers) > 0 {
		return nil, fmt.Errorf("policy %q has retry layers: %w", cfg.Policy.Name, ErrUnsupported)
	}
	if _, ok := cfg.Policy.MaxHedges(); ok {
		return nil, fmt.Errorf("policy %q hedges: %w", cfg.Policy.Name, ErrUnsupported)
	}
	r := &Recorder{h: h, policy: policy, ops: map[int]*opState{}, last: -1}
	cfg.Observer = sim.Observer{
		OnSend:     r.send,
		OnResponse: r.respond,
		OnComplete: r.complete,
		OnGiveUp:   r.gaveUp,
	}
	cfg.Hooks = policies.Hooks{
		OnFallback:       r.fallback,
		OnRetryScheduled: r.retry,
		OnGiveUp:         r.giveUp,
	}
	return r, nil
}

// Err returns the first error writing the log.
func (r *Recorder) Err() error { return r.err }

// at is virtual time as the log writes it.
func at(d time.Duration) time.Time { return Origin.Add(d) }

func (r *Recorder) op(op int) *opState {
	st := r.ops[op]
	if st == nil {
		st = &opState{index: op, id: strconv.Itoa(op)}
		r.ops[op] = st
	}
	return st
}

func (r *Recorder) send(t time.Duration, op int, _ bool) {
	st := r.op(op)
	st.attempts++
	st.cur = observe.Attempt{Number: st.attempts, Sent: at(t)}
	st.pending = false
}

func (r *Recorder) respond(t time.Duration, op int, class policies.Class) {
	st := r.op(op)
	st.cur.Answered = at(t)
	st.cur.Outcome = policies.Outcome{Class: class}
	st.cur.Classified = true
	st.pending = true
	r.last = op
}

func (r *Recorder) complete(t time.Duration, op int) {
	st := r.op(op)
	r.flush(st)
	r.end(st, &observe.Operation{ID: st.id, End: at(t), Attempts: st.attempts}, false)
}

// gaveUp is the Observer's give-up: it names the operation that the
// hooks' OnGiveUp, right after it, is about.
func (r *Recorder) gaveUp(t time.Duration, op int, _ policies.StopReason) {
	r.last, r.lastAt = op, at(t)
}

func (r *Recorder) fallback(e policies.FallbackEvent) {
	if st := r.ops[r.last]; st != nil {
		st.fallback = e.To
	}
}

func (r *Recorder) retry(e policies.RetryEvent) {
	st := r.ops[r.last]
	if st == nil || !st.pending {
		return
	}
	st.cur.Outcome, st.cur.Retry, st.cur.Backoff = e.Outcome, true, e.Delay
	st.cur.FallbackTo, st.fallback = st.fallback, ""
	r.flush(st)
}

func (r *Recorder) giveUp(e *policies.Error) {
	if r.last < 0 {
		return
	}
	st := r.op(r.last)
	if st.pending && e.HasOutcome() {
		st.cur.Outcome = e.LastOutcome
	}
	r.flush(st)
	op := &observe.Operation{ID: st.id, End: r.lastAt, Attempts: e.Attempts, Err: e, GaveUp: e}
	op.Start = op.End.Add(-e.Elapsed)
	r.end(st, op, true)
}

// flush writes the operation's answered attempt, if not yet written.
func (r *Recorder) flush(st *opState) {
	if !st.pending {
		return
	}
	st.pending = false
	st.cur.Outcome.Limits = nil
	r.write(st.cur.Answered, attemptlog.AttemptAttrs(r.policy, st.id, &st.cur))
}

func (r *Recorder) end(st *opState, op *observe.Operation, withStart bool) {
	r.write(op.End, attemptlog.OperationAttrs(r.policy, op, withStart))
	delete(r.ops, st.index)
	r.last = -1
}

func (r *Recorder) write(t time.Time, attrs []slog.Attr) {
	if r.err != nil {
		return
	}
	rec := slog.NewRecord(t, slog.LevelInfo, "", 0)
	rec.AddAttrs(attrs...)
	r.err = r.h.Handle(context.Background(), rec)
}

package machine

import (
	"errors"
	"math"
	"math/rand/v2"
	"time"
)

// Plan is what every operation of one client (or API key) shares: the
// decision rules, the coordinators, the model fallback and the hooks. Do and
// Transport build one per call from their options; the simulator builds one
// per simulated policy. A Plan is read-only once operations use it; its
// coordinators and fallback carry the shared, changing state.
type Plan struct {
	Policy Policy
	// Coordinators are asked, in order, before every attempt, and told every
	// outcome. At most MaxCoordinators.
	Coordinators []Coordinator
	// Fallback, if set, moves an operation to another model after repeated
	// capacity failures.
	Fallback *ModelFallback
	Hooks    Hooks
}

// MaxCoordinators bounds Plan.Coordinators (an operation keeps one bit per
// coordinator).
const MaxCoordinators = 16

// StepKind says what a driver does next for an operation.
type StepKind uint8

const (
	// StepSend: send an attempt now, to Op.Model.
	StepSend StepKind = iota
	// StepWait: wait Step.Delay, then call Before.
	StepWait
	// StepBlock: a coordinator queued the operation; wait until the Waiter
	// passed to Before is woken, tell the Op with Woken, then call Before.
	StepBlock
	// StepStop: give up (Step.Reason, Step.Cause).
	StepStop
	// StepDone: the operation succeeded.
	StepDone
)

// Step is an operation's next move, as Before and After decide it.
type Step struct {
	Kind StepKind
	// Delay is the wait before the next Before (StepWait); never negative.
	Delay time.Duration
	// Reason and Cause say why the operation stops (StepStop). Cause is nil
	// or an error such as ErrQueueFull.
	Reason StopReason
	Cause  error
}

// Moment is when a driver asks an operation to decide: the time on the
// clock its coordinators share, and the time since the operation started.
type Moment struct {
	Now   time.Time
	Since time.Duration
	// Cutoff, if not zero, is the latest start the driver allows beside the
	// policy's deadline (Do: the instant before the context's deadline). A
	// wait that would end after it is not begun.
	Cutoff time.Time
	// InputTokens and OutputTokens size the attempt the operation would
	// send, when the driver knows it (0: unknown), for coordinators that
	// pace by tokens (Ask).
	InputTokens, OutputTokens int
	// Hedges is how many hedges the operation has sent so far (Op.Hedge
	// said yes), which a driver of a hedging plan counts: they count in
	// Attempts and against MaxAttempts, but the coordinators, the backoff
	// and the hooks see the attempt's number without them.
	Hedges int
}

// Op is the retry state machine of one operation. Both drivers run it: Do
// with the real clock (sleeping and waking goroutines), the simulator with
// virtual time (scheduling events). Neither decides anything itself:
//
//	for {
//		step := op.Before(plan, m, waiter, rng)     // may I send?
//		... wait, block, stop, or send an attempt ...
//		step = op.After(plan, m, outcome, err, rng) // and now?
//		... done, stop, or wait and loop ...
//	}
//
// An Op is small and holds no pointers, so a simulator can keep millions.
// The zero Op is a new operation on the primary model; use Start to apply a
// sticky fallback. Not safe for concurrent use.
type Op struct {
	prev       time.Duration // wait chosen before the previous retry
	attempts   int32         // attempts sent
	capacity   uint16        // capacity failures on the primary, for the fallback (saturates); after a restarting switch (ModelFallback.Restart), the attempt's number at the switch
	lastStatus uint16        // the last observed attempt's status (saturates), for Ask.Last
	passed     uint16        // coordinators that let the pending attempt pass without holding anything
	held       uint16        // coordinators holding something for the pending attempt (or queuing it)
	waited     uint16        // server waits honoured, in ServerWaitUnits (saturates), for TotalServerWaitCap
	stage      uint8         // index of the next coordinator to ask
	flags      uint8         // the flag bits below; above them, the last observed attempt's class (for Ask.Last)
}

// classShift places the last class in flags; classes up to 15 fit.
const classShift = 4

func (o *Op) lastClass() Class { return Class(o.flags >> classShift) }

func (o *Op) setLast(out Outcome) {
	o.flags = o.flags&(1<<classShift-1) | uint8(min(out.Class, 15))<<classShift
	o.lastStatus = uint16(min(max(out.Status, 0), 1<<16-1))
}

const (
	flagFallback  uint8 = 1 << iota // attempts go to the fallback model
	flagResume                      // the op waited for a grant: re-ask the passed coordinators
	flagBlocked                     // queued by coordinator stage; waiting for Woken
	flagUnslotted                   // woken without what it queued for: give the waiter back before anything else
)

// Start prepares a new operation: a sticky fallback that has happened puts
// it on the fallback model from the first attempt.
func (o *Op) Start(p *Plan) {
	*o = Op{}
	if p.Fallback != nil && p.Fallback.StartModel() == p.Fallback.Fallback && p.Fallback.Fallback != p.Fallback.Primary {
		o.flags |= flagFallback
	}
}

// Attempts returns the number of attempts sent, hedges included.
func (o *Op) Attempts() int { return int(o.attempts) }

// number is the pending attempt's number within the operation: the
// attempts sent less the hedges (see Moment.Hedges), at least 1.
func (o *Op) number(m Moment) int { return max(int(o.attempts)-m.Hedges, 1) }

// OnFallback reports whether the operation's attempts go to the fallback model.
func (o *Op) OnFallback() bool { return o.flags&flagFallback != 0 }

// Resuming reports whether the operation waits for something a coordinator
// granted it (a booked throttle slot, a limiter slot): its next Before goes
// on from there rather than from the first coordinator.
func (o *Op) Resuming() bool { return o.flags&flagResume != 0 }

// Model returns the model of the next attempt: the fallback's Primary or
// Fallback, or "" without a fallback.
func (o *Op) Model(p *Plan) string {
	switch {
	case p.Fallback == nil:
		return ""
	case o.OnFallback():
		return p.Fallback.Fallback
	default:
		return p.Fallback.Primary
	}
}

// latest returns the latest start that the policy's deadline and the
// driver's cutoff allow, or the zero time if neither bounds it.
func (p *Plan) latest(m Moment) time.Time {
	var latest time.Time
	if d := p.Policy.Deadline; d > 0 {
		latest = m.Now.Add(d - m.Since)
	}
	if !m.Cutoff.IsZero() && (latest.IsZero() || m.Cutoff.Before(latest)) {
		latest = m.Cutoff
	}
	return latest
}

// startsBy reports whether a start at t is no later than latest (zero: no bound).
func startsBy(t, latest time.Time) bool { return latest.IsZero() || !t.After(latest) }

// Before decides whether the operation may send its next attempt now. It
// asks the coordinators in order; one may hold the attempt (StepWait), queue
// it (StepBlock: w will be woken), or stop it (StepStop). After a wait for a
// grant (a throttle slot, a limiter slot), the coordinators that had simply
// let it pass are asked again: a gate closed meanwhile sends the attempt
// back to wait for it, giving up what it held. On StepSend the attempt
// counts as sent.
func (o *Op) Before(p *Plan, m Moment, w Waiter, rng *rand.Rand) Step {
	if o.flags&flagUnslotted != 0 {
		// Woken without a slot: an UnslottedTracker learns that the wake
		// was seen, and whatever earlier coordinators granted is given
		// back, since the coordinators are asked again from the first.
		o.Abandon(p, m.Now, w)
	}
	if !p.Policy.StartsInTime(m.Since) || !startsBy(m.Now, m.Cutoff) {
		// A negative budget, or a wake-up later than the budget allows.
		o.Abandon(p, m.Now, w)
		return stopStep(StopDeadline, nil)
	}
	if len(p.Coordinators) > 0 {
		if st, ok := o.admit(p, m, w, rng); !ok {
			return st
		}
	}
	if o.attempts == math.MaxInt32 {
		// The counter's limit: an operation makes at most 2^31-1 attempts.
		o.Abandon(p, m.Now, w)
		return stopStep(StopAttempts, nil)
	}
	o.attempts++
	o.stage, o.passed, o.flags = 0, 0, o.flags&^flagResume
	return Step{Kind: StepSend}
}

// admit runs the coordinators for the pending attempt; ok means send now.
func (o *Op) admit(p *Plan, m Moment, w Waiter, rng *rand.Rand) (Step, bool) {
	ask := Ask{Latest: p.latest(m), Waiter: w, Retry: o.attempts > 0, Rand: rng, Last: o.last(),
		InputTokens: m.InputTokens, OutputTokens: m.OutputTokens}
	if o.flags&flagResume != 0 {
		o.flags &^= flagResume
		for i := range int(o.stage) {
			if o.passed&(1<<i) == 0 {
				continue
			}
			switch a := p.Coordinators[i].Admit(m.Now, ask); a.Kind {
			case AdmitPass:
			case AdmitHold:
				o.releaseAll(p, m.Now, w, false, Outcome{})
				return o.hold(p, m, a, rng), false
			default:
				// Only Pass and Hold are expected from a coordinator that
				// passed before; anything else ends the attempt's claim.
				o.releaseAll(p, m.Now, w, false, Outcome{})
				if a.Kind == AdmitDeny {
					return stopStep(a.Reason, a.Cause), false
				}
				return Step{Kind: StepWait}, false
			}
		}
	}
	for int(o.stage) < len(p.Coordinators) {
		i := o.stage
		a := p.Coordinators[i].Admit(m.Now, ask)
		switch a.Kind {
		case AdmitPass:
			o.passed |= 1 << i
			o.stage++
		case AdmitHold:
			o.releaseAll(p, m.Now, w, false, Outcome{})
			return o.hold(p, m, a, rng), false
		case AdmitGrant:
			o.held |= 1 << i
			o.stage++
			if a.At.After(m.Now) {
				o.flags |= flagResume
				return Step{Kind: StepWait, Delay: a.At.Sub(m.Now)}, false
			}
		case AdmitBlock:
			o.held |= 1 << i
			o.flags |= flagBlocked
			return Step{Kind: StepBlock}, false
		case AdmitDeny:
			o.releaseAll(p, m.Now, w, false, Outcome{})
			return stopStep(a.Reason, a.Cause), false
		}
	}
	return Step{}, true
}

// hold is the step for a coordinator that says "not before a.At": wait for
// it, or stop now (with a.Cause) if that is later than the operation may
// start. Policy.ServerWaitJitter spreads the operations it releases.
func (o *Op) hold(p *Plan, m Moment, a Admission, rng *rand.Rand) Step {
	o.stage, o.passed, o.flags = 0, 0, o.flags&^flagResume
	if !startsBy(a.At, p.latest(m)) {
		return stopStep(StopDeadline, a.Cause)
	}
	return Step{Kind: StepWait, Delay: max(a.At.Sub(m.Now), 0) + p.Policy.serverWaitJitter(rng)}
}

// Woken tells the operation that the coordinator that blocked it woke it:
// granted says whether it now holds what it queued for. If not (its latest
// start passed while it queued), the next Before (or Abandon) gives the
// waiter back to that coordinator if it is an UnslottedTracker, and what
// earlier coordinators granted the attempt to them; the operation normally
// stops there.
func (o *Op) Woken(granted bool) {
	if o.flags&flagBlocked == 0 {
		return
	}
	o.flags &^= flagBlocked
	if !granted {
		o.flags |= flagUnslotted
		return
	}
	o.stage++
	o.flags |= flagResume
}

// Abandon gives back whatever the coordinators hold for the pending attempt
// (a grant, or a place in a queue), e.g. when the caller cancels while the
// operation waits. The operation may call Before again afterwards.
func (o *Op) Abandon(p *Plan, now time.Time, w Waiter) {
	o.dropUntracked(p)
	o.releaseAll(p, now, w, false, Outcome{})
	o.stage, o.passed = 0, 0
	o.flags &^= flagResume | flagBlocked | flagUnslotted
}

// dropUntracked ends, without a Release, the hold of a coordinator that
// woke the operation without a grant and does not track such waiters (see
// UnslottedTracker): it holds nothing for the operation.
func (o *Op) dropUntracked(p *Plan) {
	if o.flags&flagUnslotted == 0 {
		return
	}
	if _, ok := p.Coordinators[o.stage].(UnslottedTracker); !ok {
		o.held &^= 1 << o.stage
	}
}

// last is the outcome of the last observed attempt, as Ask.Last tells it.
func (o *Op) last() Outcome { return Outcome{Class: o.lastClass(), Status: int(o.lastStatus)} }

// releaseAll gives back every coordinator's hold on the pending attempt
// (Settle for a Settler, Release otherwise); out is the attempt's outcome
// when sent. The waiter is passed on only while the operation is queued or
// was woken without a slot, so that a coordinator looks for it only when it
// can know it.
func (o *Op) releaseAll(p *Plan, now time.Time, w Waiter, sent bool, out Outcome) {
	if o.flags&(flagBlocked|flagUnslotted) == 0 {
		w = nil
	}
	o.flags &^= flagUnslotted
	for i := 0; o.held != 0; i++ {
		if o.held&(1<<i) != 0 {
			o.held &^= 1 << i
			if s, ok := p.Coordinators[i].(Settler); ok {
				// The last outcome is still the one before the attempt:
				// After records the attempt's own only after this.
				s.Settle(now, Settlement{Waiter: w, Retry: o.lastClass() != Success, Last: o.last(), Sent: sent, Outcome: out})
				continue
			}
			p.Coordinators[i].Release(now, w, sent)
		}
	}
}

// After decides what follows an attempt's outcome: StepDone on success,
// otherwise StepWait (the backoff before the next Before) or StepStop. Every
// coordinator is told the outcome first (a gate is pushed before a limiter
// slot is given back, so no queued operation starts in between). err is the
// attempt's error, passed to the hooks (nil in the simulator). A failure
// classified as Success counts as Terminal: a failed attempt cannot succeed.
func (o *Op) After(p *Plan, m Moment, out Outcome, failed bool, err error, rng *rand.Rand) Step {
	if failed && out.Class == Success {
		out.Class = Terminal
	}
	n := o.number(m)
	for _, c := range p.Coordinators {
		c.Observe(m.Now, n, out)
	}
	o.releaseAll(p, m.Now, nil, true, out)
	out.Limits = nil // for the coordinators only: the hooks do not see it (see Outcome.Limits)
	o.setLast(out)
	if !failed {
		return Step{Kind: StepDone}
	}
	switch {
	case o.OnFallback(): // the count has done its work (and may hold the restart)
	case out.Class == Capacity && o.capacity < ^uint16(0):
		o.capacity++
	case out.Class != Capacity && p.Fallback != nil && p.Fallback.Consecutive:
		o.capacity = 0
	}
	var d Decision
	var honoured time.Duration
	restart := o.restarts(p, out)
	if !restart {
		sent, number := int(o.attempts), n
		if f := p.Fallback; f != nil && f.Restart && o.OnFallback() {
			sent, number = sent-int(o.capacity), number-int(o.capacity)
		}
		d, honoured = p.Policy.next(sent, number, o.prev, m.Since, int64(o.waited), out, rng)
	}
	if dl := p.Policy.Deadline; d.Stop == NotStopped && dl > 0 && m.Since >= dl {
		// The budget is spent: even a retry with no wait would have no
		// time to run (and with no time passing, it would loop).
		d.Stop = StopDeadline
	}
	if d.Stop == NotStopped && !startsBy(m.Now.Add(d.Delay), m.Cutoff) {
		d.Stop = StopDeadline // the driver's cutoff would pass before the wait ends
	}
	if d.Stop != NotStopped {
		return stopStep(d.Stop, d.Cause)
	}
	o.prev = d.Delay
	if honoured > 0 {
		o.waited = uint16(min(int64(o.waited)+waitUnits(honoured), 1<<16-1))
	}
	if restart {
		o.capacity = uint16(min(n, 1<<16-1))
	}
	if f := p.Fallback; restart || out.Class == Capacity && f != nil && !f.Restart && !o.OnFallback() && f.ShouldSwitch(f.Primary, int(o.capacity)) {
		o.flags |= flagFallback
		if h := p.Hooks.OnFallback; h != nil {
			h(FallbackEvent{Attempt: n, From: f.Primary, To: f.Fallback})
		}
	}
	if h := p.Hooks.OnRetryScheduled; h != nil {
		h(RetryEvent{Attempt: n, Outcome: out, Delay: d.Delay, Err: err})
	}
	return Step{Kind: StepWait, Delay: d.Delay}
}

// restarts reports whether this failure switches the operation to a
// restarting fallback (ModelFallback.Restart): the retries start again on
// the fallback model, whose first attempt is sent at once, even when the
// primary's attempts are spent. A failure the policy never retries does
// not switch.
func (o *Op) restarts(p *Plan, out Outcome) bool {
	f := p.Fallback
	return f != nil && f.Restart && out.Class == Capacity && !o.OnFallback() && !p.Policy.stops(out) &&
		f.ShouldSwitch(f.Primary, int(o.capacity))
}

// ErrBudgetEnded is the cause of a StopDeadline when the operation's budget
// (Policy.Deadline) ended while an attempt was in flight: the attempt is
// cut short there, so the budget bounds the whole operation, not only when
// attempts start.
var ErrBudgetEnded = errors.New("the budget ended during the attempt")

// Expire ends an attempt that the budget cut short (see ErrBudgetEnded):
// every coordinator is told it timed out (Transient, no status), what it
// held is given back, and the operation stops with StopDeadline.
func (o *Op) Expire(p *Plan, m Moment) Step {
	out := Outcome{Class: Transient}
	for _, c := range p.Coordinators {
		c.Observe(m.Now, o.number(m), out)
	}
	o.releaseAll(p, m.Now, nil, true, out)
	o.setLast(out)
	return stopStep(StopDeadline, ErrBudgetEnded)
}

// stopStep is the step that gives up for reason (and cause).
func stopStep(reason StopReason, cause error) Step {
	return Step{Kind: StepStop, Reason: reason, Cause: cause}
}

// GiveUp builds the error for a StepStop and tells the OnGiveUp hook, the
// same way in both drivers. last and lastOut are the last attempt's error
// and outcome, if any was classified (hasOut).
func (o *Op) GiveUp(p *Plan, st Step, since time.Duration, last error, lastOut Outcome) *Error {
	e := &Error{Reason: st.Reason, Attempts: int(o.attempts), Last: last, LastOutcome: lastOut, Cause: st.Cause, Elapsed: since}
	if h := p.Hooks.OnGiveUp; h != nil {
		h(e)
	}
	return e
}

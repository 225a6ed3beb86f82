package machine

import (
	"math/rand/v2"
	"time"
)

// Coordinator is state shared by the operations of one client or API key
// (a gate, a throttle, an in-flight limit, retry budgets, a circuit breaker,
// adaptive throttling). Every operation asks it before each attempt (Admit) and tells
// it each outcome (Observe). Time is always passed in: production passes the
// real clock, the simulator virtual time mapped onto time.Time. A
// Coordinator used by Do must be safe for concurrent use; the simulator
// calls it from one goroutine.
type Coordinator interface {
	// Admit decides whether the operation may start an attempt at now.
	Admit(now time.Time, a Ask) Admission
	// Observe is told the outcome of every attempt of every operation that
	// shares the coordinator; attempt is its number within its operation,
	// from 1.
	Observe(now time.Time, attempt int, out Outcome)
	// Release gives back what an AdmitGrant or AdmitBlock holds for the
	// waiter's attempt: after its outcome was observed (sent), or unused.
	Release(now time.Time, w Waiter, sent bool)
}

// Ask is what an operation tells a coordinator when it asks to start.
type Ask struct {
	// Latest is the latest start the operation accepts; zero means no bound.
	Latest time.Time
	// Waiter wakes the operation if the coordinator queues it (AdmitBlock).
	Waiter Waiter
	// Retry is true for every attempt but an operation's first.
	Retry bool
	// Rand is the operation's random source, for coordinators that draw.
	Rand *rand.Rand
	// Last is the Class and Status of the operation's previous attempt
	// (its ServerWait is not kept; a Status beyond 65535 reads 65535); the
	// zero Outcome for a first attempt. A retry budget prices a retry by it.
	Last Outcome
	// InputTokens and OutputTokens size the attempt (Moment's); 0 when
	// the driver does not know.
	InputTokens, OutputTokens int
}

// A Settler is a Coordinator that needs to know, when what it granted an
// attempt (AdmitGrant) is given back, which attempt that was and how it
// ended: a retry budget refunds what the attempt paid, a circuit breaker
// judges its probe. For a Settler the Op calls Settle in place of Release.
type Settler interface {
	Coordinator
	Settle(now time.Time, s Settlement)
}

// Settlement is what the Op tells a Settler when it gives back a grant.
type Settlement struct {
	// Waiter is the operation's waiter, as Release gets it (nil after an
	// observed attempt).
	Waiter Waiter
	// Retry and Last are what Ask.Retry and Ask.Last said when the grant
	// was made.
	Retry bool
	Last  Outcome
	// Sent reports whether the attempt's outcome was observed; Outcome is
	// that outcome (Class Success for a success). When Sent is false the
	// grant went unused (a later coordinator stopped or held the attempt,
	// or the operation was abandoned).
	Sent    bool
	Outcome Outcome
}

// A CopyAdmitter is a Coordinator that counts requests on the wire, not
// attempts: each hedge of an attempt (Op.Hedge) is one more request, so it
// is admitted as the request it is. Before a hedge is sent, Op.Hedge asks
// every CopyAdmitter of the plan, in order, with the Ask its attempt would
// make; AdmitCopy takes the copy's share and reports true if the copy may go
// now, or reports false and takes nothing (a copy is never held, booked or
// queued: refused, it is simply not sent, and the attempt asks for no
// more hedges). What an earlier CopyAdmitter took for a copy that a later
// one refuses is not given back, as for an attempt (put the Pacer last).
// The coordinators still observe one outcome per attempt and hold what
// they granted the attempt's first copy until its outcome.
//
// Pacer, Throttle, CubicRate and Gate are CopyAdmitters; coordinators that
// count attempts or operations (Limiter, the retry budgets, Breaker,
// AdaptiveThrottle) let hedges share their attempt's admission.
type CopyAdmitter interface {
	Coordinator
	AdmitCopy(now time.Time, a Ask) bool
}

// An UnslottedTracker is a Coordinator that queues operations (AdmitBlock)
// and remembers each waiter it woke without a grant until the Op gives it
// back with Release(now, waiter, false); it then frees nothing. Only the
// coordinator, under its own lock, knows which wake it sent, so a driver
// that abandons the operation before it saw the wake (Do, when the budget
// timer wins the race) cannot make it free someone else's slot. For a
// blocking coordinator that is not one, a wake without a grant ends its
// hold at once and no Release follows, as before. Limiter is one.
type UnslottedTracker interface {
	Coordinator
	TracksUnslotted()
}

// Waiter wakes an operation that a coordinator queued. Wake may be called
// from another goroutine (in production, the one whose attempt freed the
// slot); granted says whether the operation now holds what it queued for.
// It must not block.
type Waiter interface {
	Wake(now time.Time, granted bool)
}

// AdmitKind is a coordinator's answer to Ask.
type AdmitKind uint8

const (
	// AdmitPass lets the attempt through and records nothing: asking again
	// is harmless (an open gate).
	AdmitPass AdmitKind = iota
	// AdmitHold says "not before At": the operation waits, then asks every
	// coordinator again from the first. Nothing is recorded. If At is too
	// late for the operation, it stops (StopDeadline) with Cause.
	AdmitHold
	// AdmitGrant admits the attempt to start at At (now or later) and holds
	// something for it (a throttle slot, a limiter slot) until Release.
	AdmitGrant
	// AdmitBlock queues the operation; Ask.Waiter will be woken. Release
	// must be called if the operation stops waiting or, once granted, after
	// the attempt. A waiter woken without a grant holds nothing; see
	// UnslottedTracker for a coordinator that wants it given back.
	AdmitBlock
	// AdmitDeny stops the operation: Reason, Cause.
	AdmitDeny
)

// Admission is a coordinator's answer.
type Admission struct {
	Kind   AdmitKind
	At     time.Time // AdmitHold, AdmitGrant
	Reason StopReason
	Cause  error // AdmitDeny; for AdmitHold, the cause if the hold stops the operation
}

// Spec configures one kind of Coordinator: it checks its settings and
// builds a fresh coordinator with them, one per run (in the simulator) or
// per API key (in production). A policy lists its specs in the order its
// operations ask the coordinators they build.
type Spec interface {
	Validate() error
	NewCoordinator() (Coordinator, error)
}

// A Stopper is a Spec whose coordinator stops operations locally, without
// sending their attempt, for Stops: a report shows give-ups for that
// reason only for policies that can give them.
type Stopper interface {
	Spec
	Stops() StopReason
}

// A Queuer is a Spec whose coordinator queues operations (AdmitBlock): a
// driver must give each operation of such a plan a Waiter.
type Queuer interface {
	Spec
	Queues() bool
}

// A Rescaler is a Spec whose durations can be mapped onto another clock
// (a server that runs model time faster than real time): Rescale returns
// the spec with every duration passed through f.
type Rescaler interface {
	Spec
	Rescale(f func(time.Duration) time.Duration) Spec
}

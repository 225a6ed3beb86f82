package machine

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Class sorts an attempt's outcome by what waiting can achieve.
type Class uint8

const (
	Success    Class = iota // the attempt did what was asked
	RetryAfter              // rate limited; the server said how long to wait
	Capacity                // the server is overloaded (529, 503)
	Transient               // a fault that may pass (500, 504, timeouts, resets)
	Terminal                // waiting cannot help (400, 401, spend cap, ...)
)

var classNames = [...]string{"success", "retry-after", "capacity", "transient", "terminal"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", c)
}

// Outcome is what one attempt returned.
type Outcome struct {
	Class Class
	// Status is the HTTP status, or 0 when there was none.
	Status int
	// ServerWait is the wait the server asked for (retry-after); 0 when it
	// gave none. A retry never starts sooner than this.
	ServerWait time.Duration
	// Hint is the server's x-should-retry where the class and status do
	// not already say it (see RetriedBySDK): ClassifyResponse sets it only
	// for a 429 with x-should-retry: false, which the SDKs do not retry
	// although their status rule would. NoHint otherwise.
	Hint Hint
	// Limits, if not nil, is what the response said of its key's rate
	// limits (ClassifyResponse reads the headers; the simulator's
	// rate-limit model gives them on every response, a success's too).
	// It is for the coordinators (Observe, Settle), and valid only during
	// the call it is passed to: a coordinator copies what it keeps. The
	// hooks and an *Error's LastOutcome never carry it.
	Limits *RateLimits
}

// Hint is an x-should-retry header that an Outcome's class and status do
// not imply.
type Hint uint8

const (
	NoHint      Hint = iota // nothing beyond the class and status
	HintNoRetry             // x-should-retry: false
	HintRetry               // x-should-retry: true
)

// MidStream reports whether o is a failure inside a successful (2xx)
// response: the SSE error event of a stream that began with HTTP 200.
func (o Outcome) MidStream() bool {
	return o.Class != Success && o.Status >= 200 && o.Status < 300
}

// RetriedBySDK reports whether the official Anthropic and OpenAI SDKs retry
// a failed response with this outcome, by their rule: x-should-retry, where
// the server sends it, decides; otherwise they retry 408, 409, 429 and every
// status >= 500, whatever the body says (so a spend-limit 429 is retried),
// and a request that got no response (Status 0: a connection error or a
// timeout) unless its class is Terminal (the caller's cancellation, a
// certificate that does not verify, an error of the operation's own). The
// headers are those Render writes for o. A failure inside a 2xx response
// (MidStream) is not one this rule sees: the SDKs raise it after their
// retry loop (see Policy.NoMidStreamRetries).
func (o Outcome) RetriedBySDK() bool {
	switch {
	case o.Hint != NoHint:
		return o.Hint == HintRetry
	case o.Status == 0:
		return o.Class != Terminal
	}
	status, hint := wireStatus(o)
	if hint != NoHint {
		return hint == HintRetry
	}
	return retriedStatus(status)
}

// StopReason says why an operation stopped trying.
type StopReason uint8

const (
	NotStopped      StopReason = iota // the operation goes on (or succeeded)
	StopAttempts                      // the maximum number of attempts was sent
	StopDeadline                      // the next attempt would start after the deadline
	StopTerminal                      // the last outcome was terminal
	StopQueueFull                     // a shared throttle's or limiter's wait queue was full
	StopCancelled                     // the caller's context was cancelled or its deadline passed
	StopBudget                        // a retry budget shared across operations could not pay for the retry
	StopThrottled                     // adaptive throttling rejected the attempt locally; it was not sent
	StopCircuitOpen                   // a circuit breaker was open (or its half-open probes taken); not sent
)

// NumStopReasons is the number of StopReason values, for arrays indexed by reason.
const NumStopReasons = int(StopCircuitOpen) + 1

var stopNames = [...]string{"none", "attempts", "deadline", "terminal", "queue_full", "cancelled", "budget", "throttled", "circuit_open"}

func (r StopReason) String() string {
	if int(r) < len(stopNames) {
		return stopNames[r]
	}
	return fmt.Sprintf("stop(%d)", r)
}

// Policy decides what one operation does after a failed attempt. It holds no
// state of its own: the same Policy value serves any number of operations.
type Policy struct {
	// Backoff gives the wait before each retry.
	Backoff Backoff
	// MaxAttempts bounds the attempts of one operation, the first included;
	// 0 means no bound of its own, but an Op stops (StopAttempts) after
	// 2^31−1 attempts, the most it counts.
	MaxAttempts int
	// Deadline bounds an operation's time from its start: an attempt that
	// would start after it is not sent. 0 means no deadline; a negative
	// Deadline is already spent (no attempt starts in time).
	Deadline time.Duration
	// AttemptTimeout, if > 0, bounds each attempt: the client stops waiting
	// for the response after it and counts the attempt as Transient (a
	// timeout), to be retried like any other. 0 means none.
	AttemptTimeout time.Duration
	// StreamIdleTimeout, if > 0, ends an attempt whose streamed answer
	// goes that long without a content event (pings do not count), and
	// StreamFirstByteTimeout (StreamIdleTimeout if 0) one whose first
	// content event does not come that soon after the send: the stream
	// watchdog (see StreamTimeline). In Do the Operation reports content
	// events with ContentEvent. 0 and 0 mean none.
	StreamIdleTimeout      time.Duration
	StreamFirstByteTimeout time.Duration
	// A server-given wait (retry-after) is honoured exactly: it replaces the
	// backoff's draw. ServerWaitJitter, if > 0, adds a uniform draw from
	// [0, ServerWaitJitter) to it, and to every hold of a shared gate, so
	// that workers released together do not all return in one instant.
	ServerWaitJitter time.Duration
	// AtLeastBackoff makes a server wait only a floor: the wait is
	// max(backoff draw, server wait), with no jitter added.
	AtLeastBackoff bool
	// What a policy does with a server wait longer than a bound; at most
	// one of the three is set (> 0). IgnoreServerWaitAbove ignores it: the
	// backoff alone sets the wait (as the Anthropic Python SDK does above
	// 60 s). ClampServerWait waits that long instead. FailServerWaitAbove
	// stops the operation (StopDeadline, with a *ServerWaitError), as a
	// client does that raises the error rather than wait so long.
	IgnoreServerWaitAbove time.Duration
	ClampServerWait       time.Duration
	FailServerWaitAbove   time.Duration
	// TotalServerWaitCap, if > 0, bounds the server waits one operation
	// honours in total (Portkey's gateway: 60 s), after the rules above
	// (an ignored wait counts nothing, a clamped one its clamp): a wait
	// that would take the total past it stops the operation (StopDeadline,
	// with a *ServerWaitError), as FailServerWaitAbove does. The waits the
	// server asked count, not the jitter or backoff added to them; an Op
	// sums them in whole ServerWaitUnits, rounded up. At most
	// MaxTotalServerWaitCap.
	TotalServerWaitCap time.Duration
	// NoCapacityRetries makes a capacity failure (529, 503, a mid-stream
	// overload) end the operation, as a terminal one does (StopTerminal):
	// work that can wait, such as an agent CLI's background tasks, adds no
	// load to an overloaded service. Other failures retry as before.
	NoCapacityRetries bool
	// NoMidStreamRetries makes a failure inside a 2xx response (an SSE
	// error event after HTTP 200, Outcome.MidStream) end the operation
	// (StopTerminal), whatever its class: the official SDKs raise it while
	// the caller iterates, after their retry loop, so they never retry it.
	NoMidStreamRetries bool
	// RetryByStatus replaces the class rule (Terminal is not retried, the
	// rest is) by the SDKs' status rule, Outcome.RetriedBySDK: a failed
	// response that rule does not retry ends the operation (StopTerminal),
	// and one it retries is retried whatever its class, a spend-limit 429
	// too. A failure inside a 2xx response still follows the class rule
	// and NoMidStreamRetries.
	RetryByStatus bool
	// RetryOn, if set, replaces both rules above (class and status) by
	// its own: only what it lists is retried (see RetryOn), a failure
	// inside a 2xx response too. NoMidStreamRetries and NoCapacityRetries
	// still stop what they stop.
	RetryOn RetryOn
}

// Decision is what a Policy says after a failed attempt.
type Decision struct {
	// Stop is NotStopped when the operation should try again.
	Stop StopReason
	// Cause, if not nil, says more about Stop (a *ServerWaitError).
	Cause error
	// Delay is the wait from now before the next attempt; never negative.
	// Meaningful only when Stop is NotStopped.
	Delay time.Duration
}

// Next decides after a failed attempt. attempts is the number sent so far
// (the failed one included), prev the wait chosen before the previous retry
// (0 if none), elapsed the time from the operation's start to now, when the
// failed response arrived. rng is drawn from only if a retry is possible.
// The wait is the server's (out.ServerWait, plus jitter) if it gave one,
// else the backoff's draw; see AtLeastBackoff.
//
// Next knows no earlier server waits: it applies TotalServerWaitCap to this
// one alone. Op sums them across the operation.
func (p Policy) Next(attempts int, prev, elapsed time.Duration, out Outcome, rng *rand.Rand) Decision {
	d, _ := p.next(attempts, attempts, prev, elapsed, 0, out, rng)
	return d
}

// ServerWaitUnit is the unit in which an Op sums the server waits it
// honoured, for TotalServerWaitCap; each wait is rounded up to it.
const ServerWaitUnit = 10 * time.Millisecond

// MaxTotalServerWaitCap is the largest TotalServerWaitCap: an Op keeps its
// sum in 16 bits of ServerWaitUnits (about 11 minutes).
const MaxTotalServerWaitCap = (1<<16 - 1) * ServerWaitUnit

// waitUnits is w in ServerWaitUnits, rounded up and saturated at 16 bits.
func waitUnits(w time.Duration) int64 {
	return int64(min((max(w, 0)+ServerWaitUnit-1)/ServerWaitUnit, 1<<16-1))
}

// next is Next given the server waits the operation honoured so far
// (waited, in ServerWaitUnits); it also returns the server wait this
// decision honours (0 if none), which counts towards TotalServerWaitCap.
//
// sent counts the attempts sent, hedges included (for MaxAttempts); number
// is the failed attempt's number within the operation, hedges not counted
// (for the backoff).
func (p Policy) next(sent, number int, prev, elapsed time.Duration, waited int64, out Outcome, rng *rand.Rand) (Decision, time.Duration) {
	if p.stops(out) {
		return Decision{Stop: StopTerminal}, 0
	}
	if p.MaxAttempts > 0 && sent >= p.MaxAttempts {
		return Decision{Stop: StopAttempts}, 0
	}
	switch w := out.ServerWait; {
	case p.IgnoreServerWaitAbove > 0 && w > p.IgnoreServerWaitAbove:
		out.ServerWait = 0
	case p.ClampServerWait > 0 && w > p.ClampServerWait:
		out.ServerWait = p.ClampServerWait
	case p.FailServerWaitAbove > 0 && w > p.FailServerWaitAbove:
		return Decision{Stop: StopDeadline, Cause: &ServerWaitError{Wait: w, Limit: p.FailServerWaitAbove}}, 0
	}
	if out.ServerWait > MaxServerWait {
		return Decision{Stop: StopDeadline, Cause: &ServerWaitError{Wait: out.ServerWait, Limit: MaxServerWait}}, 0
	}
	if c := p.TotalServerWaitCap; c > 0 && out.ServerWait > 0 && waited+waitUnits(out.ServerWait) > waitUnits(c) {
		return Decision{Stop: StopDeadline, Cause: &ServerWaitError{Wait: out.ServerWait, Limit: c, Total: true}}, 0
	}
	var delay time.Duration
	if out.ServerWait > 0 && !p.AtLeastBackoff {
		delay = out.ServerWait + p.serverWaitJitter(rng)
	} else {
		delay = max(p.Backoff.Delay(number-1, prev, rng), out.ServerWait, 0)
	}
	if !p.StartsInTime(elapsed + delay) {
		return Decision{Stop: StopDeadline}, 0
	}
	return Decision{Delay: delay}, out.ServerWait
}

// stops reports whether the outcome ends the operation whatever the
// attempts and time left (StopTerminal).
func (p Policy) stops(out Outcome) bool {
	switch {
	case out.MidStream() && p.NoMidStreamRetries:
		return true
	case !p.RetryOn.IsZero():
		if !p.RetryOn.Retries(out) {
			return true
		}
	case p.RetryByStatus && !out.MidStream():
		if !out.RetriedBySDK() {
			return true
		}
	case out.Class == Terminal:
		return true
	}
	return out.Class == Capacity && p.NoCapacityRetries
}

// serverWaitJitter draws the jitter added to a server-given wait.
func (p Policy) serverWaitJitter(rng *rand.Rand) time.Duration {
	if p.ServerWaitJitter <= 0 {
		return 0
	}
	return time.Duration(rng.Int64N(int64(p.ServerWaitJitter)))
}

// StartsInTime reports whether an attempt may start at the given time from
// the operation's start: at or before the deadline. With no deadline (0)
// every time is in time; with a negative one none is.
func (p Policy) StartsInTime(sinceStart time.Duration) bool {
	return p.Deadline == 0 || p.Deadline > 0 && sinceStart <= p.Deadline
}

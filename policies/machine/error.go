package machine

import (
	"fmt"
	"time"
)

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
	// error for StopCancelled, ErrQueueFull, ErrLimitQueueFull, ErrTooLate,
	// ErrBudgetEnded, a *GateClosedError, a *ServerWaitError,
	// ErrRetryBudget, ErrThrottled or ErrCircuitOpen; otherwise nil.
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

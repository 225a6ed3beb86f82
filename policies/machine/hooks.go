package machine

import "time"

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

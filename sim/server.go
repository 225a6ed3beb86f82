package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// Distribution gives a duration per request, e.g. a response time.
type Distribution interface {
	// Sample returns a duration >= 0, drawing from rng if it needs to.
	Sample(rng *rand.Rand) time.Duration
}

// Fixed is a Distribution that always returns the same duration.
type Fixed time.Duration

// Sample returns the fixed duration.
func (f Fixed) Sample(*rand.Rand) time.Duration { return time.Duration(f) }

// Rejection is the outcome of a request the server does not admit.
type Rejection struct {
	Status     int            // HTTP status, e.g. 529
	Class      policies.Class // how clients should read it
	RetryAfter time.Duration  // server-given wait; 0 for none
}

// Outcome returns the rejection as a client sees it.
func (r Rejection) Outcome() policies.Outcome {
	return policies.Outcome{Class: r.Class, Status: r.Status, ServerWait: r.RetryAfter}
}

// Phase is one stretch of the server's capacity.
type Phase struct {
	// Duration is the phase's length; 0 in the last phase means "forever".
	Duration time.Duration
	// Admit is the most requests admitted per Window; 0 rejects everything.
	Admit int
	// Window is the admission window's length. Windows are aligned to
	// multiples of Window from t = 0. Unused when Admit is 0.
	Window time.Duration
	// Reject is the outcome of every request not admitted.
	Reject Rejection
}

// CapacityWindows is a server whose capacity changes by phase. Admission is
// decided when a request arrives; every response, admitted or rejected,
// arrives ResponseTime later.
type CapacityWindows struct {
	Phases       []Phase
	ResponseTime Distribution
}

// Validate reports the first problem that would make the model meaningless.
func (s *CapacityWindows) Validate() error {
	if len(s.Phases) == 0 {
		return fmt.Errorf("server needs at least one phase")
	}
	if s.ResponseTime == nil {
		return fmt.Errorf("server needs a response time")
	}
	for i, p := range s.Phases {
		switch {
		case p.Duration < 0:
			return fmt.Errorf("phase %d: negative duration %v", i, p.Duration)
		case p.Duration == 0 && i != len(s.Phases)-1:
			return fmt.Errorf("phase %d: only the last phase may last forever (duration 0)", i)
		case p.Admit < 0:
			return fmt.Errorf("phase %d: negative admit %d", i, p.Admit)
		case p.Admit > 0 && p.Window <= 0:
			return fmt.Errorf("phase %d: admitting requests needs a window > 0", i)
		case p.Reject.Class == policies.Success:
			return fmt.Errorf("phase %d: a rejection cannot be a success", i)
		}
	}
	return nil
}

// NewServer returns the admission state of one run.
func (s *CapacityWindows) NewServer(rng *rand.Rand) Server {
	return &windowsState{model: s, rng: rng, phaseEnd: s.Phases[0].Duration, window: -1}
}

// windowsState is the per-run admission state of a CapacityWindows server.
type windowsState struct {
	model    *CapacityWindows
	phase    int           // index of the current phase
	phaseEnd time.Duration // when the current phase ends; unused in the last
	window   int64         // index of the current admission window
	admitted int           // requests admitted in the current window
	rng      *rand.Rand
}

// Arrive decides a request arriving at now; the last phase holds forever.
// Both models share the capacity: the fallback model has no windows of its own.
func (s *windowsState) Arrive(now time.Duration, _ Request) Response {
	last := len(s.model.Phases) - 1
	for s.phase < last && now >= s.phaseEnd {
		s.phase++
		s.phaseEnd += s.model.Phases[s.phase].Duration
		s.window, s.admitted = -1, 0
	}
	p := &s.model.Phases[s.phase]
	at := now + s.model.ResponseTime.Sample(s.rng)
	if p.Admit == 0 {
		return Response{Outcome: p.Reject.Outcome(), At: at}
	}
	if w := int64(now / p.Window); w != s.window {
		s.window, s.admitted = w, 0
	}
	if s.admitted < p.Admit {
		s.admitted++
		return Response{At: at}
	}
	return Response{Outcome: p.Reject.Outcome(), At: at}
}

package sim

import (
	"fmt"
	"io"
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
	// FallbackPhases, if set, is the fallback model's own capacity:
	// requests to it (Request.Fallback) are admitted by these windows
	// instead of sharing Phases with the primary model.
	FallbackPhases []Phase
}

// Validate reports the first problem that would make the model meaningless.
func (s *CapacityWindows) Validate() error {
	if len(s.Phases) == 0 {
		return fmt.Errorf("server needs at least one phase")
	}
	if s.ResponseTime == nil {
		return fmt.Errorf("server needs a response time")
	}
	if err := validatePhases(s.Phases); err != nil {
		return err
	}
	if s.FallbackPhases != nil {
		if err := validatePhases(s.FallbackPhases); err != nil {
			return fmt.Errorf("fallback model: %w", err)
		}
	}
	return nil
}

// validatePhases checks one model's phases.
func validatePhases(phases []Phase) error {
	if len(phases) == 0 {
		return fmt.Errorf("server needs at least one phase")
	}
	for i, p := range phases {
		switch {
		case p.Duration < 0:
			return fmt.Errorf("phase %d: negative duration %v", i, p.Duration)
		case p.Duration == 0 && i != len(phases)-1:
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
	st := &windowsState{model: s, rng: rng, responseTime: forRun(s.ResponseTime), primary: newAdmission(s.Phases)}
	st.fallback = &st.primary
	if s.FallbackPhases != nil {
		fb := newAdmission(s.FallbackPhases)
		st.fallback = &fb
	}
	return st
}

// windowsState is the per-run admission state of a CapacityWindows server.
type windowsState struct {
	model        *CapacityWindows
	responseTime Distribution // forRun(model.ResponseTime)
	primary      admission
	fallback     *admission // &primary when the models share the capacity
	rng          *rand.Rand
}

// admission is the admission state of one model's phases.
type admission struct {
	phases   []Phase
	phase    int           // index of the current phase
	phaseEnd time.Duration // when the current phase ends; unused in the last
	window   int64         // index of the current admission window
	admitted int           // requests admitted in the current window
}

func newAdmission(phases []Phase) admission {
	return admission{phases: phases, phaseEnd: phases[0].Duration, window: -1}
}

// Arrive decides a request arriving at now, by the windows of the model it
// calls; the last phase holds forever.
func (s *windowsState) Arrive(now time.Duration, req Request) Response {
	w := &s.primary
	if req.Fallback {
		w = s.fallback
	}
	at := now + s.responseTime.Sample(s.rng)
	if rej, ok := w.admit(now); !ok {
		return Response{Outcome: rej.Outcome(), At: at}
	}
	return Response{At: at}
}

// admit decides a request arriving at now (calls in time order).
func (w *admission) admit(now time.Duration) (Rejection, bool) {
	last := len(w.phases) - 1
	for w.phase < last && now >= w.phaseEnd {
		w.phase++
		w.phaseEnd += w.phases[w.phase].Duration
		w.window, w.admitted = -1, 0
	}
	p := &w.phases[w.phase]
	if p.Admit == 0 {
		return p.Reject, false
	}
	if i := int64(now / p.Window); i != w.window {
		w.window, w.admitted = i, 0
	}
	if w.admitted < p.Admit {
		w.admitted++
		return Rejection{}, true
	}
	return p.Reject, false
}

// Capacity returns one step per phase: Admit requests per Window.
func (s *CapacityWindows) Capacity() []CapacityStep {
	steps := make([]CapacityStep, 0, len(s.Phases))
	at := time.Duration(0)
	for i, p := range s.Phases {
		st := CapacityStep{At: at, Per: p.Window}
		if p.Admit > 0 {
			st.Requests = float64(p.Admit)
		}
		steps = append(steps, st)
		if i == len(s.Phases)-1 || p.Duration == 0 {
			break
		}
		at += p.Duration
	}
	return steps
}

// WindowPhasesFromCSV reads "start,admit" rows into the phases of capacity windows (see server_trace.go):
// each phase admits value requests per window (0 rejects everything) and
// rejects the rest with reject.
func WindowPhasesFromCSV(r io.Reader, window time.Duration, reject Rejection) ([]Phase, error) {
	if window <= 0 {
		return nil, fmt.Errorf("capacity trace: window must be > 0 (got %v)", window)
	}
	rows, err := readTrace(r, "admit")
	if err != nil {
		return nil, err
	}
	phases := make([]Phase, len(rows))
	for i, row := range rows {
		phases[i] = Phase{Duration: row.duration, Admit: row.value, Window: window, Reject: reject}
	}
	return phases, nil
}

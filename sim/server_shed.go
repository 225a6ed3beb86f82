package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// ReserveShedder is Stripe's fleet-usage load shedder ("Scaling your API
// with rate limiters", Stripe engineering blog, 2017) in front of another
// server model: a share of the capacity (Reserve) is kept for critical
// requests, so non-critical requests may use only the rest. Usage is
// counted per type, as Stripe's counters of the requests of each type in
// progress are: a non-critical request is shed (503) when the
// non-critical requests in use already fill their allocation,
// floor((1 − Reserve) · Capacity); a critical request is never shed here
// (the inner model decides it). So the non-critical ones never hold more
// than their allocation, and critical traffic up to the reserve always
// finds room.
//
// Usage is the requests in flight (Window 0: passed to the inner model
// and not yet answered, by the answer's time) or the requests passed in
// the current window (Window > 0: windows aligned to multiples of Window
// from t = 0).
type ReserveShedder struct {
	// Reserve is the share of Capacity kept for critical requests, in
	// [0, 1); Stripe's example is 0.2.
	Reserve float64
	// Capacity is what the inner server holds: requests in flight (a
	// queue's workers), or with Window the requests it admits per
	// window (capacity windows' admit); 1…MaxConcurrency.
	Capacity int
	// Window, if > 0, measures usage per window instead of in flight.
	Window time.Duration
	// Critical is the lowest priority that is critical; 0 means
	// PriorityCritical (the default priority is never critical).
	Critical Priority
	// Reject is the outcome of a shed request; the zero Rejection means
	// 503, Capacity (Stripe's status).
	Reject Rejection
	// Inner decides the requests that pass.
	Inner ServerModel
}

// Allocation is the most non-critical requests in use at once (in flight,
// or in one window): floor((1 − Reserve) · Capacity).
func (m *ReserveShedder) Allocation() int {
	return int(math.Floor((1-m.Reserve)*float64(m.Capacity) + 1e-9))
}

// Validate reports the first problem that would make the model meaningless.
func (m *ReserveShedder) Validate() error {
	switch {
	case !(m.Reserve >= 0 && m.Reserve < 1):
		return fmt.Errorf("reserve shedder: reserve must be in [0, 1) (got %v)", m.Reserve)
	case m.Capacity < 1 || m.Capacity > MaxConcurrency:
		return fmt.Errorf("reserve shedder: capacity must be between 1 and %d (got %d)", MaxConcurrency, m.Capacity)
	case m.Window < 0:
		return fmt.Errorf("reserve shedder: negative window %v", m.Window)
	case m.Critical < -MaxPriority || m.Critical > MaxPriority:
		return fmt.Errorf("reserve shedder: critical priority %d is not within ±%d", m.Critical, MaxPriority)
	case m.Reject != (Rejection{}) && m.Reject.Class == policies.Success:
		return fmt.Errorf("reserve shedder: a rejection cannot be a success")
	case m.Inner == nil:
		return fmt.Errorf("reserve shedder: no inner server model")
	}
	if err := m.Inner.Validate(); err != nil {
		return err
	}
	if DecidesLater(m.Inner) {
		// In flight ends at the answer, which such a model gives later.
		return fmt.Errorf("reserve shedder: the inner %T model decides requests after they arrive; it cannot sit behind a reserve shedder", m.Inner)
	}
	return nil
}

// Unwrap returns Inner (ModelWrapper).
func (m *ReserveShedder) Unwrap() ServerModel { return m.Inner }

// unavailable is a shed request's default answer.
var unavailable = Rejection{Status: 503, Class: policies.Capacity}

// NewServer returns the shedder's counts of one run around the inner
// model's state; the inner model draws from rng, the shedder draws nothing.
func (m *ReserveShedder) NewServer(rng *rand.Rand) Server {
	reject := m.Reject
	if reject == (Rejection{}) {
		reject = unavailable
	}
	critical := m.Critical
	if critical == 0 {
		critical = PriorityCritical
	}
	return &shedState{model: m, inner: m.Inner.NewServer(rng), reject: reject, allocation: m.Allocation(), critical: critical, window: -1}
}

type shedState struct {
	model      *ReserveShedder
	inner      Server
	reject     Rejection
	allocation int
	critical   Priority
	// busy holds when each non-critical request in flight is answered
	// (Window 0); used counts those passed in the current window.
	busy   durationHeap
	window int64
	used   int
	stats  shedStats
}

// shedStats counts, per type, the requests passed and their answers.
type shedStats struct {
	Shed                          int
	CriticalOK, CriticalFailed    int
	NonCriticalOK, NonCriticalBad int
}

// Arrive sheds a non-critical request over its allocation; the inner
// model decides the rest.
func (s *shedState) Arrive(now time.Duration, req Request) Response {
	m := s.model
	critical := req.Priority >= s.critical
	if !critical {
		if m.Window > 0 {
			if w := int64(now / m.Window); w != s.window {
				s.window, s.used = w, 0
			}
		} else {
			for len(s.busy) > 0 && s.busy[0] <= now {
				s.busy.pop()
			}
			s.used = len(s.busy)
		}
		if s.used >= s.allocation {
			s.stats.Shed++
			return Response{Outcome: s.reject.Outcome(), At: now, Ticket: ownTicket}
		}
		s.used++
	}
	resp := s.inner.Arrive(now, req)
	ok := resp.Outcome.Class == policies.Success && resp.Stream == nil
	switch {
	case critical && ok:
		s.stats.CriticalOK++
	case critical:
		s.stats.CriticalFailed++
	case ok:
		s.stats.NonCriticalOK++
	default:
		s.stats.NonCriticalBad++
	}
	if !critical && m.Window == 0 {
		s.busy.push(resp.At)
	}
	return resp
}

// Unwrap returns the inner model's state (Wrapper).
func (s *shedState) Unwrap() Server { return s.inner }

// ReportCounters reports shed.shed (non-critical requests shed) and, per
// type, the requests the inner model answered with a success and those
// it failed: shed.critical_ok, shed.critical_failed, shed.noncritical_ok,
// shed.noncritical_failed.
func (s *shedState) ReportCounters(c *Counters) {
	c.Add("shed.shed", int64(s.stats.Shed))
	c.Add("shed.critical_ok", int64(s.stats.CriticalOK))
	c.Add("shed.critical_failed", int64(s.stats.CriticalFailed))
	c.Add("shed.noncritical_ok", int64(s.stats.NonCriticalOK))
	c.Add("shed.noncritical_failed", int64(s.stats.NonCriticalBad))
}

package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// Crash makes another server model crash: during each of its Down windows
// the server is down. At a crash (a window's From), every request it holds
// (in service or queued: any whose response would reach its client after
// From) fails at once, at From, as a connection reset; while it is down,
// every new request is refused at once; when it comes back (Until) it
// starts empty, with Inner's state of a new run (a queue with no backlog,
// a rate limit's buckets full). This is not capacity 0: a server with no
// capacity still holds or rejects requests by its own rules, while a
// crashed one drops everything it had.
//
// Both a reset and a refusal are Transient failures with no status
// (policies.Outcome{Class: Transient}), what a client reads for a
// connection error; a client that is waiting with an attempt timeout sees
// the failure at once, before its timeout.
type Crash struct {
	// Down are the windows in which the server is down, in time order,
	// not overlapping; at least one.
	Down []DownWindow
	// Inner is the server that crashes.
	Inner ServerModel
}

// DownWindow is a stretch of time [From, Until) in which a server is down.
type DownWindow struct {
	From, Until time.Duration
}

// connectionReset is what a client reads for a request a crashed server
// dropped or refused.
var connectionReset = policies.Outcome{Class: policies.Transient}

// Validate reports the first problem that would make the model meaningless.
func (c *Crash) Validate() error {
	if len(c.Down) == 0 {
		return fmt.Errorf("crash: needs at least one down window")
	}
	for i, w := range c.Down {
		switch {
		case w.From < 0:
			return fmt.Errorf("crash: window %d: negative start %v", i, w.From)
		case w.Until <= w.From:
			return fmt.Errorf("crash: window %d: must end after it starts (from %v, until %v)", i, w.From, w.Until)
		case i > 0 && w.From < c.Down[i-1].Until:
			return fmt.Errorf("crash: window %d starts at %v, before window %d ends (%v)", i, w.From, i-1, c.Down[i-1].Until)
		case w.Until > Horizon:
			return fmt.Errorf("crash: window %d ends after the simulator's horizon", i)
		}
	}
	if c.Inner == nil {
		return fmt.Errorf("crash: no inner server model")
	}
	if err := c.Inner.Validate(); err != nil {
		return err
	}
	if DecidesLater(c.Inner) {
		return fmt.Errorf("crash: the inner %T model decides requests after they arrive; it cannot crash", c.Inner)
	}
	return nil
}

// Unwrap returns Inner (ModelWrapper).
func (c *Crash) Unwrap() ServerModel { return c.Inner }

// NewServer returns the crashing server's state for one run; the inner
// model's states, the first and those it comes back with, draw from rng.
func (c *Crash) NewServer(rng *rand.Rand) Server {
	return &crashState{model: c, rng: rng, inner: c.Inner.NewServer(rng)}
}

type crashState struct {
	model  *Crash
	rng    *rand.Rand
	inner  Server
	window int // the first window that has not ended
	// retired are the inner states of before each crash, for their counters.
	retired []Server
	stats   crashStats
}

type crashStats struct{ Reset, Refused int }

// Arrive refuses a request while the server is down; otherwise the inner
// model decides it, and a response due after the next crash is replaced
// by a reset at the crash.
func (s *crashState) Arrive(now time.Duration, req Request) Response {
	down := s.model.Down
	for s.window < len(down) && down[s.window].Until <= now {
		// Back from a crash: empty, as if new.
		s.retired = append(s.retired, s.inner)
		s.inner = s.model.Inner.NewServer(s.rng)
		s.window++
	}
	if s.window < len(down) && now >= down[s.window].From {
		s.stats.Refused++
		return Response{Outcome: connectionReset, At: now, Ticket: ownTicket}
	}
	resp := s.inner.Arrive(now, req)
	if s.window < len(down) && resp.At > down[s.window].From {
		s.stats.Reset++
		return Response{Outcome: connectionReset, At: down[s.window].From, Ticket: ownTicket}
	}
	return resp
}

// Unwrap returns the current inner state (Wrapper).
func (s *crashState) Unwrap() Server { return s.inner }

// ReportCounters reports the counters of the inner states the crashes
// retired (the engine asks the current one first; a counter sums over
// them), then the crash's: crash.reset (requests dropped at a crash)
// and crash.refused (refused while down).
func (s *crashState) ReportCounters(c *Counters) {
	for _, in := range s.retired { // the current one's: the engine asks it first
		if r, ok := in.(CounterReporter); ok {
			r.ReportCounters(c)
		}
	}
	c.Add("crash.reset", int64(s.stats.Reset))
	c.Add("crash.refused", int64(s.stats.Refused))
}

// Capacity is the inner model's, 0 while the server is down; nil when the
// inner model has none.
func (c *Crash) Capacity() []CapacityStep {
	cp, ok := ModelAs[CapacityProfile](c.Inner)
	if !ok {
		return nil
	}
	inner := cp.Capacity()
	if len(inner) == 0 {
		return nil
	}
	// The windows as a profile of 1 (up) and 0 (down), multiplied in.
	up := []CapacityStep{{At: 0, Requests: 1, Per: time.Second}}
	for _, w := range c.Down {
		up = append(up, CapacityStep{At: w.From, Requests: 0, Per: time.Second}, CapacityStep{At: w.Until, Requests: 1, Per: time.Second})
	}
	return combineCapacity([][]CapacityStep{inner, up}, func(r []float64) float64 { return r[0] * r[1] })
}

package machine

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrCircuitOpen is the cause of StopCircuitOpen: a circuit breaker
// rejected an attempt locally, without sending it.
var ErrCircuitOpen = errors.New("circuit breaker open")

// BreakerConfig configures a Breaker. Zero fields take defaults; with
// neither trip rule set, the breaker opens after 5 consecutive failures.
type BreakerConfig struct {
	// ConsecutiveFailures opens the breaker after this many failures in a
	// row (outcomes in Ignored classes do not break the row). 0 turns the
	// rule off, unless FailureRatio is 0 too: then it is 5.
	ConsecutiveFailures int
	// FailureRatio opens the breaker when, over Window, failures ÷ counted
	// outcomes reaches it, in (0, 1]; 0 turns the rule off.
	FailureRatio float64
	// MinRequests is the fewest counted outcomes in the window for
	// FailureRatio to apply; 0 means 20.
	MinRequests int
	// Window is how far back FailureRatio counts; 0 means 10 s.
	Window time.Duration
	// Slots is how many slots the window is cut into; 0 means 10.
	Slots int
	// OpenFor is how long the breaker stays open the first time; 0 means
	// 60 s.
	OpenFor time.Duration
	// MaxOpenFor, if greater than OpenFor, lets the open time double each
	// time a half-open probe fails, up to MaxOpenFor; it is back to OpenFor
	// once the breaker closes. 0 means no growth.
	MaxOpenFor time.Duration
	// Probes is how many attempts the half-open breaker lets through, and
	// how many must succeed for it to close; 0 means 1.
	Probes int
	// Failures are the outcome classes that count as failures. Empty means
	// capacity and transient. Success and any class in neither set (by
	// default retry-after and terminal) count as successes for a probe, and
	// are ignored while closed.
	Failures ClassSet
}

// Validate reports negative values, a ratio outside [0, 1], or a bad window.
func (c BreakerConfig) Validate() error {
	if c.ConsecutiveFailures < 0 || c.MinRequests < 0 || c.Window < 0 || c.Slots < 0 || c.OpenFor < 0 || c.MaxOpenFor < 0 || c.Probes < 0 {
		return fmt.Errorf("circuit breaker needs counts and durations >= 0 (got %+v)", c)
	}
	if !(c.FailureRatio >= 0 && c.FailureRatio <= 1) {
		return fmt.Errorf("circuit breaker: failure ratio %v is outside [0, 1]", c.FailureRatio)
	}
	if c.Failures.Has(Success) {
		return errors.New("circuit breaker: success cannot count as a failure")
	}
	c = c.WithDefaults()
	if _, err := newWindow(c.Window, c.Slots); err != nil {
		return fmt.Errorf("circuit breaker: %w", err)
	}
	return nil
}

// WithDefaults returns c with every unset field at the value the control
// runs with (what a report shows as its effective settings).
func (c BreakerConfig) WithDefaults() BreakerConfig {
	if c.ConsecutiveFailures == 0 && c.FailureRatio == 0 {
		c.ConsecutiveFailures = 5
	}
	if c.MinRequests == 0 {
		c.MinRequests = 20
	}
	if c.Window == 0 {
		c.Window = 10 * time.Second
	}
	if c.Slots == 0 {
		c.Slots = DefaultWindowSlots
	}
	if c.OpenFor == 0 {
		c.OpenFor = time.Minute
	}
	c.MaxOpenFor = max(c.MaxOpenFor, c.OpenFor)
	if c.Probes == 0 {
		c.Probes = 1
	}
	c.Failures = c.Failures.or(Classes(Capacity, Transient))
	return c
}

// BreakerState is a circuit breaker's state.
type BreakerState uint8

const (
	BreakerClosed   BreakerState = iota // attempts pass; outcomes are counted
	BreakerOpen                         // attempts are rejected locally
	BreakerHalfOpen                     // a few probes pass; the rest are rejected
)

func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("state(%d)", s)
}

// Breaker is a circuit breaker shared by the operations of one client:
//
//   - Closed, it lets every attempt pass and counts outcomes. It opens
//     after ConsecutiveFailures failures in a row, or when the window holds
//     at least MinRequests counted outcomes and failures reach
//     FailureRatio of them. Outcomes in neither Failures nor Success are
//     not counted at all.
//   - Open, it rejects every attempt locally (StopCircuitOpen; nothing is
//     sent) until its open time has passed, then is half-open.
//   - Half-open, it lets Probes attempts through (AdmitGrant) and rejects
//     the others. The first probe that fails opens it again, for twice the
//     previous open time if MaxOpenFor allows; once Probes probes have
//     succeeded it closes, with empty counts. A probe given back unused
//     frees its place.
//
// Outcomes of attempts admitted while closed but observed after the breaker
// opened are ignored. The breaker cannot tell which half-open period a probe
// belongs to: a probe from an earlier period settled in a later one counts
// there. Safe for concurrent use.
type Breaker struct {
	cfg BreakerConfig

	mu          sync.Mutex
	state       BreakerState
	until       time.Time     // end of the open time
	openFor     time.Duration // length of the current or next open time
	consecutive int           // failures in a row, while closed
	w           *window       // [0]: counted outcomes, [1]: failures
	probes      int           // probes admitted in this half-open period
	succeeded   int           // ... and succeeded
}

// NewBreaker returns a closed breaker.
func NewBreaker(c BreakerConfig) (*Breaker, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.WithDefaults()
	w, err := newWindow(c.Window, c.Slots)
	if err != nil {
		return nil, err
	}
	return &Breaker{cfg: c, openFor: c.OpenFor, w: w}, nil
}

// State returns the breaker's state at now.
func (b *Breaker) State(now time.Time) BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tick(now)
	return b.state
}

// tick moves an open breaker whose time is up to half-open.
func (b *Breaker) tick(now time.Time) {
	if b.state == BreakerOpen && !now.Before(b.until) {
		b.state, b.probes, b.succeeded = BreakerHalfOpen, 0, 0
	}
}

func (b *Breaker) open(now time.Time) {
	b.state, b.until = BreakerOpen, now.Add(b.openFor)
	b.consecutive = 0
	b.w.reset()
}

// Admit passes attempts while closed, grants a probe's place while
// half-open, and otherwise stops the operation with StopCircuitOpen.
func (b *Breaker) Admit(now time.Time, _ Ask) Admission {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tick(now)
	switch {
	case b.state == BreakerClosed:
		return Admission{Kind: AdmitPass}
	case b.state == BreakerHalfOpen && b.probes < b.cfg.Probes:
		b.probes++
		return Admission{Kind: AdmitGrant, At: now}
	}
	return Admission{Kind: AdmitDeny, Reason: StopCircuitOpen, Cause: ErrCircuitOpen}
}

// Observe counts an outcome while closed, and opens the breaker when a
// rule says so. Probes are judged in Settle.
func (b *Breaker) Observe(now time.Time, _ int, out Outcome) {
	failure := b.cfg.Failures.Has(out.Class)
	if !failure && out.Class != Success {
		return // neither: not counted
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tick(now)
	if b.state != BreakerClosed {
		return
	}
	s := b.w.at(now)
	s[0]++
	if !failure {
		b.consecutive = 0
		return
	}
	s[1]++
	b.consecutive++
	if n := b.cfg.ConsecutiveFailures; n > 0 && b.consecutive >= n {
		b.open(now)
		return
	}
	if r := b.cfg.FailureRatio; r > 0 {
		counted, failures := b.w.sums(now)
		if counted >= int64(b.cfg.MinRequests) && float64(failures) >= r*float64(counted) {
			b.open(now)
		}
	}
}

// Settle judges a probe: a failure reopens the breaker, enough successes
// close it, a probe unused frees its place.
func (b *Breaker) Settle(now time.Time, s Settlement) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tick(now)
	if b.state != BreakerHalfOpen {
		return // the breaker reopened meanwhile: a stale probe
	}
	switch {
	case !s.Sent:
		b.probes = max(b.probes-1, 0)
	case b.cfg.Failures.Has(s.Outcome.Class):
		if b.openFor > b.cfg.MaxOpenFor/2 {
			b.openFor = b.cfg.MaxOpenFor
		} else {
			b.openFor *= 2
		}
		b.open(now)
	default:
		if b.succeeded++; b.succeeded >= b.cfg.Probes {
			b.state, b.openFor, b.consecutive = BreakerClosed, b.cfg.OpenFor, 0
			b.w.reset()
		}
	}
}

// Release frees an unused probe's place; the Op calls Settle instead.
func (b *Breaker) Release(now time.Time, w Waiter, sent bool) {
	if !sent {
		b.Settle(now, Settlement{Waiter: w})
	}
}

// NewCoordinator returns a fresh, closed Breaker: a BreakerConfig is its
// Spec.
func (c BreakerConfig) NewCoordinator() (Coordinator, error) { return NewBreaker(c) }

// Stops reports that a breaker stops operations with StopCircuitOpen.
func (BreakerConfig) Stops() StopReason { return StopCircuitOpen }

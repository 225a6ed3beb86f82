package machine

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// ErrThrottled is the cause of StopThrottled: adaptive throttling rejected
// an attempt locally, without sending it.
var ErrThrottled = errors.New("rejected locally by adaptive throttling")

// AdaptiveThrottleConfig configures an AdaptiveThrottle. Zero fields take
// the defaults of Google's SRE book (chapter "Handling Overload"): K = 2
// over the last 2 minutes.
type AdaptiveThrottleConfig struct {
	// K is how many requests per accepted request the client lets through
	// before it starts rejecting locally; > 1 in practice (lower rejects
	// sooner). 0 means 2.
	K float64
	// Window is how far back requests and accepts count; 0 means 2 min.
	Window time.Duration
	// Slots is how many slots the window is cut into; 0 means 10.
	Slots int
	// Rejections are the classes of outcome that mean the backend refused
	// the request; any other outcome counts as accepted. Empty means
	// retry-after and capacity (429, 529, 503).
	Rejections ClassSet
}

// Validate reports a negative or non-finite K, or a bad window.
func (c AdaptiveThrottleConfig) Validate() error {
	if c.K < 0 || math.IsNaN(c.K) || math.IsInf(c.K, 0) || c.Window < 0 || c.Slots < 0 {
		return fmt.Errorf("adaptive throttle needs a finite K >= 0, window and slots >= 0 (got K %v, %v, %d slots)", c.K, c.Window, c.Slots)
	}
	c = c.WithDefaults()
	if _, err := newWindow(c.Window, c.Slots); err != nil {
		return fmt.Errorf("adaptive throttle: %w", err)
	}
	return nil
}

// WithDefaults returns c with every unset field at the value the control
// runs with (what a report shows as its effective settings).
func (c AdaptiveThrottleConfig) WithDefaults() AdaptiveThrottleConfig {
	if c.K == 0 {
		c.K = 2
	}
	if c.Window == 0 {
		c.Window = 2 * time.Minute
	}
	if c.Slots == 0 {
		c.Slots = DefaultWindowSlots
	}
	c.Rejections = c.Rejections.or(Classes(RetryAfter, Capacity))
	return c
}

// AdaptiveThrottle is client-side adaptive throttling as Google's SRE book
// describes it: the client keeps, over a sliding window, the requests it
// made and the requests the backend accepted, and before every attempt
// (first or retry) rejects it locally with probability
//
//	p = max(0, (requests − K × accepts) / (requests + 1))
//
// drawing from the operation's random source (Ask.Rand) only when p > 0.
// A rejected attempt is not sent; its operation stops with StopThrottled,
// and it counts as a request, as the book counts it: so while the backend
// keeps refusing, p keeps rising toward 1, and once it accepts again the
// local rejections fade as the window forgets. A sent attempt counts as a
// request when its outcome is observed, and as an accept unless its class is
// in Rejections. Safe for concurrent use.
type AdaptiveThrottle struct {
	k          float64
	rejections ClassSet
	mu         sync.Mutex
	w          *window // [0]: requests, [1]: accepts
}

// NewAdaptiveThrottle returns a throttle with empty counts.
func NewAdaptiveThrottle(c AdaptiveThrottleConfig) (*AdaptiveThrottle, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.WithDefaults()
	w, err := newWindow(c.Window, c.Slots)
	if err != nil {
		return nil, err
	}
	return &AdaptiveThrottle{k: c.K, rejections: c.Rejections, w: w}, nil
}

// RejectProbability returns p at now.
func (t *AdaptiveThrottle) RejectProbability(now time.Time) float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.p(now)
}

func (t *AdaptiveThrottle) p(now time.Time) float64 {
	requests, accepts := t.w.sums(now)
	return max(0, (float64(requests)-t.k*float64(accepts))/float64(requests+1))
}

// Admit lets the attempt pass, or rejects it locally with probability p
// (StopThrottled). Without Ask.Rand it rejects when p ≥ 1/2.
func (t *AdaptiveThrottle) Admit(now time.Time, a Ask) Admission {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.p(now)
	if p <= 0 {
		return Admission{Kind: AdmitPass}
	}
	if a.Rand != nil && a.Rand.Float64() >= p || a.Rand == nil && p < 0.5 {
		return Admission{Kind: AdmitPass}
	}
	t.w.at(now)[0]++ // a local rejection is a request too
	return Admission{Kind: AdmitDeny, Reason: StopThrottled, Cause: ErrThrottled}
}

// Observe counts the attempt as a request, and as an accept unless the
// backend refused it.
func (t *AdaptiveThrottle) Observe(now time.Time, _ int, out Outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.w.at(now)
	s[0]++
	if !t.rejections.Has(out.Class) {
		s[1]++
	}
}

// Release does nothing: the throttle holds nothing for an attempt.
func (t *AdaptiveThrottle) Release(time.Time, Waiter, bool) {}

// NewCoordinator returns a fresh AdaptiveThrottle: an
// AdaptiveThrottleConfig is its Spec.
func (c AdaptiveThrottleConfig) NewCoordinator() (Coordinator, error) { return NewAdaptiveThrottle(c) }

// Stops reports that adaptive throttling stops operations with
// StopThrottled.
func (AdaptiveThrottleConfig) Stops() StopReason { return StopThrottled }

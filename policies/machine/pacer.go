package machine

import (
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"
)

// Pacer spaces the requests of every worker on one API key so that the
// key's rate limits, as its responses' rate-limit headers report them
// (RateLimits), never run out: it keeps a copy of each bucket the headers
// name, refills it at the limit's rate (Limit per Window, continuously, as
// both providers document their buckets), takes a request's share from it
// when it lets the request go, and books a request that does not fit now
// a later start (AdmitGrant at it: a ticket), when its share fits after
// the requests booked before it, in the order they asked; a request whose
// ticket would come after its latest start is held (AdmitHold with a
// *PacedError), which stops it. Before the first header it knows nothing
// and lets every request go.
//
// A header lowers a bucket's copy to what it says is remaining, never
// raises it (beyond the refill): a header is a little old when it arrives
// (requests sent since are not in it), while one that says less than the
// copy tells of workers the pacer does not see (another process on the
// key). So when every request on the key goes through the pacer, the copy
// is never above the truth (but for requests it let go blind, before its
// first header, that that header does not count yet), and below it by
// less than one (remaining is a whole number) plus the requests it let go
// that the server refused.
//
// By requests alone, every request needs 1 of the requests bucket. With
// Tokens, it also needs its input and output tokens (Ask.InputTokens and
// OutputTokens, or the config's defaults) of those buckets, or their sum of
// a token bucket that names no direction (OpenAI's), when the headers name
// neither input nor output tokens. A request bigger than a bucket's limit
// is let through, taking nothing: the server refuses it (413) whatever the
// client waits. So is one whose sum of input and output tokens is past
// the int64 range (the sum saturates; it never wraps to a negative share).
//
// The Pacer learns the headers from every outcome that carries them
// (Observe: Outcome.Limits, which ClassifyResponse reads from a failed
// response's headers and the simulator sets on every response); a
// production client also gives it every successful response's headers, with
// ObserveHeader or the RoundTripper of Transport (policies.Transport does
// that itself for a Pacer among its coordinators: see HeaderObserver).
// Put it last among the coordinators: what it takes for a request is not
// given back if a later coordinator holds the request. Safe for
// concurrent use.
type Pacer struct {
	cfg      PacerConfig
	per      int64 // cfg.Window in nanoseconds: the units of a token
	maxLimit int64 // the largest limit kept (MaxPacerLimit, less for a long window)

	mu      sync.Mutex
	buckets [4]mirror // requests, input tokens, output tokens, tokens
	// The tickets: the requests let go for a later start, in the order
	// they asked (their starts never decrease), from head; tail is the
	// last one's start, and ahead what they took of each bucket that
	// their starts have not reached yet.
	booked []booking
	head   int
	tail   time.Time
	ahead  [4]int64
}

// mirror is the pacer's copy of one bucket, in units of 1/per of a
// request or token (as the simulator's bucket counts), refilling limit
// units per nanosecond up to limit·per. level is what it holds at last,
// which is in the future while requests are booked ahead: what the last
// of them left.
type mirror struct {
	limit int64 // per Window; 0: not known
	level int64
	last  time.Time
}

// booking is a ticket: a request's start and what it took (units of
// 1/per).
type booking struct {
	at   time.Time
	took [4]int64
}

// PacerConfig is the Spec of a Pacer.
type PacerConfig struct {
	// Tokens makes the pacer pace by the token limits too, with each
	// request's size.
	Tokens bool
	// InputTokens and OutputTokens size a request whose Ask gives no size
	// (>= 0).
	InputTokens, OutputTokens int
	// Window is the period of the limits (their Limit refills over it);
	// 0 means a minute, the providers' period; at most MaxPacerWindow.
	Window time.Duration
}

// MaxPacerLimit bounds the limits a Pacer keeps: a header's larger limit
// counts as this one (so the arithmetic cannot overflow). With a window
// longer than a minute the bound is lower: 2^62 divided by the window in
// nanoseconds.
const MaxPacerLimit = 100_000_000

// MaxPacerWindow bounds PacerConfig.Window (a minute's limits served at a
// speed below 1 have a longer window on the real clock).
const MaxPacerWindow = time.Hour

// Validate reports negative sizes or a window that is negative or longer
// than MaxPacerWindow.
func (c PacerConfig) Validate() error {
	switch {
	case c.InputTokens < 0 || c.OutputTokens < 0:
		return fmt.Errorf("pacer: request sizes must be >= 0 (got %d input, %d output tokens)", c.InputTokens, c.OutputTokens)
	case c.Window < 0 || c.Window > MaxPacerWindow:
		return fmt.Errorf("pacer: window must be between 0 (a minute) and %v, got %v", MaxPacerWindow, c.Window)
	}
	return nil
}

// NewCoordinator returns a Pacer that knows no limits yet.
func (c PacerConfig) NewCoordinator() (Coordinator, error) { return NewPacer(c) }

// Rescale returns the config with its window passed through f.
func (c PacerConfig) Rescale(f func(time.Duration) time.Duration) Spec {
	c.Window = f(c.window())
	return c
}

func (c PacerConfig) window() time.Duration {
	if c.Window == 0 {
		return time.Minute
	}
	return c.Window
}

// NewPacer returns a Pacer for c.
func NewPacer(c PacerConfig) (*Pacer, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	per := int64(c.window())
	if per <= 0 {
		per = 1 // a window rescaled to nothing
	}
	return &Pacer{cfg: c, per: per, maxLimit: min(MaxPacerLimit, (1<<62)/per)}, nil
}

// PacedError is the cause of a StopDeadline when the pacer would let the
// request go only after the operation may start.
type PacedError struct {
	Until time.Time
}

func (e *PacedError) Error() string {
	return "the key's rate limits (as its headers tell them) have room only at " + e.Until.Format(time.RFC3339Nano)
}

// needs returns what a request takes of each bucket.
func (p *Pacer) needs(a Ask) [4]int64 {
	need := [4]int64{1}
	if !p.cfg.Tokens {
		return need
	}
	in, out := a.InputTokens, a.OutputTokens
	if in <= 0 {
		in = p.cfg.InputTokens
	}
	if out <= 0 {
		out = p.cfg.OutputTokens
	}
	need[1], need[2] = int64(in), int64(out)
	if p.buckets[1].limit == 0 && p.buckets[2].limit == 0 {
		need[3] = math.MaxInt64 // a sum past int64 saturates: bigger than any limit
		if int64(out) <= math.MaxInt64-int64(in) {
			need[3] = int64(in) + int64(out)
		}
	}
	return need
}

// refill brings m to now (nothing if its level is already at a later
// time). The level is never below 1−full (see Update), so full−level fits.
func (m *mirror) refill(now time.Time, per int64) {
	if m.limit == 0 {
		return
	}
	full := m.limit * per
	if dt := now.Sub(m.last); dt > 0 {
		if gap := full - m.level; int64(dt) >= (gap+m.limit-1)/m.limit {
			m.level = full
		} else {
			m.level += m.limit * int64(dt)
		}
		m.last = now
	}
}

// Admit lets the request go (AdmitGrant), taking its share of every
// bucket: now if its share fits and no request booked before it waits,
// otherwise at the start its share fits after theirs. So the requests it
// makes wait get tickets in the order they asked, each woken once, at its
// own start, where they would all wake when the next share fits, and all
// but one be held again (docs/scale.md). A start later than Ask.Latest is
// a hold (AdmitHold) with a *PacedError, which stops the operation; it
// books nothing.
func (p *Pacer) Admit(now time.Time, a Ask) Admission {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expire(now)
	need := p.needs(a)
	at := p.start(now, need)
	if !startsBy(at, a.Latest) {
		return Admission{Kind: AdmitHold, At: at, Cause: &PacedError{Until: at}}
	}
	p.take(at, now, need)
	return Admission{Kind: AdmitGrant, At: at}
}

// AdmitCopy lets a hedge go if its share fits now, no booked request
// waiting before it, taking its share; it refuses it otherwise, taking
// nothing (CopyAdmitter): a hedge is a request on the key like any other.
func (p *Pacer) AdmitCopy(now time.Time, a Ask) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expire(now)
	need := p.needs(a)
	if p.start(now, need).After(now) {
		return false
	}
	p.take(now, now, need)
	return true
}

// paces reports whether need takes anything of bucket k.
func (p *Pacer) paces(k int, need [4]int64) bool {
	m := &p.buckets[k]
	return m.limit > 0 && need[k] > 0 && need[k] <= m.limit
}

// expire forgets the tickets whose start has come.
func (p *Pacer) expire(now time.Time) {
	for p.head < len(p.booked) && !p.booked[p.head].at.After(now) {
		for k, t := range p.booked[p.head].took {
			p.ahead[k] -= t
		}
		p.head++
	}
	if p.head == len(p.booked) {
		p.booked, p.head = p.booked[:0], 0
	} else if p.head > 64 && p.head > len(p.booked)/2 {
		p.booked = p.booked[:copy(p.booked, p.booked[p.head:])]
		p.head = 0
	}
}

// start returns the first start at or after now, and after every booked
// request's, at which need fits each bucket it takes from; now for a
// request that takes nothing.
func (p *Pacer) start(now time.Time, need [4]int64) time.Time {
	at := now
	for k := range p.buckets {
		if !p.paces(k, need) {
			continue
		}
		m := &p.buckets[k]
		m.refill(now, p.per)
		at = later(at, p.tail)
		from := later(now, m.last)
		if short := need[k]*p.per - m.level; short > 0 {
			from = from.Add(time.Duration((short + m.limit - 1) / m.limit))
		}
		at = later(at, from)
	}
	return at
}

// take takes need from the buckets at at (now or later: a ticket).
func (p *Pacer) take(at, now time.Time, need [4]int64) {
	var took [4]int64
	for k := range p.buckets {
		if !p.paces(k, need) {
			continue
		}
		m := &p.buckets[k]
		m.refill(at, p.per)
		took[k] = need[k] * p.per
		m.level -= took[k]
	}
	if at.After(now) {
		p.booked = append(p.booked, booking{at: at, took: took})
		p.tail = at
		for k, t := range took {
			p.ahead[k] = min(p.ahead[k]+t, 1<<62) // saturates: sums of shares ≤ 2^62 each
		}
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Observe learns the limits an outcome carries.
func (p *Pacer) Observe(now time.Time, _ int, out Outcome) {
	if out.Limits != nil {
		p.Update(now, *out.Limits)
	}
}

// ObservesLimits marks the Pacer as a LimitsObserver.
func (p *Pacer) ObservesLimits() {}

// Release does nothing: a request's share is not given back (see Pacer).
func (p *Pacer) Release(time.Time, Waiter, bool) {}

// Update learns the limits a response received at now reported. The
// header does not count the requests booked for later starts (they were
// not sent): the copy is lowered to what it says less what they took.
// When the copy's level is at a later time (requests are booked ahead),
// the header bounds it with the refill until then. The copy never goes
// below a whole window in debt.
func (p *Pacer) Update(now time.Time, l RateLimits) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expire(now)
	for k, b := range l.buckets() {
		if b.Limit <= 0 {
			continue
		}
		m := &p.buckets[k]
		limit := min(b.Limit, p.maxLimit)
		full := limit * p.per
		told := min(b.Remaining, limit) * p.per
		if m.limit != limit {
			// New, or the key's limit changed: start from the header.
			*m = mirror{limit: limit, level: max(told-p.ahead[k], 1-full), last: now}
			continue
		}
		m.refill(now, p.per)
		if dt := m.last.Sub(now); dt > 0 {
			// told then, with the refill up to the copy's time.
			if int64(dt) >= (full-told+limit-1)/limit {
				told = full
			} else {
				told += limit * int64(dt)
			}
		}
		m.level = min(m.level, max(told-p.ahead[k], 1-full))
	}
}

// A HeaderObserver is a Coordinator that reads the headers of every
// response, a success's too (which no Observe carries): Transport gives
// each successful response's headers to every coordinator of
// WithCoordinator that is one. Pacer is one.
type HeaderObserver interface {
	Coordinator
	ObserveHeader(now time.Time, h http.Header) bool
}

// ObserveHeader learns the rate limits in a response's headers (either
// dialect), received at now; it reports whether there were any.
func (p *Pacer) ObserveHeader(now time.Time, h http.Header) bool {
	l, ok := ParseRateLimits(h, now)
	if ok {
		p.Update(now, l)
	}
	return ok
}

// Limits returns what the pacer's copies hold at now, as the headers would
// say it (the whole requests or tokens left, the time until full).
func (p *Pacer) Limits(now time.Time) RateLimits {
	p.mu.Lock()
	defer p.mu.Unlock()
	var l RateLimits
	for k, b := range l.buckets() {
		m := p.buckets[k]
		if m.limit == 0 {
			continue
		}
		m.refill(now, p.per)
		full := m.limit * p.per
		*b = RateLimit{Limit: m.limit, Remaining: max(m.level, 0) / p.per, Reset: time.Duration((full - m.level + m.limit - 1) / m.limit)}
		if m.last.After(now) {
			// Requests are booked ahead: nothing is left now.
			b.Remaining, b.Reset = 0, m.last.Sub(now)+b.Reset
		}
	}
	return l
}

// Transport returns a RoundTripper that sends through base
// (http.DefaultTransport if nil) and tells the pacer the rate-limit
// headers of every response, at the time it arrives.
func (p *Pacer) Transport(base http.RoundTripper) http.RoundTripper {
	return ObservingTransport(base, p)
}

// ObservingTransport returns a RoundTripper that sends through base
// (http.DefaultTransport if nil) and gives the headers of every response
// to each of obs, at the time it arrives.
func ObservingTransport(base http.RoundTripper, obs ...HeaderObserver) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return observingTransport{base, obs}
}

type observingTransport struct {
	base http.RoundTripper
	obs  []HeaderObserver
}

func (t observingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if resp != nil {
		now := time.Now()
		for _, o := range t.obs {
			o.ObserveHeader(now, resp.Header)
		}
	}
	return resp, err
}

// ResetGate is the naive answer to a rate limit, for comparison: after a
// 429 every worker on the key sleeps until the limits reset, as their
// headers tell it (reset: until the bucket is full again). A RetryAfter
// outcome that carries limits pushes the gate to the longest reset among
// the limits with nothing remaining, or among all of them if none is at 0;
// one without limits pushes nothing. As a Gate, one push is bounded by
// MaxPush (default a minute). Safe for concurrent use.
type ResetGate struct {
	Gate
}

// Observe pushes the gate after a 429 by the limits' reset.
func (g *ResetGate) Observe(now time.Time, _ int, out Outcome) {
	if out.Class != RetryAfter || !out.Limits.Known() {
		return
	}
	var empty, any time.Duration
	for _, b := range out.Limits.buckets() {
		if b.Limit <= 0 {
			continue
		}
		any = max(any, b.Reset)
		if b.Remaining == 0 {
			empty = max(empty, b.Reset)
		}
	}
	if empty == 0 {
		empty = any
	}
	if empty > 0 {
		g.Push(now, empty)
	}
}

// ObservesLimits marks the ResetGate as a LimitsObserver.
func (g *ResetGate) ObservesLimits() {}

// ResetGateConfig is the Spec of a ResetGate with the default bound on
// pushes.
type ResetGateConfig struct{}

// Validate accepts every ResetGateConfig.
func (ResetGateConfig) Validate() error { return nil }

// NewCoordinator returns an open ResetGate.
func (ResetGateConfig) NewCoordinator() (Coordinator, error) { return &ResetGate{}, nil }

// Rescale returns the ResetGateConfig: it configures no duration.
func (c ResetGateConfig) Rescale(func(time.Duration) time.Duration) Spec { return c }

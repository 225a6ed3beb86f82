package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// RateLimit puts an API key's rate limits in front of another server
// model, as a rate-limited API does: requests per minute, input tokens per
// minute and output tokens per minute, each a token bucket that holds one
// minute's worth and refills continuously at the limit's rate, starting
// full. A request that fits every bucket takes its share from each and goes
// on to Inner, which decides it; one that does not fit is rejected with
// 429 and a retry-after saying when it would fit, and takes nothing. All
// operations of a run share the key.
type RateLimit struct {
	// Limits per minute; 0 means no limit of that kind. At most
	// MaxPerMinute each.
	RequestsPerMinute     int64
	InputTokensPerMinute  int64
	OutputTokensPerMinute int64
	// InputTokens and OutputTokens size requests that give no size
	// (Request.InputTokens or OutputTokens 0).
	InputTokens, OutputTokens int
	// RejectAfter is when a 429 reaches the client, after the request's
	// arrival (>= 0).
	RejectAfter time.Duration
	// RetryAfterUnit, if > 0, rounds every retry-after up to a multiple of
	// it (1s gives whole seconds, like a retry-after header); 0 gives the
	// exact wait in nanoseconds.
	RetryAfterUnit time.Duration
	// RetryAfterGrowth, if > 1, makes the retry-after grow while clients
	// keep hitting the limits: the k-th 429 in a row (no request let
	// through since the first) says the wait the buckets need times
	// RetryAfterGrowth^(k−1), at most MaxRetryAfter (before rounding to
	// RetryAfterUnit). Only what the 429 says grows: a request that comes
	// back sooner is let through if it fits. 0 or 1: no growth.
	RetryAfterGrowth float64
	// MaxRetryAfter bounds a grown retry-after; 0 means DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// Inner decides the requests that pass the limits.
	Inner ServerModel
}

// MaxPerMinute bounds each of a RateLimit's limits, so that the buckets'
// integer arithmetic cannot overflow.
const MaxPerMinute = 100_000_000

// DefaultMaxRetryAfter bounds a grown retry-after when MaxRetryAfter is 0.
const DefaultMaxRetryAfter = time.Hour

// MaxRetryAfterGrowth bounds RetryAfterGrowth.
const MaxRetryAfterGrowth = 1000

// Validate reports the first problem that would make the model meaningless.
func (m *RateLimit) Validate() error {
	for _, l := range []struct {
		name string
		v    int64
	}{{"requests", m.RequestsPerMinute}, {"input tokens", m.InputTokensPerMinute}, {"output tokens", m.OutputTokensPerMinute}} {
		if l.v < 0 || l.v > MaxPerMinute {
			return fmt.Errorf("rate limit: %s per minute must be between 0 and %d (got %d)", l.name, MaxPerMinute, l.v)
		}
	}
	switch {
	case m.InputTokens < 0 || m.OutputTokens < 0:
		return fmt.Errorf("rate limit: negative default token count")
	case m.RejectAfter < 0 || m.RetryAfterUnit < 0 || m.MaxRetryAfter < 0:
		return fmt.Errorf("rate limit: negative reject-after, retry-after unit or max retry-after")
	case !(m.RetryAfterGrowth >= 0 && m.RetryAfterGrowth <= MaxRetryAfterGrowth):
		return fmt.Errorf("rate limit: retry-after growth must be between 0 (none) and %d, got %v", MaxRetryAfterGrowth, m.RetryAfterGrowth)
	case m.Inner == nil:
		return fmt.Errorf("rate limit: no inner server model")
	}
	if err := m.Inner.Validate(); err != nil {
		return err
	}
	if DecidesLater(m.Inner) {
		// Its pending requests would reach the engine through a server
		// that cannot decide them.
		return fmt.Errorf("rate limit: the inner %T model decides requests after they arrive; it cannot sit behind a rate limit", m.Inner)
	}
	return nil
}

// Unwrap returns Inner (ModelWrapper).
func (m *RateLimit) Unwrap() ServerModel { return m.Inner }

// NewServer returns the buckets of one run around the inner model's state;
// both draw from rng (the rate limit itself draws nothing).
func (m *RateLimit) NewServer(rng *rand.Rand) Server {
	s := &rateLimitState{model: m, inner: m.Inner.NewServer(rng)}
	s.buckets[0].init(m.RequestsPerMinute)
	s.buckets[1].init(m.InputTokensPerMinute)
	s.buckets[2].init(m.OutputTokensPerMinute)
	return s
}

type rateLimitState struct {
	model   *RateLimit
	inner   Server
	buckets [3]bucket // requests, input tokens, output tokens
	stats   rateLimitStats
	// grow is what the next 429's wait is multiplied by (RetryAfterGrowth);
	// 0 until the first 429 of a run of them.
	grow float64
}

// bucket is a token bucket in integer units: one token is a minute of
// nanoseconds (6e10 units), and the bucket refills `limit` units per
// nanosecond, up to limit tokens.
type bucket struct {
	limit int64 // tokens per minute; 0: no limit
	level int64 // units
	last  time.Duration
}

const unitsPerToken = int64(time.Minute)

func (b *bucket) init(limit int64) { *b = bucket{limit: limit, level: limit * unitsPerToken} }

// refill brings the bucket to time now.
func (b *bucket) refill(now time.Duration) {
	if b.limit == 0 {
		return
	}
	full := b.limit * unitsPerToken
	if dt := now - b.last; dt >= time.Minute || b.limit*int64(dt) >= full-b.level {
		b.level = full
	} else {
		b.level += b.limit * int64(dt)
	}
	b.last = now
}

// wait returns how long until n tokens fit (0: now), or false if they
// never can (n is more than a minute's worth).
func (b *bucket) wait(n int64) (time.Duration, bool) {
	if b.limit == 0 || n == 0 {
		return 0, true
	}
	if n > b.limit {
		return 0, false
	}
	need := n*unitsPerToken - b.level
	if need <= 0 {
		return 0, true
	}
	return time.Duration((need + b.limit - 1) / b.limit), true
}

// Arrive checks the limits, then passes the request to the inner model.
func (s *rateLimitState) Arrive(now time.Duration, req Request) Response {
	m := s.model
	in, out := req.InputTokens, req.OutputTokens
	if in == 0 {
		in = m.InputTokens
	}
	if out == 0 {
		out = m.OutputTokens
	}
	need := [3]int64{1, int64(in), int64(out)}
	if b := &s.buckets[0]; b.limit > 0 {
		// The time since the requests bucket filled is capacity no one used.
		full := b.limit * unitsPerToken
		if fullAt := b.last + time.Duration((full-b.level+b.limit-1)/b.limit); fullAt < now {
			s.stats.idle += now - fullAt
		}
	}
	s.stats.lastArrival = now
	var wait time.Duration
	for k := range s.buckets {
		s.buckets[k].refill(now)
		w, ok := s.buckets[k].wait(need[k])
		if !ok {
			s.stats.TooLarge++
			return Response{Outcome: policies.Outcome{Class: policies.Terminal, Status: http.StatusRequestEntityTooLarge}, At: now + m.RejectAfter, Ticket: ownTicket}
		}
		wait = max(wait, w)
	}
	if wait > 0 {
		if g := m.RetryAfterGrowth; g > 1 {
			limit := m.MaxRetryAfter
			if limit == 0 {
				limit = DefaultMaxRetryAfter
			}
			if s.grow == 0 {
				s.grow = 1
			}
			if f := float64(wait) * s.grow; f < float64(limit) {
				wait = max(wait, time.Duration(f))
			} else {
				wait = max(wait, limit)
			}
			s.grow = min(s.grow*g, 1e18) // multiplication only: the same on every platform
		}
		if u := m.RetryAfterUnit; u > 0 {
			wait = (wait + u - 1) / u * u
		}
		s.stats.RateLimited++
		return Response{Outcome: policies.Outcome{Class: policies.RetryAfter, Status: http.StatusTooManyRequests, ServerWait: wait}, At: now + m.RejectAfter, Ticket: ownTicket}
	}
	for k := range s.buckets {
		if s.buckets[k].limit > 0 {
			s.buckets[k].level -= need[k] * unitsPerToken
		}
	}
	s.stats.passed++
	s.grow = 0
	return s.inner.Arrive(now, req)
}

// LimitReporter is an optional interface of a Server that can say, at any
// time, what its key's rate-limit headers say (policies.RateLimits): the
// engine gives it to the client with every response, at the response's
// time, as the API's headers would. A wrapper forwards it. ok is false if
// the server has no limits to report.
type LimitReporter interface {
	RateLimits(now time.Duration) (l policies.RateLimits, ok bool)
}

// Unwrap returns the inner model's state (Wrapper).
func (s *rateLimitState) Unwrap() Server { return s.inner }

// RateLimits reports the buckets at now, without changing them: for each
// limit, the whole requests or tokens it holds and the time until it is
// full, rounded up to the whole millisecond: what the headers of a real
// API can say (OpenAI's x-ratelimit-reset-* are whole milliseconds), so
// that a client reading them in production sees what the simulator's
// clients see (TestSameWorldPacer).
func (s *rateLimitState) RateLimits(now time.Duration) (policies.RateLimits, bool) {
	var l policies.RateLimits
	for k, out := range [3]*machine.RateLimit{&l.Requests, &l.InputTokens, &l.OutputTokens} {
		b := s.buckets[k]
		if b.limit == 0 {
			continue
		}
		if now > b.last {
			b.refill(now) // a copy: the state is not touched
		}
		full := b.limit * unitsPerToken
		*out = machine.RateLimit{Limit: b.limit, Remaining: max(b.level, 0) / unitsPerToken,
			Reset: machine.CeilMillisecond(time.Duration((full - b.level + b.limit - 1) / b.limit))}
	}
	return l, l.Known()
}

// rateLimitStats counts the requests the limits rejected (429) and those
// that can never fit them (413), and, for the requests limit, those it
// let through, the time its bucket sat full and the last arrival.
type rateLimitStats struct {
	RateLimited, TooLarge int
	passed                int64
	idle, lastArrival     time.Duration
}

// ReportCounters reports the rate limit's counters (the engine asks the
// inner model's first): server.rate_limited and server.too_large; with a requests
// limit, server.key_idle_ms (nanoseconds: the time, up to the key's last
// request, its requests bucket was full, so that its refill went unused),
// server.key_passed (requests through the limits) and server.key_capacity
// (the requests the limit allowed up to the last request: a minute's worth
// to start with, plus the refill).
func (s *rateLimitState) ReportCounters(c *Counters) {
	s.stats.report(c)
	if n := s.model.RequestsPerMinute; n > 0 {
		c.Add("server.key_idle_ms", int64(s.stats.idle))
		c.Add("server.key_passed", s.stats.passed)
		c.Add("server.key_capacity", n+int64(float64(n)*float64(s.stats.lastArrival)/float64(time.Minute)))
	}
}

// report adds the counts to c.
func (st rateLimitStats) report(c *Counters) {
	c.Add("server.rate_limited", int64(st.RateLimited))
	c.Add("server.too_large", int64(st.TooLarge))
}

// Capacity returns the inner model's capacity capped by the requests per
// minute, or only the latter (as requests per second) when the inner
// model has none; nil when neither limits requests.
func (m *RateLimit) Capacity() []CapacityStep {
	var inner []CapacityStep
	if p, ok := ModelAs[CapacityProfile](m.Inner); ok {
		inner = p.Capacity()
	}
	if m.RequestsPerMinute == 0 {
		return inner
	}
	if len(inner) == 0 {
		return []CapacityStep{{Requests: float64(m.RequestsPerMinute) / 60, Per: time.Second}}
	}
	out := make([]CapacityStep, len(inner))
	for i, st := range inner {
		if st.Per > 0 {
			st.Requests = math.Min(st.Requests, float64(m.RequestsPerMinute)*float64(st.Per)/float64(time.Minute))
		}
		out[i] = st
	}
	return out
}

var _ KeyLimiter = (*RateLimit)(nil)

// KeyLimits implements KeyLimiter.
func (m *RateLimit) KeyLimits() (requests, inputTokens, outputTokens int64) {
	return m.RequestsPerMinute, m.InputTokensPerMinute, m.OutputTokensPerMinute
}

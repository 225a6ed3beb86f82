package machine

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimit is one of an API key's limits as a response's rate-limit
// headers tell it: the bucket's size, what is left of it, and how long
// until it is full again.
type RateLimit struct {
	// Limit is the most the bucket holds (per minute); 0 means the
	// response says nothing of this limit.
	Limit int64
	// Remaining is what the bucket holds now, whole requests or tokens
	// (0 to Limit).
	Remaining int64
	// Reset is the time until the bucket is full again (never negative).
	Reset time.Duration
}

// RateLimits is what a response says of its key's limits: requests, input
// tokens and output tokens per minute, and Tokens, a token limit that
// names no direction (OpenAI's tokens per minute, Anthropic's most
// restrictive token limit). A zero field says nothing.
type RateLimits struct {
	Requests, InputTokens, OutputTokens, Tokens RateLimit
}

// Known reports whether l says anything.
func (l *RateLimits) Known() bool {
	return l != nil && (l.Requests.Limit > 0 || l.InputTokens.Limit > 0 || l.OutputTokens.Limit > 0 || l.Tokens.Limit > 0)
}

// A LimitsObserver is a Coordinator that reads Outcome.Limits (a Pacer,
// a ResetGate). The simulator works the limits out for a response only
// when its plan has one (Plan.ObservesLimits).
type LimitsObserver interface {
	Coordinator
	ObservesLimits()
}

// ObservesLimits reports whether a coordinator of p reads Outcome.Limits.
func (p *Plan) ObservesLimits() bool {
	for _, c := range p.Coordinators {
		if _, ok := c.(LimitsObserver); ok {
			return true
		}
	}
	return false
}

// Dialect is a provider's spelling of the rate-limit headers.
type Dialect uint8

const (
	// DialectAnthropic: anthropic-ratelimit-{requests,input-tokens,
	// output-tokens,tokens}-{limit,remaining,reset}, reset an RFC 3339 time.
	DialectAnthropic Dialect = iota
	// DialectOpenAI: x-ratelimit-{limit,remaining,reset}-{requests,tokens},
	// reset a Go-style duration in whole milliseconds ("12ms", "6m0s").
	DialectOpenAI
)

// anthropicNames are the bucket parts of Anthropic's headers, in the order
// of RateLimits' fields.
var anthropicNames = [4]string{"requests", "input-tokens", "output-tokens", "tokens"}

func (l *RateLimits) buckets() [4]*RateLimit {
	return [4]*RateLimit{&l.Requests, &l.InputTokens, &l.OutputTokens, &l.Tokens}
}

// SetRateLimitHeaders writes l into h in dialect d, for a response sent at
// now (an Anthropic reset is now + Reset, in UTC, with as many fractional
// digits as it needs). A limit with Limit 0 writes nothing. The token limit
// that names no direction (Anthropic's anthropic-ratelimit-tokens-*,
// OpenAI's only token limit) carries Tokens if it is set, else the more
// restrictive of InputTokens and OutputTokens (see Tightest).
func SetRateLimitHeaders(h http.Header, l RateLimits, d Dialect, now time.Time) {
	if d == DialectOpenAI {
		set := func(name string, b RateLimit) {
			if b.Limit <= 0 {
				return
			}
			h.Set("x-ratelimit-limit-"+name, strconv.FormatInt(b.Limit, 10))
			h.Set("x-ratelimit-remaining-"+name, strconv.FormatInt(b.Remaining, 10))
			h.Set("x-ratelimit-reset-"+name, openAIDuration(b.Reset))
		}
		set("requests", l.Requests)
		tokens := l.Tokens
		if tokens.Limit <= 0 {
			tokens = Tightest(l.InputTokens, l.OutputTokens)
		}
		set("tokens", tokens)
		return
	}
	if l.Tokens.Limit <= 0 {
		l.Tokens = Tightest(l.InputTokens, l.OutputTokens)
	}
	for i, b := range l.buckets() {
		if b.Limit <= 0 {
			continue
		}
		p := "anthropic-ratelimit-" + anthropicNames[i]
		h.Set(p+"-limit", strconv.FormatInt(b.Limit, 10))
		h.Set(p+"-remaining", strconv.FormatInt(b.Remaining, 10))
		h.Set(p+"-reset", now.Add(max(b.Reset, 0)).UTC().Format(time.RFC3339Nano))
	}
}

// openAIDuration writes a reset or wait as the OpenAI API does: a Go-style
// duration in whole milliseconds, rounded up so that a client that waits
// it is not early (0 for none). OpenAI's rate-limit guide
// (platform.openai.com/docs/guides/rate-limits, "Rate limits in headers")
// shows x-ratelimit-reset-requests "1s" and x-ratelimit-reset-tokens
// "6m0s"; responses quoted on its forum and in clients' code show "12ms",
// "20ms", "8.64s", "33.023s": never a finer unit than the millisecond.
func openAIDuration(d time.Duration) string {
	return CeilMillisecond(d).String()
}

// CeilMillisecond is d rounded up to a whole millisecond (0 for a negative
// d; the largest whole millisecond near the top of the range): the
// precision of a real API's rate-limit headers, which the simulator's
// limits report too, so that both sides of the wire agree.
func CeilMillisecond(d time.Duration) time.Duration {
	d = max(d, 0)
	if r := d % time.Millisecond; r != 0 && d <= math.MaxInt64-time.Millisecond {
		d += time.Millisecond - r
	}
	return d.Truncate(time.Millisecond)
}

// Tightest returns the more restrictive of two limits: the one with the
// smaller share of its limit remaining (a on a tie); a limit with Limit 0
// loses to any other.
func Tightest(a, b RateLimit) RateLimit {
	switch {
	case b.Limit <= 0:
		return a
	case a.Limit <= 0:
		return b
	}
	// a.Remaining/a.Limit <= b.Remaining/b.Limit, without division; both
	// products fit: limits are far below 2^31 in practice, and saturate
	// to a false comparison only beyond 2^63.
	if float64(a.Remaining)*float64(b.Limit) <= float64(b.Remaining)*float64(a.Limit) {
		return a
	}
	return b
}

// ParseRateLimits reads a response's rate-limit headers, in either
// dialect (Anthropic's first), received at now (an Anthropic reset time
// becomes the time from now until then; one in the past is 0). A limit
// counts only if its limit and remaining headers are both whole numbers
// (remaining is clamped to 0..limit); a reset that does not parse reads 0.
// ok is false if no limit counts.
func ParseRateLimits(h http.Header, now time.Time) (RateLimits, bool) {
	var l RateLimits
	if h == nil {
		return l, false
	}
	for i, b := range l.buckets() {
		p := "anthropic-ratelimit-" + anthropicNames[i]
		*b = parseLimit(h.Get(p+"-limit"), h.Get(p+"-remaining"))
		if b.Limit > 0 {
			if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(h.Get(p+"-reset"))); err == nil && t.After(now) {
				b.Reset = min(t.Sub(now), MaxParsedWait)
			}
		}
	}
	if l.Known() {
		return l, true
	}
	for _, x := range []struct {
		name string
		b    *RateLimit
	}{{"requests", &l.Requests}, {"tokens", &l.Tokens}} {
		*x.b = parseLimit(h.Get("x-ratelimit-limit-"+x.name), h.Get("x-ratelimit-remaining-"+x.name))
		if x.b.Limit > 0 {
			if d, err := time.ParseDuration(strings.TrimSpace(h.Get("x-ratelimit-reset-" + x.name))); err == nil && d > 0 {
				x.b.Reset = min(d, MaxParsedWait)
			}
		}
	}
	return l, l.Known()
}

// parseLimit reads a limit and its remaining; Limit 0 if either is not a
// whole number or the limit is not positive.
func parseLimit(limit, remaining string) RateLimit {
	n, err1 := strconv.ParseInt(strings.TrimSpace(limit), 10, 64)
	r, err2 := strconv.ParseInt(strings.TrimSpace(remaining), 10, 64)
	if err1 != nil || err2 != nil || n <= 0 {
		return RateLimit{}
	}
	return RateLimit{Limit: n, Remaining: min(max(r, 0), n)}
}

package machine

import (
	"math"
	"net/http"
	"regexp"
	"testing"
	"time"
)

// The headers of both dialects read back to what was written: exactly in
// OpenAI's (no input or output tokens: its tokens are the tighter of the
// two), and in Anthropic's with the tighter as the direction-less tokens.
func TestRateLimitHeadersRoundTrip(t *testing.T) {
	now := time.Date(2026, 12, 1, 13, 0, 0, 123456789, time.UTC)
	l := RateLimits{
		Requests:     RateLimit{Limit: 5000, Remaining: 4999, Reset: 12 * time.Millisecond},
		InputTokens:  RateLimit{Limit: 160_000, Remaining: 159_976, Reset: 9 * time.Millisecond},
		OutputTokens: RateLimit{Limit: 8000, Remaining: 100, Reset: 59250 * time.Millisecond},
	}
	h := http.Header{}
	SetRateLimitHeaders(h, l, DialectOpenAI, now)
	if h.Get("x-ratelimit-reset-requests") != "12ms" || h.Get("x-ratelimit-remaining-tokens") != "100" || h.Get("x-ratelimit-reset-tokens") != "59.25s" {
		t.Errorf("OpenAI headers %v", h)
	}
	got, ok := ParseRateLimits(h, now)
	if want := (RateLimits{Requests: l.Requests, Tokens: l.OutputTokens}); !ok || got != want {
		t.Errorf("OpenAI: read %+v, %v; want %+v", got, ok, want)
	}
	h = http.Header{}
	SetRateLimitHeaders(h, l, DialectAnthropic, now)
	if h.Get("anthropic-ratelimit-requests-reset") != "2026-12-01T13:00:00.135456789Z" {
		t.Errorf("Anthropic reset %q", h.Get("anthropic-ratelimit-requests-reset"))
	}
	got, ok = ParseRateLimits(h, now)
	want := l
	want.Tokens = l.OutputTokens
	if !ok || got != want {
		t.Errorf("Anthropic: read %+v, %v; want %+v", got, ok, want)
	}
	// A reset in the past is 0; a reset that does not parse is 0.
	got, _ = ParseRateLimits(h, now.Add(time.Minute))
	if got.Requests.Reset != 0 || got.Requests.Remaining != 4999 {
		t.Errorf("later: %+v", got.Requests)
	}
}

// Headers that do not make a limit count nothing; remaining is clamped.
func TestParseRateLimitsMalformed(t *testing.T) {
	for _, tt := range []struct {
		name string
		h    http.Header
		want RateLimit // Requests
		ok   bool
	}{
		{"none", http.Header{}, RateLimit{}, false},
		{"remaining only (RenderOpenAI's 429)", http.Header{"X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Requests": {"1.5s"}}, RateLimit{}, false},
		{"limit not a number", http.Header{"X-Ratelimit-Limit-Requests": {"5k"}, "X-Ratelimit-Remaining-Requests": {"1"}}, RateLimit{}, false},
		{"limit 0", http.Header{"X-Ratelimit-Limit-Requests": {"0"}, "X-Ratelimit-Remaining-Requests": {"0"}}, RateLimit{}, false},
		{"remaining above the limit", http.Header{"X-Ratelimit-Limit-Requests": {"10"}, "X-Ratelimit-Remaining-Requests": {"11"}, "X-Ratelimit-Reset-Requests": {"soon"}}, RateLimit{Limit: 10, Remaining: 10}, true},
		{"negative remaining, negative reset", http.Header{"X-Ratelimit-Limit-Requests": {"10"}, "X-Ratelimit-Remaining-Requests": {"-3"}, "X-Ratelimit-Reset-Requests": {"-1s"}}, RateLimit{Limit: 10}, true},
		{"Anthropic, reset not RFC 3339", http.Header{"Anthropic-Ratelimit-Requests-Limit": {"10"}, "Anthropic-Ratelimit-Requests-Remaining": {"4"}, "Anthropic-Ratelimit-Requests-Reset": {"Tue, 01 Dec 2026 13:00:00 GMT"}}, RateLimit{Limit: 10, Remaining: 4}, true},
	} {
		got, ok := ParseRateLimits(tt.h, time.Unix(0, 0))
		if ok != tt.ok || got.Requests != tt.want {
			t.Errorf("%s: %+v, %v; want %+v, %v", tt.name, got.Requests, ok, tt.want, tt.ok)
		}
	}
}

// The parser never panics and keeps its promises on any input.
func FuzzParseRateLimits(f *testing.F) {
	f.Add("5000", "4999", "12ms", "2026-12-01T13:00:00Z")
	f.Add("1", "-1", "1e9h", "x")
	f.Fuzz(func(t *testing.T, limit, remaining, reset, date string) {
		h := http.Header{}
		for _, p := range []string{"x-ratelimit-", "anthropic-ratelimit-requests-"} {
			h.Set(p+"limit-requests", limit)
			h.Set(p+"remaining-requests", remaining)
			h.Set(p+"reset-requests", reset)
		}
		h.Set("anthropic-ratelimit-requests-limit", limit)
		h.Set("anthropic-ratelimit-requests-remaining", remaining)
		h.Set("anthropic-ratelimit-requests-reset", date)
		l, ok := ParseRateLimits(h, time.Unix(0, 0))
		for _, b := range l.buckets() {
			if b.Limit < 0 || b.Remaining < 0 || b.Remaining > b.Limit || b.Reset < 0 || b.Reset > MaxParsedWait {
				t.Fatalf("out of range: %+v", *b)
			}
		}
		if ok != l.Known() {
			t.Fatalf("ok %v for %+v", ok, l)
		}
	})
}

// openAIReset is the OpenAI API's form of a reset: a Go duration in whole
// milliseconds ("12ms", "1s", "6m0s", "59.25s"), never finer.
var openAIReset = regexp.MustCompile(`^(0s|[1-9][0-9]{0,2}ms|([1-9][0-9]*h)?(([1-9][0-9]*h)?[0-9]+m)?[0-9]+(\.[0-9]{1,3})?s)$`)

// OpenAI resets are written in whole milliseconds, rounded up (a client
// that waits one does not come back early), both by SetRateLimitHeaders
// and by RenderOpenAI's 429, and read back to that. Before, a wait off
// the millisecond went out with nanoseconds: "11.985823ms".
func TestOpenAIResetWholeMilliseconds(t *testing.T) {
	now := time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		wait time.Duration
		want string
	}{
		{0, "0s"}, {-time.Second, "0s"}, {1, "1ms"}, {999 * time.Microsecond, "1ms"}, {11985823, "12ms"},
		{12 * time.Millisecond, "12ms"}, {20*time.Millisecond - 1, "20ms"}, {999999999, "1s"}, {time.Second + 1, "1.001s"},
		{8640 * time.Millisecond, "8.64s"}, {59999999999, "1m0s"}, {6 * time.Minute, "6m0s"},
		{86399999999999, "24h0m0s"}, {math.MaxInt64, "2562047h47m16.854s"},
	} {
		h := http.Header{}
		SetRateLimitHeaders(h, RateLimits{Requests: RateLimit{Limit: 60, Remaining: 0, Reset: tt.wait}}, DialectOpenAI, now)
		got := h.Get("x-ratelimit-reset-requests")
		if got != tt.want || !openAIReset.MatchString(got) {
			t.Errorf("reset %d ns: %q, want %q", tt.wait, got, tt.want)
		}
		l, ok := ParseRateLimits(h, now)
		if want, _ := time.ParseDuration(tt.want); !ok || l.Requests.Reset != min(want, MaxParsedWait) {
			t.Errorf("reset %q reads back as %+v, %v", got, l.Requests, ok)
		}
		if tt.wait <= 0 {
			continue
		}
		r := RenderOpenAI(Outcome{Class: RetryAfter, Status: 429, ServerWait: tt.wait})
		if got := r.Header.Get("x-ratelimit-reset-requests"); got != tt.want {
			t.Errorf("429 with a wait of %d ns: reset %q, want %q", tt.wait, got, tt.want)
		}
	}
}

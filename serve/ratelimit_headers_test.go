package serve_test

import (
	"regexp"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// sampleKey is the key of OpenAI's published sample: 5,000 requests and
// 160,000 tokens per minute, 24 tokens a request, answered at once.
func sampleKey() *sim.RateLimit {
	return &sim.RateLimit{RequestsPerMinute: 5000, InputTokensPerMinute: 160_000, InputTokens: 24,
		Inner: &sim.CapacityWindows{ResponseTime: sim.Fixed(0), Phases: []sim.Phase{{Admit: 1 << 30, Window: time.Second, Reject: rejection529}}}}
}

// TestRateLimitHeadersOpenAISample: the first request of the sample's key
// gets exactly the sample's headers (remaining 4999 → 12ms, 159976 → 9ms),
// the next one on the Messages API Anthropic's, reset as an RFC 3339 time.
func TestRateLimitHeadersOpenAISample(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, sampleKey())
		resp, body := postTo(t, h, "/v1/chat/completions", chatBody)
		want := map[string]string{
			"x-ratelimit-limit-requests": "5000", "x-ratelimit-remaining-requests": "4999", "x-ratelimit-reset-requests": "12ms",
			"x-ratelimit-limit-tokens": "160000", "x-ratelimit-remaining-tokens": "159976", "x-ratelimit-reset-tokens": "9ms",
		}
		for k, v := range want {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s: %q, want %q (%d %s)", k, got, v, resp.StatusCode, body)
			}
		}
		if resp.Header.Get("anthropic-ratelimit-requests-limit") != "" {
			t.Errorf("an OpenAI answer carries Anthropic's headers: %v", resp.Header)
		}
		now := time.Now()
		resp, _ = postTo(t, h, "/v1/messages", okRequest)
		want = map[string]string{
			"anthropic-ratelimit-requests-limit": "5000", "anthropic-ratelimit-requests-remaining": "4998",
			"anthropic-ratelimit-requests-reset":     now.Add(24 * time.Millisecond).UTC().Format(time.RFC3339Nano),
			"anthropic-ratelimit-input-tokens-limit": "160000", "anthropic-ratelimit-input-tokens-remaining": "159952",
			"anthropic-ratelimit-input-tokens-reset": now.Add(18 * time.Millisecond).UTC().Format(time.RFC3339Nano),
			"anthropic-ratelimit-tokens-remaining":   "159952",
		}
		for k, v := range want {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s: %q, want %q", k, got, v)
			}
		}
		if resp.Header.Get("x-ratelimit-limit-requests") != "" || resp.Header.Get("anthropic-ratelimit-output-tokens-limit") != "" {
			t.Errorf("unexpected headers: %v", resp.Header)
		}
		l, ok := machine.ParseRateLimits(resp.Header, now)
		if w := (machine.RateLimit{Limit: 5000, Remaining: 4998, Reset: 24 * time.Millisecond}); !ok || l.Requests != w {
			t.Errorf("parsed %+v, %v; want requests %+v", l, ok, w)
		}
	})
}

// TestRateLimitHeadersOnEveryResponse: a 429 carries the buckets too
// (replacing RenderOpenAI's remaining 0 and reset = the wait), a stream
// carries them at its start, and at speed 10 every reset is a tenth: 2
// requests per minute, one request a model second, so the second leaves
// 1/30 of a request (reset 59 s, 5.9 s real) and the third is refused
// with 2/30 (58 s, 5.8 s).
func TestRateLimitHeadersOnEveryResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := &sim.RateLimit{RequestsPerMinute: 2, Inner: admitAll}
		h := newHandler(t, key, serve.WithSpeed(10))
		for i, want := range []struct {
			status           int
			remaining, reset string
		}{
			{200, "1", "3s"}, {200, "0", "5.9s"}, {429, "0", "5.8s"},
		} {
			// Each request is sent at once, the stream's headers at its start.
			resp, _ := postTo(t, h, "/v1/chat/completions", chatStream)
			if resp.StatusCode != want.status || resp.Header.Get("x-ratelimit-remaining-requests") != want.remaining ||
				resp.Header.Get("x-ratelimit-reset-requests") != want.reset {
				t.Errorf("request %d: %d remaining %q reset %q; want %+v", i, resp.StatusCode,
					resp.Header.Get("x-ratelimit-remaining-requests"), resp.Header.Get("x-ratelimit-reset-requests"), want)
			}
			if i < 2 {
				continue // each stream takes the model's second: the next request comes 1 s (model) later
			}
			out := policies.ClassifyResponse(resp.StatusCode, resp.Header, nil, time.Now())
			if out.Class != policies.RetryAfter || out.Limits == nil || out.Limits.Requests != (machine.RateLimit{Limit: 2, Reset: 5800 * time.Millisecond}) {
				t.Errorf("429 reads as %+v (limits %+v)", out, out.Limits)
			}
		}
	})
}

// At a speed that makes the sample's resets fall off the millisecond
// (12 ms / 7 = 1.714286 ms), the OpenAI reset headers are still whole
// milliseconds, rounded up, as the API writes them, and read back with
// ParseRateLimits. Before, they went out as "1.714286ms".
func TestRateLimitHeadersOpenAIWholeMilliseconds(t *testing.T) {
	whole := regexp.MustCompile(`^(0s|[1-9][0-9]{0,2}ms|(([0-9]+h)?[0-9]+m)?[0-9]+(\.[0-9]{1,3})?s)$`)
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, sampleKey(), serve.WithSpeed(7))
		resp, body := postTo(t, h, "/v1/chat/completions", chatBody)
		for k, want := range map[string]string{"x-ratelimit-reset-requests": "2ms", "x-ratelimit-reset-tokens": "2ms"} {
			if got := resp.Header.Get(k); got != want || !whole.MatchString(got) {
				t.Errorf("%s: %q, want %q (%d %s)", k, got, want, resp.StatusCode, body)
			}
		}
		l, ok := machine.ParseRateLimits(resp.Header, time.Now())
		if !ok || l.Requests.Reset != 2*time.Millisecond || l.Tokens.Reset != 2*time.Millisecond {
			t.Errorf("read back as %+v, %v", l, ok)
		}
	})
}

package sim

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// TestRateLimitReportsBuckets: the buckets as the headers tell them, at
// any time, without changing them (OpenAI's sample: 5,000 requests and
// 160,000 tokens per minute, one request of 24 tokens).
func TestRateLimitReportsBuckets(t *testing.T) {
	m := &RateLimit{RequestsPerMinute: 5000, InputTokensPerMinute: 160_000, InputTokens: 24, Inner: &CapacityWindows{ResponseTime: Fixed(0), Phases: []Phase{{Admit: 1 << 30, Window: sec}}}}
	s := m.NewServer(ServerRand(1))
	lr := s.(LimitReporter)
	if l, ok := lr.RateLimits(0); !ok || l.Requests != (machine.RateLimit{Limit: 5000, Remaining: 5000}) {
		t.Errorf("before any request: %+v, %v", l, ok)
	}
	s.Arrive(0, Request{})
	for _, tt := range []struct {
		at            time.Duration
		requests, tok machine.RateLimit
	}{
		{0, machine.RateLimit{Limit: 5000, Remaining: 4999, Reset: 12 * time.Millisecond}, machine.RateLimit{Limit: 160_000, Remaining: 159_976, Reset: 9 * time.Millisecond}},
		{6 * time.Millisecond, machine.RateLimit{Limit: 5000, Remaining: 4999, Reset: 6 * time.Millisecond}, machine.RateLimit{Limit: 160_000, Remaining: 159_992, Reset: 3 * time.Millisecond}},
		{time.Second, machine.RateLimit{Limit: 5000, Remaining: 5000}, machine.RateLimit{Limit: 160_000, Remaining: 160_000}},
		{0, machine.RateLimit{Limit: 5000, Remaining: 4999, Reset: 12 * time.Millisecond}, machine.RateLimit{Limit: 160_000, Remaining: 159_976, Reset: 9 * time.Millisecond}}, // unchanged
	} {
		l, ok := lr.RateLimits(tt.at)
		if !ok || l.Requests != tt.requests || l.InputTokens != tt.tok || l.OutputTokens != (machine.RateLimit{}) {
			t.Errorf("at %v: %+v; want requests %+v, input tokens %+v", tt.at, l, tt.requests, tt.tok)
		}
	}
	if _, ok := (&RateLimit{InputTokensPerMinute: 0, RequestsPerMinute: 0, Inner: m.Inner}).NewServer(ServerRand(1)).(LimitReporter).RateLimits(0); ok {
		t.Error("a key without limits reports some")
	}
}

// TestRateLimitCountsIdleAndCapacity: 60 requests per minute, requests at
// 0 s, 0.5 s and 10 s (all pass): the bucket, 1.5 requests short after
// 0.5 s, was full again at 2 s, so 8 s of its refill went unused (and none
// before the first request, at 0). It allowed 60 + 10 requests up to the
// last one.
func TestRateLimitCountsIdleAndCapacity(t *testing.T) {
	m := &RateLimit{RequestsPerMinute: 60, Inner: admitAll(0)}
	s := m.NewServer(ServerRand(1))
	for _, at := range []time.Duration{0, 500 * time.Millisecond, 10 * sec} {
		s.Arrive(at, Request{})
	}
	var c Counters
	reportCounters(s, &c) // as a run asks them, the servers inside first
	for name, want := range map[string]int64{"server.key_idle_ms": int64(8 * sec), "server.key_passed": 3, "server.key_capacity": 70} {
		if got, _ := c.Get(name); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
}

// TestRateLimitRetryAfterGrows: with growth 2, each 429 in a row says
// twice the last one's factor of the wait the bucket needs, up to the
// bound; a request let through starts again from 1.
func TestRateLimitRetryAfterGrows(t *testing.T) {
	m := &RateLimit{RequestsPerMinute: 60, RetryAfterGrowth: 2, MaxRetryAfter: 5 * sec, Inner: admitAll(0)}
	s := m.NewServer(ServerRand(1))
	for range 60 {
		s.Arrive(0, Request{})
	}
	for i, tt := range []struct {
		at   time.Duration
		want time.Duration // the retry-after; 0: let through
	}{
		{0, sec}, {0, 2 * sec}, {0, 4 * sec}, {0, 5 * sec}, {0, 5 * sec}, // the bucket needs 1 s; growth 1, 2, 4, 8 (bounded)
		{500 * time.Millisecond, 5 * sec}, // needs 0.5 s, times 16: bounded
		{sec, 0},                          // it fits: let through
		{sec, sec},                        // from 1 again
	} {
		got := s.Arrive(tt.at, Request{}).Outcome
		if got.ServerWait != tt.want || (tt.want == 0) != (got.Class == policies.Success) {
			t.Errorf("request %d at %v: %+v, want a wait of %v", i, tt.at, got, tt.want)
		}
	}
	for _, bad := range []RateLimit{{RequestsPerMinute: 1, RetryAfterGrowth: -1, Inner: admitAll(0)}, {RequestsPerMinute: 1, RetryAfterGrowth: 1e6, Inner: admitAll(0)},
		{RequestsPerMinute: 1, MaxRetryAfter: -1, Inner: admitAll(0)}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validates", bad)
		}
	}
}

package sim

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

func tooManyRequests(wait time.Duration) policies.Outcome {
	return policies.Outcome{Class: policies.RetryAfter, Status: 429, ServerWait: wait}
}

// TestRateLimitRules drives rate limits by hand: every bucket starts with
// a minute's worth and refills at its rate per minute.
func TestRateLimitRules(t *testing.T) {
	type step struct {
		at      time.Duration
		in, out int
		want    policies.Outcome
	}
	tooLarge := policies.Outcome{Class: policies.Terminal, Status: 413}
	for _, tt := range []struct {
		name  string
		m     RateLimit
		steps []step
		stats rateLimitStats
	}{
		// 2 per minute: the third waits for one request's refill, 30 s; at
		// 10 s, 20 s remain; at 30 s it fits.
		{"requests", RateLimit{RequestsPerMinute: 2},
			[]step{{0, 0, 0, policies.Outcome{}}, {0, 0, 0, policies.Outcome{}}, {0, 0, 0, tooManyRequests(30 * sec)},
				{10 * sec, 0, 0, tooManyRequests(20 * sec)}, {30 * sec, 0, 0, policies.Outcome{}}, {30 * sec, 0, 0, tooManyRequests(30 * sec)}},
			rateLimitStats{RateLimited: 3}},
		// 1000 input tokens per minute, 300 a request (the default): three
		// fit; the fourth needs 200 more tokens, 12 s of refill; after 6 s,
		// 100 have come back, so 6 s remain.
		{"input tokens", RateLimit{InputTokensPerMinute: 1000, InputTokens: 300},
			[]step{{0, 0, 0, policies.Outcome{}}, {0, 0, 0, policies.Outcome{}}, {0, 0, 0, policies.Outcome{}},
				{0, 0, 0, tooManyRequests(12 * sec)}, {6 * sec, 0, 0, tooManyRequests(6 * sec)}, {12 * sec, 0, 0, policies.Outcome{}}},
			rateLimitStats{RateLimited: 2}},
		// Rounded up to whole seconds; the longest wait of all limits wins;
		// a request bigger than a minute's worth never fits.
		{"output tokens, rounded", RateLimit{RequestsPerMinute: 1000, OutputTokensPerMinute: 700, RetryAfterUnit: sec},
			[]step{{0, 0, 600, policies.Outcome{}}, {0, 0, 200, tooManyRequests(9 * sec)}, {0, 0, 701, tooLarge}},
			rateLimitStats{RateLimited: 1, TooLarge: 1}},
		{"no limits", RateLimit{}, []step{{0, 1 << 30, 1 << 30, policies.Outcome{}}}, rateLimitStats{}},
	} {
		tt.m.Inner = admitAll(0)
		if err := tt.m.Validate(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		srv := tt.m.NewServer(rand.New(rand.NewPCG(1, 1)))
		for i, s := range tt.steps {
			if got := srv.Arrive(s.at, Request{InputTokens: s.in, OutputTokens: s.out}); got.Outcome != s.want || got.At != s.at {
				t.Errorf("%s: step %d at %v: %+v, want %+v at once", tt.name, i, s.at, got, s.want)
			}
		}
		if got := srv.(*rateLimitState).stats; got.RateLimited != tt.stats.RateLimited || got.TooLarge != tt.stats.TooLarge {
			t.Errorf("%s: stats %+v, want %+v", tt.name, got, tt.stats)
		}
	}
}

// A rate limit through the engine, by hand: 60 requests per minute in
// front of a server answering in 100 ms, 62 clients at t = 0 with a gated
// policy. 60 pass at once; the 61st gets a retry-after of 1 s, the 62nd
// too (its 429 comes with the same wait: nothing was taken). The gate
// holds both until 1 s: one passes (one request refilled), the other gets
// 1 s more and passes at 2 s.
func TestRateLimitRunByHand(t *testing.T) {
	var log []exchange
	c := Config{Seed: 1, Workload: Burst{Clients: 62},
		Server: recorder{&RateLimit{RequestsPerMinute: 60, Inner: admitAll(100 * ms)}, &log},
		Policy: Policy{Name: "gated", Coordinators: []machine.Spec{machine.GateConfig{}}, Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 5}}}
	r := mustRun(t, c)
	if r.Completed != 62 || r.Attempts != 65 || r.LastCompletion != 2100*ms || counter(r, "server.rate_limited") != 3 {
		t.Errorf("completed %d, attempts %d, last at %v, rate limited %d", r.Completed, r.Attempts, r.LastCompletion, counter(r, "server.rate_limited"))
	}
	var late []time.Duration
	for _, e := range log[60:] {
		late = append(late, e.at)
	}
	if want := []time.Duration{0, 0, sec, sec, 2 * sec}; !slices.Equal(late, want) {
		t.Errorf("requests after the first 60 at %v, want %v", late, want)
	}
}

func TestRateLimitValidation(t *testing.T) {
	for _, tt := range []struct {
		m    RateLimit
		want string
	}{
		{RateLimit{RequestsPerMinute: -1, Inner: admitAll(0)}, "requests per minute"},
		{RateLimit{InputTokensPerMinute: MaxPerMinute + 1, Inner: admitAll(0)}, "input tokens per minute"},
		{RateLimit{InputTokens: -1, Inner: admitAll(0)}, "default token"},
		{RateLimit{RejectAfter: -1, Inner: admitAll(0)}, "negative"},
		{RateLimit{}, "no inner"},
		{RateLimit{Inner: &Queue{}}, "concurrency"},
		// Its pending writes would reach the engine through the rate limit.
		{RateLimit{RequestsPerMinute: 60, Inner: &Contention{Network: Fixed(ms)}}, "decides requests after they arrive"},
	} {
		if err := tt.m.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one containing %q", tt.m, err, tt.want)
		}
	}
}

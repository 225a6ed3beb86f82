package machine

import (
	"testing"
	"time"
)

var (
	timeoutOut  = Outcome{Class: Transient}              // no response
	serverError = Outcome{Class: Transient, Status: 500} // a response
	overloaded  = Outcome{Class: Capacity, Status: 529}
	rateLimited = Outcome{Class: RetryAfter, Status: 429, ServerWait: time.Second}
)

func retryAsk(last Outcome) Ask { return Ask{Retry: true, Last: last} }

func TestRetryQuotaPrices(t *testing.T) {
	newer := RetryQuotaConfig{RetryCost: 14, TimeoutRetryCost: 14, ThrottleRetryCost: 5}
	for _, tc := range []struct {
		name string
		cfg  RetryQuotaConfig
		last Outcome
		cost int
	}{
		{"after a timeout", RetryQuotaConfig{}, timeoutOut, 10},
		{"after a 500", RetryQuotaConfig{}, serverError, 5},
		{"after a 529", RetryQuotaConfig{}, overloaded, 5},
		{"after a 429", RetryQuotaConfig{}, rateLimited, 5},
		{"newer schedule, after a timeout", newer, timeoutOut, 14},
		{"newer schedule, after a 500", newer, serverError, 14},
		{"newer schedule, after a 529", newer, overloaded, 5},
		{"newer schedule, after a 429", newer, rateLimited, 5},
	} {
		q, err := NewRetryQuota(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if a := q.Admit(t0, retryAsk(tc.last)); a.Kind != AdmitGrant {
			t.Fatalf("%s: %+v, want a grant", tc.name, a)
		}
		if got := 500 - q.Tokens(); got != tc.cost {
			t.Errorf("%s: cost %d, want %d", tc.name, got, tc.cost)
		}
	}
	if _, err := NewRetryQuota(RetryQuotaConfig{RetryCost: -1}); err == nil {
		t.Error("negative cost accepted")
	}
}

// A quota of 20 worked by hand: three retries in flight drain it, a fourth
// cannot pay; a successful retry gets its cost back, a failed one does not,
// an unused one does; a successful first attempt adds 1; never above 20.
func TestRetryQuotaByHand(t *testing.T) {
	q, _ := NewRetryQuota(RetryQuotaConfig{Capacity: 20})
	steps := []struct {
		do   func() AdmitKind
		want AdmitKind
		left int
	}{
		{func() AdmitKind { return q.Admit(t0, Ask{}).Kind }, AdmitPass, 20}, // first attempts are free
		{func() AdmitKind { return q.Admit(t0, retryAsk(timeoutOut)).Kind }, AdmitGrant, 10},
		{func() AdmitKind { return q.Admit(t0, retryAsk(overloaded)).Kind }, AdmitGrant, 5},
		{func() AdmitKind { return q.Admit(t0, retryAsk(serverError)).Kind }, AdmitGrant, 0},
		{func() AdmitKind { return q.Admit(t0, retryAsk(serverError)).Kind }, AdmitDeny, 0},
		{func() AdmitKind { // the timeout retry succeeded: +10
			q.Settle(t0, Settlement{Retry: true, Last: timeoutOut, Sent: true})
			return 0
		}, 0, 10},
		{func() AdmitKind { // the 529 retry failed: nothing back
			q.Settle(t0, Settlement{Retry: true, Last: overloaded, Sent: true, Outcome: overloaded})
			return 0
		}, 0, 10},
		{func() AdmitKind { // the 500 retry went unused: +5
			q.Settle(t0, Settlement{Retry: true, Last: serverError})
			return 0
		}, 0, 15},
		{func() AdmitKind { q.Observe(t0, 1, Outcome{}); return 0 }, 0, 16},                // first attempt succeeded
		{func() AdmitKind { q.Observe(t0, 2, Outcome{}); return 0 }, 0, 16},                // a retry's refund is Settle's
		{func() AdmitKind { q.Observe(t0, 1, overloaded); return 0 }, 0, 16},               // failures refund nothing
		{func() AdmitKind { q.Settle(t0, Settlement{Last: timeoutOut}); return 0 }, 0, 20}, // capped
	}
	for i, s := range steps {
		if got := s.do(); got != s.want {
			t.Fatalf("step %d: admission %v, want %v", i, got, s.want)
		}
		if got := q.Tokens(); got != s.left {
			t.Fatalf("step %d: %d tokens, want %d", i, got, s.left)
		}
	}
	if a := q.Admit(t0, retryAsk(serverError)); a.Kind != AdmitGrant {
		t.Fatalf("refilled quota refused: %+v", a)
	}
	if a := (&RetryQuota{cfg: DefaultRetryQuota()}).Admit(t0, retryAsk(serverError)); a.Kind != AdmitDeny || a.Reason != StopBudget || a.Cause != ErrRetryBudget {
		t.Errorf("empty quota: %+v, want deny (budget, ErrRetryBudget)", a)
	}
}

func TestRetryThrottlingRules(t *testing.T) {
	fail, ok, term := overloaded, Outcome{}, Outcome{Class: Terminal, Status: 400}
	for _, tc := range []struct {
		name     string
		cfg      RetryThrottlingConfig
		outcomes []Outcome
		tokens   float64
		allowed  bool
	}{
		{"full", RetryThrottlingConfig{}, nil, 10, true},
		{"4 failures: 6 > 5", RetryThrottlingConfig{}, []Outcome{fail, fail, fail, fail}, 6, true},
		{"5 failures: 5 is not above 5", RetryThrottlingConfig{}, []Outcome{fail, fail, fail, fail, fail}, 5, false},
		{"then a success: 5.1", RetryThrottlingConfig{}, []Outcome{fail, fail, fail, fail, fail, ok}, 5.1, true},
		{"terminal failures do not count", RetryThrottlingConfig{}, []Outcome{term, term, term, term, term, term}, 10, true},
		{"timeouts and 429s count", RetryThrottlingConfig{}, []Outcome{timeoutOut, rateLimited, serverError, fail, fail}, 5, false},
		{"never below 0", RetryThrottlingConfig{MaxTokens: 1}, []Outcome{fail, fail, fail}, 0, false},
		{"never above max", RetryThrottlingConfig{MaxTokens: 2, TokenRatio: 0.75}, []Outcome{fail, ok, ok}, 2, true},
		{"thousandths exact", RetryThrottlingConfig{MaxTokens: 2, TokenRatio: 0.001}, []Outcome{fail, ok}, 1.001, true},
	} {
		rt, err := NewRetryThrottling(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range tc.outcomes {
			rt.Observe(t0, i+1, o)
		}
		if got := rt.Tokens(); got != tc.tokens {
			t.Errorf("%s: %v tokens, want %v", tc.name, got, tc.tokens)
		}
		a := rt.Admit(t0, retryAsk(fail))
		if got := a.Kind == AdmitPass; got != tc.allowed || !got && (a.Kind != AdmitDeny || a.Reason != StopBudget) {
			t.Errorf("%s: retry admission %+v, want allowed=%v", tc.name, a, tc.allowed)
		}
		if a := rt.Admit(t0, Ask{}); a.Kind != AdmitPass {
			t.Errorf("%s: a first attempt was not let through: %+v", tc.name, a)
		}
	}
	for _, bad := range []RetryThrottlingConfig{{MaxTokens: -1}, {MaxTokens: 1001}, {TokenRatio: -0.1}, {TokenRatio: 0.0004}} {
		if _, err := NewRetryThrottling(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// gRPC's throttling worked by hand with 4 tokens and ratio 0.5: the
// threshold is 2.
func TestRetryThrottlingByHand(t *testing.T) {
	rt, _ := NewRetryThrottling(RetryThrottlingConfig{MaxTokens: 4, TokenRatio: 0.5})
	for i, s := range []struct {
		out     *Outcome // observed before asking; nil: nothing
		tokens  float64
		allowed bool
	}{
		{nil, 4, true},
		{&overloaded, 3, true},
		{&overloaded, 2, false},
		{&Outcome{}, 2.5, true},
		{&timeoutOut, 1.5, false},
		{&Outcome{}, 2, false},
		{&Outcome{}, 2.5, true},
	} {
		if s.out != nil {
			rt.Observe(t0, 1, *s.out)
		}
		if got := rt.Tokens(); got != s.tokens {
			t.Fatalf("step %d: %v tokens, want %v", i, got, s.tokens)
		}
		if got := rt.Admit(t0, retryAsk(overloaded)).Kind == AdmitPass; got != s.allowed {
			t.Fatalf("step %d: allowed %v, want %v", i, got, s.allowed)
		}
	}
}

func TestRatioBudgetRule(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		percent, minPerSecond int
		window                time.Duration
		requests, retries     int
		allowed               bool
	}{
		{"20% of 10 requests: a 2nd retry", 20, -1, 10 * time.Second, 10, 1, true},
		{"20% of 10 requests: no 3rd", 20, -1, 10 * time.Second, 10, 2, false},
		{"20% of 4 requests: none", 20, -1, 10 * time.Second, 4, 0, false},
		{"no percent, reserve 10/s over 1 s", -1, 10, time.Second, 0, 9, true},
		{"no percent, reserve spent", -1, 10, time.Second, 0, 10, false},
		{"reserve over 2.5 s rounds down", -1, 1, 2500 * time.Millisecond, 0, 2, false},
		{"both add up", 50, 1, 2 * time.Second, 4, 3, true},
		{"both add up, spent", 50, 1, 2 * time.Second, 4, 4, false},
		{"defaults: 20% + 100", 0, 0, 0, 5, 100, true},
		{"defaults: spent", 0, 0, 0, 5, 101, false},
	} {
		b, err := NewRatioBudget(RatioBudgetConfig{Percent: tc.percent, MinPerSecond: tc.minPerSecond, Window: tc.window})
		if err != nil {
			t.Fatal(err)
		}
		nextRetryAllowed(t, tc.name, b, tc.requests, tc.retries, tc.allowed)
	}
}

// nextRetryAllowed sends requests first attempts and retries granted
// retries through b at one instant, then checks whether one more retry
// is granted (or refused with StopBudget).
func nextRetryAllowed(t *testing.T, name string, b *RatioBudget, requests, retries int, allowed bool) {
	t.Helper()
	for range requests {
		b.Admit(t0, Ask{})
	}
	for i := range retries {
		if a := b.Admit(t0, retryAsk(overloaded)); a.Kind != AdmitGrant {
			t.Fatalf("%s: setting up retry %d: %+v", name, i, a)
		}
	}
	a := b.Admit(t0, retryAsk(overloaded))
	if got := a.Kind == AdmitGrant; got != allowed || !got && a.Reason != StopBudget {
		t.Errorf("%s: %+v, want allowed=%v", name, a, allowed)
	}
}

// The ratio budget worked by hand over a 10 s window in 1 s slots, 20 %, no
// reserve: counts are forgotten slot by slot, and an unused grant is taken
// off again.
func TestRatioBudgetByHand(t *testing.T) {
	b, _ := NewRatioBudget(RatioBudgetConfig{Percent: 20, MinPerSecond: -1})
	s := time.Second
	for range 10 {
		b.Admit(at(0), Ask{}) // slot 0: 10 requests
	}
	for i, step := range []struct {
		at      time.Duration
		allowed bool
	}{
		{1 * s, true}, {1 * s, true}, {1 * s, false}, // 2 of 10 retried
		{9900 * ms, false}, // still 10 requests, 2 retries
		{10 * s, false},    // slot 0 forgotten: 0 requests
	} {
		if got := b.Admit(at(step.at), retryAsk(overloaded)).Kind == AdmitGrant; got != step.allowed {
			t.Fatalf("step %d at %v: allowed %v, want %v", i, step.at, got, step.allowed)
		}
	}
	if req, ret := b.Counts(at(10 * s)); req != 0 || ret != 2 {
		t.Fatalf("at 10s: %d requests, %d retries; want 0, 2", req, ret)
	}
	for range 15 {
		b.Admit(at(10*s), Ask{})
	}
	// 15 requests allow 3 retries; 2 are counted until 11 s.
	if a := b.Admit(at(10*s), retryAsk(overloaded)); a.Kind != AdmitGrant {
		t.Fatalf("3rd retry of 15 requests: %+v", a)
	}
	if a := b.Admit(at(10*s), retryAsk(overloaded)); a.Kind != AdmitDeny {
		t.Fatalf("4th retry of 15 requests: %+v", a)
	}
	b.Settle(at(10*s), Settlement{Retry: true, Last: overloaded}) // the 3rd went unused
	b.Settle(at(10*s), Settlement{})                              // and a request
	if req, ret := b.Counts(at(10 * s)); req != 14 || ret != 2 {
		t.Fatalf("after settling: %d requests, %d retries; want 14, 2", req, ret)
	}
	if req, ret := b.Counts(at(11 * s)); req != 14 || ret != 0 {
		t.Fatalf("at 11s: %d requests, %d retries; want 14, 0", req, ret)
	}
	if req, ret := b.Counts(at(25 * s)); req != 0 || ret != 0 {
		t.Fatalf("at 25s: %d requests, %d retries; want none", req, ret)
	}
}

func TestWindowSlots(t *testing.T) {
	w, err := newWindow(time.Second, 4) // 250 ms slots
	if err != nil {
		t.Fatal(err)
	}
	w.at(at(100 * ms))[0]++ // anchor: slot 0 is [100, 350) ms
	w.at(at(349 * ms))[0]++
	w.at(at(350 * ms))[1]++
	w.at(at(200 * ms))[1]++ // earlier than the newest slot: counts there
	for _, tc := range []struct {
		at   time.Duration
		a, b int64
	}{
		{350 * ms, 2, 2},
		{1099 * ms, 2, 2}, // slot 3
		{1100 * ms, 0, 2}, // slot 4: slot 0 gone
		{1350 * ms, 0, 0},
		{time.Hour, 0, 0},
	} {
		if a, b := w.sums(at(tc.at)); a != tc.a || b != tc.b {
			t.Errorf("at %v: %d, %d; want %d, %d", tc.at, a, b, tc.a, tc.b)
		}
	}
	for _, bad := range []struct {
		length time.Duration
		slots  int
	}{{0, 1}, {time.Second, 0}, {3, 4}} {
		if _, err := newWindow(bad.length, bad.slots); err == nil {
			t.Errorf("window of %v in %d slots accepted", bad.length, bad.slots)
		}
	}
}

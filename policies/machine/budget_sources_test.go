package machine

import "testing"

// With CountRetries the budget is the SRE book's: a retry may start while
// retries are below Percent % of all requests, retries included.
func TestRatioBudgetCountRetries(t *testing.T) {
	for _, tc := range []struct {
		name              string
		requests, retries int
		allowed           bool
	}{
		{"1 request, no retry yet: 0% is below 10%", 1, 0, true},
		{"9 requests, 1 retry: 10% is not below 10%", 9, 1, false},
		{"10 requests, 1 retry: 1 of 11", 10, 1, true},
		{"18 requests, 2 retries: 2 of 20", 18, 2, false},
		{"19 requests, 2 retries: 2 of 21", 19, 2, true},
	} {
		b, err := NewRatioBudget(RatioBudgetConfig{Percent: 10, MinPerSecond: -1, CountRetries: true})
		if err != nil {
			t.Fatal(err)
		}
		nextRetryAllowed(t, tc.name, b, tc.requests, tc.retries, tc.allowed)
	}
}

// gRFC A6 ignores a token ratio's decimals beyond the third.
func TestRetryThrottlingRatioDecimals(t *testing.T) {
	for _, tc := range []struct {
		ratio float64
		after float64 // after one failure and one success, from 2 tokens
	}{{0.5466, 1.546}, {0.29, 1.29}, {0.001, 1.001}, {0.1, 1.1}} {
		th, err := NewRetryThrottling(RetryThrottlingConfig{MaxTokens: 2, TokenRatio: tc.ratio})
		if err != nil {
			t.Fatal(err)
		}
		th.Observe(t0, 1, overloaded)
		th.Observe(t0, 1, Outcome{})
		if got := th.Tokens(); got != tc.after {
			t.Errorf("ratio %v: %v tokens, want %v", tc.ratio, got, tc.after)
		}
	}
	if err := (RetryThrottlingConfig{TokenRatio: 0.0009}).Validate(); err == nil {
		t.Error("a ratio of 0.0009 (0 in thousandths) was accepted")
	}
}

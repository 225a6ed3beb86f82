package machine

import "testing"

// TestRetryQuotaRefundSchedules follows one retry that succeeds under the
// three refund schedules of the AWS SDK for Go v2: v1.48.0 on (the cost
// back only), the standard retryer before it (cost back plus the
// increment) and adaptive mode before it (no increment at all).
func TestRetryQuotaRefundSchedules(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       RetryQuotaConfig
		afterRetr int // after the retry succeeded
		afterOK   int // after a later first attempt succeeded
	}{
		{"first attempts only", RetryQuotaConfig{Capacity: 20}, 15, 16},
		{"every success", RetryQuotaConfig{Capacity: 20, RefundEverySuccess: true}, 16, 17},
		{"no increment", RetryQuotaConfig{Capacity: 20, SuccessRefund: -1}, 15, 15},
	} {
		q, err := NewRetryQuota(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		q.Admit(t0, retryAsk(serverError)) // 20 → 15
		q.Admit(t0, retryAsk(serverError)) // 15 → 10: this retry succeeds
		q.Observe(t0, 2, Outcome{})
		q.Settle(t0, Settlement{Retry: true, Last: serverError, Sent: true})
		if got := q.Tokens(); got != tc.afterRetr {
			t.Errorf("%s: %d tokens after the successful retry, want %d", tc.name, got, tc.afterRetr)
		}
		q.Observe(t0, 1, Outcome{})
		if got := q.Tokens(); got != tc.afterOK {
			t.Errorf("%s: %d tokens after a first attempt's success, want %d", tc.name, got, tc.afterOK)
		}
	}
	if got := (RetryQuotaConfig{SuccessRefund: -3}).WithDefaults().SuccessRefund; got != 0 {
		t.Errorf("negative refund: effective %d, want 0", got)
	}
}

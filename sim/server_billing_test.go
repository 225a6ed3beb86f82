package sim

import (
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// What a billing server bills, through the engine: with abandoned work
// billed, every success the server decided (Result.Admitted), of which
// those not completed had lost their client; without, exactly the
// completed operations' successes. The cost is the prices times the
// requests and tokens billed.
func TestBillingBillsWhatTheServerFinished(t *testing.T) {
	for _, abandoned := range []bool{true, false} {
		b := &Billing{PerRequest: 0.5, PerOutputToken: 0.001, OutputTokens: 100, BillAbandoned: abandoned,
			Inner: &Queue{Concurrency: 2, Service: Exponential{Mean: 100 * time.Millisecond}}}
		if err := b.Validate(); err != nil {
			t.Fatal(err)
		}
		r, err := Run(Config{Seed: 1, Server: b, Workload: &OpenLoop{Rates: ConstantRate(25), Until: 20 * time.Second},
			Policy: Policy{Name: "p", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 3, AttemptTimeout: 150 * time.Millisecond}}})
		if err != nil {
			t.Fatal(err)
		}
		billed := counter(r, "billing.billed")
		want := int64(r.Completed)
		if abandoned {
			want = int64(r.Admitted)
		}
		if billed != want || counter(r, "billing.abandoned") != billed-int64(r.Completed) {
			t.Errorf("abandoned %v: billed %d (%d abandoned), want %d; completed %d, admitted %d",
				abandoned, billed, counter(r, "billing.abandoned"), want, r.Completed, r.Admitted)
		}
		if abandoned && billed <= int64(r.Completed) {
			t.Errorf("no abandoned work billed: the test's timeouts cut nothing")
		}
		if cost := counter(r, "billing.cost"); cost != billed*600_000_000 { // 0.5 + 0.1 per request, in 1e-9
			t.Errorf("cost %d, want %d", cost, billed*600_000_000)
		}
	}
}

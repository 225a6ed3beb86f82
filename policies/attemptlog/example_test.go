package attemptlog_test

import (
	"context"
	"net/http"
	"os"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/attemptlog"
	"github.com/retrysim/retrysim/policies/machine"
)

// stepClock is a fake clock for the example: sleeping moves it on.
type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time { return c.now }

func (c *stepClock) Sleep(_ context.Context, d time.Duration) error {
	c.now = c.now.Add(max(d, 0))
	return nil
}

// An operation overloaded twice, then rate limited with a retry-after, then
// answered: the log has one line per attempt and one for the operation.
// Real code uses attemptlog.New(file) and the real clock.
func Example() {
	clock := &stepClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	log := attemptlog.New(os.Stdout)
	log.Now = clock.Now

	replies := []int{529, 529, 429, 200}
	call := func(ctx context.Context, a policies.Attempt) error {
		status := replies[a.Number-1]
		if status == http.StatusOK {
			return nil
		}
		h := http.Header{}
		if status == http.StatusTooManyRequests {
			h.Set("retry-after", "3")
		}
		return &policies.HTTPError{StatusCode: status, Header: h}
	}
	_ = log.Do(machine.WithClock(context.Background(), clock), call, // the clock: example only
		policies.WithBackoff(policies.Constant{Wait: 500 * time.Millisecond}), policies.WithMaxAttempts(5))
	// Output:
	// {"schema":"retrysim/attempt-log/v1","record":"attempt","op":"1","attempt":1,"sent":"2026-03-01T12:00:00Z","answered":"2026-03-01T12:00:00Z","class":"capacity","status":529,"error":"http 529","backoff_ms":500}
	// {"schema":"retrysim/attempt-log/v1","record":"attempt","op":"1","attempt":2,"sent":"2026-03-01T12:00:00.5Z","answered":"2026-03-01T12:00:00.5Z","class":"capacity","status":529,"error":"http 529","backoff_ms":500}
	// {"schema":"retrysim/attempt-log/v1","record":"attempt","op":"1","attempt":3,"sent":"2026-03-01T12:00:01Z","answered":"2026-03-01T12:00:01Z","class":"retry-after","status":429,"error":"http 429 Too Many Requests","server_wait_ms":3000,"backoff_ms":3000}
	// {"schema":"retrysim/attempt-log/v1","record":"attempt","op":"1","attempt":4,"sent":"2026-03-01T12:00:04Z","answered":"2026-03-01T12:00:04Z","class":"success"}
	// {"schema":"retrysim/attempt-log/v1","record":"operation","op":"1","start":"2026-03-01T12:00:00Z","end":"2026-03-01T12:00:04Z","attempts":4,"outcome":"success"}
}

package policies

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// WithDeadlineHeader makes Transport send, on every attempt, a header
// called name with the time left of the request's budget, in whole
// milliseconds: the least of what WithBudget leaves (on Do's clock) and
// what the request context's deadline leaves. A server, sidecar or SDK
// behind it can stop retrying, or working, when the caller will not wait
// any more; Envoy reads x-envoy-expected-rq-timeout-ms this way, gRPC
// sends grpc-timeout. Without a budget or a context deadline no header is
// sent. Do itself ignores the option (its attempts get the budget as
// their context's deadline).
func WithDeadlineHeader(name string) Option {
	return func(c *config) { c.deadlineHeader = http.CanonicalHeaderKey(name) }
}

// remaining is the time left at now before the budget's end (zero: none)
// and the deadline of ctx (on the real clock), whichever comes first;
// false when neither bounds it.
func remaining(ctx context.Context, now, budgetEnd time.Time) (time.Duration, bool) {
	var left time.Duration
	ok := false
	if !budgetEnd.IsZero() {
		left, ok = budgetEnd.Sub(now), true
	}
	if dl, has := ctx.Deadline(); has {
		if d := time.Until(dl); !ok || d < left {
			left, ok = d, true
		}
	}
	return max(left, 0), ok
}

// setDeadlineHeader sets h's header name to the time remaining leaves at
// now, in whole milliseconds, if anything bounds it.
func setDeadlineHeader(ctx context.Context, h http.Header, name string, now, budgetEnd time.Time) {
	if left, ok := remaining(ctx, now, budgetEnd); ok {
		h.Set(name, strconv.FormatInt(left.Milliseconds(), 10))
	}
}

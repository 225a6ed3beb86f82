package machine

import (
	"context"
	"time"
)

// Clock is the time source of the production loop (policies.Do and
// Transport). Production uses the real clock. A test of the production
// loop runs in a testing/synctest bubble, which fakes the real clock: that
// is the documented way. A driver that needs its own clock (the simulator's
// same-world tests, which order goroutines by a clock of their own) puts
// one in the context with WithClock.
type Clock interface {
	Now() time.Time
	// Sleep waits for d, or until ctx is done, when it returns ctx.Err().
	// A d <= 0 returns nil at once.
	Sleep(ctx context.Context, d time.Duration) error
}

type clockKey struct{}

// WithClock returns ctx carrying clk, which policies.Do and Transport then
// use in place of the real clock for the calls made with it.
func WithClock(ctx context.Context, clk Clock) context.Context {
	return context.WithValue(ctx, clockKey{}, clk)
}

// ClockFrom returns the clock WithClock put in ctx, if any.
func ClockFrom(ctx context.Context) (Clock, bool) {
	clk, ok := ctx.Value(clockKey{}).(Clock)
	return clk, ok && clk != nil
}

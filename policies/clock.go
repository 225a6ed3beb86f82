package policies

import (
	"context"
	"time"
)

// Clock is the time source of the production loop. Production uses the real
// clock; tests either run under testing/synctest, which fakes the real clock,
// or pass their own Clock with WithClock.
type Clock interface {
	Now() time.Time
	// Sleep waits for d, or until ctx is done, when it returns ctx.Err().
	// A d <= 0 returns nil at once.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

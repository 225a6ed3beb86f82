package observe_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/observe"
)

// collect is a Sink that keeps every record.
type collect struct {
	mu       sync.Mutex
	starts   int
	sends    int
	attempts []observe.Attempt
	ends     []observe.Operation
}

func (c *collect) Start(ctx context.Context, op *observe.Operation) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.starts++
	return ctx
}

func (c *collect) Send(ctx context.Context, _ *observe.Operation, _ *observe.Attempt) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sends++
	return ctx
}

func (c *collect) Answer(_ context.Context, _ *observe.Operation, a *observe.Attempt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts = append(c.attempts, *a)
}

func (c *collect) End(_ context.Context, op *observe.Operation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ends = append(c.ends, *op)
}

// TestHedgedCopies: with a Hedger, an attempt's copies run concurrently;
// every copy sent is answered exactly once, and the operation ends once,
// after them.
func TestHedgedCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, err := policies.NewHedger(policies.HedgeConfig{Delay: 50 * time.Millisecond, MaxHedges: 2})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		calls := 0
		op := func(ctx context.Context, a policies.Attempt) error {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			d := time.Second
			if n == 3 {
				d = 10 * time.Millisecond // the second hedge wins
			}
			select {
			case <-time.After(d):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		var c collect
		for _, sink := range []observe.Sink{&c, observe.Tee(&collect{}, &c)} {
			c = collect{}
			if err := observe.Do(t.Context(), sink, op, policies.WithCoordinator(h)); err != nil {
				t.Fatal(err)
			}
			calls = 0
			if c.starts != 1 || len(c.ends) != 1 || c.sends != len(c.attempts) || c.sends < 2 {
				t.Fatalf("starts %d, sends %d, answered %d, ends %d", c.starts, c.sends, len(c.attempts), len(c.ends))
			}
			won := 0
			for _, a := range c.attempts {
				if a.Err == nil {
					won++
					if !a.Classified || a.Outcome.Class != policies.Success {
						t.Errorf("winning copy %+v", a)
					}
				}
				if a.Answered.Before(a.Sent) {
					t.Errorf("copy answered before sent: %+v", a)
				}
			}
			if won != 1 || c.ends[0].Err != nil || c.ends[0].Attempts != c.sends {
				t.Errorf("%d winners; end %+v", won, c.ends[0])
			}
		}
	})
}

// TestEndOnce: End reports once, and an operation that Do refused (a nil
// operation) ends with its error and no GaveUp.
func TestEndOnce(t *testing.T) {
	var c collect
	tr := observe.Start(context.Background(), &c, "x", nil)
	err := policies.Do(tr.Context(), tr.Wrap(nil))
	tr.End(err)
	tr.End(err)
	if len(c.ends) != 1 || c.ends[0].Err == nil || c.ends[0].GaveUp != nil || c.ends[0].ID != "x" {
		t.Fatalf("ends %+v", c.ends)
	}
}

// TestSetTokensOutsideAttempt does nothing.
func TestSetTokensOutsideAttempt(t *testing.T) {
	observe.SetTokens(context.Background(), 1, 2)
}

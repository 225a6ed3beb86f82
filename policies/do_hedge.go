package policies

import (
	"context"
	"sync"

	"github.com/retrysim/retrysim/policies/machine"
)

// send runs the pending attempt: once, or as hedged copies when the plan
// has a Hedger.
func (r *run) send(ctx context.Context, op Operation) (err error, cut bool) {
	a := Attempt{Number: r.op.Attempts(), Model: r.op.Model(&r.plan)}
	if r.plan.Hedger() == nil {
		return r.attempt(ctx, op, a)
	}
	return r.hedged(ctx, op, a)
}

// copyResult is how one copy of a hedged attempt ended.
type copyResult struct {
	err      error
	cut      bool
	panicked bool
	panicVal any // what the copy's operation panicked with
}

// hedged runs the attempt a as copies, one goroutine each, each with its
// own context: a hedge is sent when machine.Op.Hedge agrees, Delay after the
// previous copy (all at once for Delay 0), until a copy succeeds or every
// copy sent has failed. The copies still out are then cancelled, and
// hedged returns only once they have all returned.
func (r *run) hedged(ctx context.Context, op Operation, a Attempt) (error, bool) {
	delay, _ := r.op.HedgeDelay(&r.plan)
	sent := r.clock.Now()
	gctx, cancel := context.WithCancel(ctx)
	results := make(chan copyResult, machine.MaxHedges+1)
	var wg sync.WaitGroup
	out := 0 // copies out
	launch := func(a Attempt) {
		if a.Copy > 0 {
			r.hedges++
		}
		out++
		wg.Go(func() {
			done := false
			defer func() {
				if !done {
					// Re-raised in Do's goroutine, where the caller can recover it.
					results <- copyResult{panicked: true, panicVal: recover()}
				}
			}()
			err, cut := r.attempt(gctx, op, a)
			done = true
			results <- copyResult{err: err, cut: cut}
		})
	}
	var timer chan struct{} // fires when the next hedge is due; nil: none
	arm := func() {
		t := make(chan struct{})
		timer = t
		wg.Go(func() {
			if r.clock.Sleep(gctx, delay) == nil {
				close(t)
			}
		})
	}
	copies := 1
	launch(a)
	if delay == 0 {
		for r.op.Hedge(&r.plan, r.moment(ctx), copies) {
			launch(Attempt{Number: r.op.Attempts(), Model: a.Model, Copy: copies})
			copies++
		}
	} else {
		arm()
	}
	var last copyResult
	for {
		select {
		case <-timer:
			timer = nil
			if r.op.Hedge(&r.plan, r.moment(ctx), copies) {
				launch(Attempt{Number: r.op.Attempts(), Model: a.Model, Copy: copies})
				copies++
				arm()
			}
			continue
		case last = <-results:
			out--
		}
		if last.err == nil || out == 0 || last.panicked {
			break
		}
	}
	if last.panicked {
		cancel()
		wg.Wait()
		panic(last.panicVal)
	}
	if last.err == nil {
		r.op.HedgeLatency(&r.plan, r.clock.Now().Sub(sent))
	}
	r.op.Cancelled(&r.plan, out)
	cancel()
	wg.Wait()
	return last.err, last.cut
}

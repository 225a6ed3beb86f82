package runs

import (
	"context"

	"github.com/retrysim/retrysim/sim"
)

// Progress observes runs as they go, for a progress display, as
// net/http/httptrace observes requests: it travels in the context
// (WithProgress), so every function here that runs simulations reports to
// it without a parameter of its own. Its functions are called from worker
// goroutines, concurrently; nothing they do reaches the results.
type Progress struct {
	// Events, if set, is told of engine events as a run of policy p (an
	// index into the scenario's policies) processes them: more events since
	// the last call for that run. It is called every few thousand events
	// and once when the run ends, so that the calls of a run add up to its
	// events.
	Events func(p, more int)
	// Done, if set, is told when a run of policy p ends, successfully or
	// not, with the events it processed.
	Done func(p, events int)
}

type progressKey struct{}

// WithProgress returns a copy of ctx that carries p to the runs started
// with it.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// watch sets cfg up to report a run of policy p to the Progress in ctx,
// if any, and returns the function to call when the run ends (with its
// result's events, or 0 if it failed).
func watch(ctx context.Context, cfg *sim.Config, p int) (end func(events int)) {
	pr, _ := ctx.Value(progressKey{}).(*Progress)
	if pr == nil {
		return func(int) {}
	}
	told := 0
	if pr.Events != nil {
		cfg.OnProgress = func(events int) {
			pr.Events(p, events-told)
			told = events
		}
	}
	return func(events int) {
		events = max(events, told)
		if pr.Events != nil && events > told {
			pr.Events(p, events-told)
		}
		if pr.Done != nil {
			pr.Done(p, events)
		}
	}
}

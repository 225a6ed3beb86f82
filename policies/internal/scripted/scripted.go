// Package scripted is an in-memory fake API for tests of the telemetry
// adapters: an Operation that answers each attempt from a script, taking a
// fixed time per attempt (run it inside a testing/synctest bubble, where
// that time passes instantly).
package scripted

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/observe"
)

// Reply is one scripted answer: Status 200 succeeds, any other status
// fails with a *policies.HTTPError; RetryAfter, if > 0, is sent as a
// retry-after header in seconds. Err, if set, is returned instead (a
// transport error).
type Reply struct {
	Status     int
	RetryAfter int
	Err        error
}

// API replays its replies, one per attempt; the last repeats.
type API struct {
	// Latency is how long each attempt takes.
	Latency time.Duration
	// InputTokens and OutputTokens are reported (observe.SetTokens) for a
	// success.
	InputTokens, OutputTokens int

	mu      sync.Mutex
	replies []Reply
	n       int
	models  []string
}

// New returns an API answering with replies and a latency of 100 ms.
func New(replies ...Reply) *API { return &API{Latency: 100 * time.Millisecond, replies: replies} }

// Models returns the model each attempt asked for, in order.
func (f *API) Models() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.models...)
}

// Op is the Operation that calls the API.
func (f *API) Op(ctx context.Context, a policies.Attempt) error {
	f.mu.Lock()
	rep := f.replies[min(f.n, len(f.replies)-1)]
	f.n++
	f.models = append(f.models, a.Model)
	f.mu.Unlock()
	select {
	case <-time.After(f.Latency):
	case <-ctx.Done():
		return ctx.Err()
	}
	switch {
	case rep.Err != nil:
		return rep.Err
	case rep.Status == http.StatusOK:
		observe.SetTokens(ctx, f.InputTokens, f.OutputTokens)
		return nil
	}
	h := http.Header{}
	if rep.RetryAfter > 0 {
		h.Set("retry-after", strconv.Itoa(rep.RetryAfter))
	}
	return &policies.HTTPError{StatusCode: rep.Status, Header: h, Body: []byte(`{"type":"error","error":{"type":"` + errType(rep.Status) + `","message":"scripted"}}`)}
}

func errType(status int) string {
	switch status {
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	case 400:
		return "invalid_request_error"
	}
	return "api_error"
}

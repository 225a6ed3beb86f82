package policies

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysim/retrysim/policies/machine"
)

// Transport's limits on the body of a failed response.
const (
	// MaxErrorBody is the most of a failed response's body that Transport
	// reads to classify it (64 KiB); the caller can still read the whole
	// body of the response Transport returns.
	MaxErrorBody = 64 << 10

	// ErrorBodyTimeout is the most time Transport spends reading the body of
	// one failed response (the MaxErrorBody bytes it classifies, and the
	// drain before a retry), from the arrival of its headers. The reading
	// also stops when the budget (WithBudget) or the request's context
	// ends, if sooner.
	ErrorBodyTimeout = 5 * time.Second
)

// maxDrain bounds how much of a retried response's body is read before it is
// closed; reading it to the end lets the connection be reused.
const maxDrain = 256 << 10

// The errors of Transport and of the stream watchdog.
var (
	// ErrStalled is the cause of an attempt's context when the watchdog
	// ends it.
	ErrStalled = errors.New("stream watchdog: no content event in time")

	// ErrErrorBodyTimeout ends the body of a failed response that Transport
	// returns when its time for reading that body (see ErrorBodyTimeout) ran
	// out in the middle of a read: the bytes read come first, then this
	// error.
	ErrErrorBodyTimeout = errors.New("policies.Transport: the failed response's body was cut off: it did not arrive within the time for reading it")

	// ErrFallbackInTransport is returned by NewTransport (and by
	// Transport.RoundTrip) when the options include WithFallback, which a
	// Transport cannot honour.
	ErrFallbackInTransport = errors.New("policies.Transport: WithFallback has no effect on a Transport (it cannot change the model in the request body); use Do around the call")

	// ErrHedgeUnreplayableBody is returned by Transport.RoundTrip, before
	// anything is sent, for a request whose body cannot be replayed (GetBody
	// nil) when the Transport hedges: its copies need a body each.
	ErrHedgeUnreplayableBody = errors.New("policies.Transport: cannot hedge a request whose body cannot be replayed (GetBody is nil); use http.NewRequest with an in-memory body, or a Transport without a Hedger")

	// ErrBodyTruncated ends the body of a response Transport returns when it
	// had already drained that body for a retry and the body was longer than
	// the 256 KiB it keeps.
	ErrBodyTruncated = errors.New("policies.Transport: response body truncated after 256 KiB (it was drained for a retry)")
)

// Transport is an http.RoundTripper that retries requests with Do and the
// Options given: the same machine.Op, coordinators and decisions as Do. Per
// request:
//
//   - A response with status below 400 is returned as it is, its body unread:
//     a streamed body belongs to the caller from then on, and errors inside
//     it (an SSE error event) are for a Do loop around the whole call.
//   - A failed response is classified from its status, headers and the first
//     MaxErrorBody bytes of its body. If it is the last, it is returned with
//     a nil error and its full body, as any RoundTripper returns an HTTP
//     error status. If a retry is scheduled, its body is drained (up to
//     256 KiB) and closed at once, before the wait; the bytes read are kept,
//     so if a wait for the gate, throttle or limiter then stops the loop,
//     that response is still returned, its body replayed from memory (ending
//     in ErrBodyTruncated if it was longer).
//   - Reading and draining a failed body stop after ErrorBodyTimeout, or
//     when the budget, the attempt timeout or the request's context ends,
//     if sooner: a body that trickles cannot hold RoundTrip. The failure is
//     classified from what arrived. A body cut off that way (closed in the
//     middle of a read) ends in ErrErrorBodyTimeout after the bytes read; a
//     body whose time ran out between reads is returned as it is, its rest
//     unread.
//   - An error of the base RoundTripper (no response arrived) is a failure
//     of the round trip: ClassifyError retries it unless it is known to be
//     permanent (see there). If no response arrived at all (connection
//     errors only, a budget or queue stop before the first attempt,
//     cancellation), the error is Do's *Error; its Last carries the base's
//     error, message unchanged, for errors.Is and errors.As.
//   - A request whose body cannot be replayed (Body set, GetBody nil) is sent
//     once, without retries or watchdog; with a Hedger among the
//     coordinators it is refused (ErrHedgeUnreplayableBody), nothing sent.
//   - A request made from inside a Do attempt (see InAttempt) is sent once:
//     the Do loop around it owns the retries, so they do not multiply.
//
// The attempt timeout (WithAttemptTimeout) bounds an attempt until its
// response headers arrive (and the reading of a failed body): a body the
// caller reads afterwards is not cut, so streamed answers are not.
//
// The stream watchdog (Policy.StreamIdleTimeout, StreamFirstByteTimeout)
// watches a request that asks for a stream (Accept: text/event-stream, or
// a JSON body with "stream": true) until its headers, and retries it if
// they do not come within the first-byte timeout; then it watches the body
// of an event-stream response as the caller reads it and, when it stalls,
// ends it with a *StreamError (Stalled). That one cannot be retried by
// RoundTrip, which has returned: put Do around the call for that.
//
// A Hedger among the coordinators hedges each attempt as Do does: its
// copies are sent with the body from GetBody, the first response with
// status below 400 is returned and the other copies are cancelled (their
// bodies closed). When every copy fails, the last to answer is the
// attempt's outcome and, if it is the last attempt, the response returned.
//
// WithFallback is refused: a Transport cannot change the model named in a
// request body, so NewTransport returns ErrFallbackInTransport (and
// RoundTrip of a Transport built without NewTransport fails with it); put
// Do around the call instead.
//
// A Transport serves concurrent requests, so whatever its Options share is
// used concurrently: hooks, classifier and clock are called from many
// requests' goroutines at once and must be safe for that. A *rand.Rand given
// with WithRand is not used directly: each request draws from its own
// generator, seeded from the shared one under a lock.
type Transport struct {
	// Base sends each attempt; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Options configure the Do loop of every request. Share the Gate,
	// Throttle and Limiter they name across transports on one API key.
	Options []Option
}

// seedMu guards the draws that seed each request's generator from a
// *rand.Rand shared through a Transport's Options.
var seedMu sync.Mutex

// optionsOnly applies opts to a config without defaults.
func optionsOnly(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// checkOptions reports what a Transport refuses in opts.
func checkOptions(opts []Option) error {
	c := optionsOnly(opts)
	if c.fallback != nil {
		return ErrFallbackInTransport
	}
	if n := len(c.plan().Coordinators); n > machine.MaxCoordinators {
		return fmt.Errorf("policies.Transport: %d coordinators, at most %d", n, machine.MaxCoordinators)
	}
	return nil
}

// requestOptions returns opts for one request: a shared WithRand is replaced
// by a generator of the request's own, seeded from the shared one, and the
// watchdog is off until the headers unless the request streams.
func requestOptions(opts []Option, streams bool) []Option {
	c := optionsOnly(opts)
	out := append([]Option(nil), opts...)
	if !streams {
		out = append(out, func(c *config) { c.policy.StreamIdleTimeout, c.policy.StreamFirstByteTimeout = 0, 0 })
	}
	if c.rng != nil {
		seedMu.Lock()
		s1, s2 := c.rng.Uint64(), c.rng.Uint64()
		seedMu.Unlock()
		out = append(out, WithRand(rand.New(rand.NewPCG(s1, s2))))
	}
	return out
}

// NewTransport returns a Transport over base (nil: http.DefaultTransport)
// with the given options, or an error naming an option a Transport cannot
// honour: WithFallback (ErrFallbackInTransport), or more coordinators than
// machine.MaxCoordinators.
func NewTransport(base http.RoundTripper, opts ...Option) (*Transport, error) {
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	return &Transport{Base: base, Options: opts}, nil
}

// failedResponse is a failed response that Transport holds while Do
// decides: the response, its body while its reading is timed, and what was
// read of it to classify it.
type failedResponse struct {
	resp  *http.Response
	timed *timedBody
	head  []byte
}

// discard drains and closes the response's body.
func (f *failedResponse) discard() {
	if f != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(f.resp.Body, maxDrain))
		_ = f.resp.Body.Close()
	}
}

// RoundTrip sends req, retrying as described on Transport.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	ctx := req.Context()
	closeReqBody := func() {
		if req.Body != nil {
			_ = req.Body.Close() // a RoundTripper closes the body even when it sends nothing
		}
	}
	if err := checkOptions(t.Options); err != nil {
		closeReqBody()
		return nil, err
	}
	if InAttempt(ctx) {
		return base.RoundTrip(req)
	}
	// The configuration, on Do's clock (the real one unless ctx carries another).
	cfg := newConfig(ctx, t.Options)
	plan := cfg.plan()
	hedged := plan.Hedger() != nil
	hasBody := req.Body != nil && req.Body != http.NoBody
	if hasBody && req.GetBody == nil {
		if hedged {
			closeReqBody()
			return nil, ErrHedgeUnreplayableBody
		}
		return base.RoundTrip(req)
	}
	watchdog := cfg.policy.Watchdog()
	opts := requestOptions(t.Options, watchdog.On() && requestStreams(req))
	var budgetEnd time.Time
	if cfg.policy.Deadline > 0 {
		budgetEnd = cfg.clock.Now().Add(cfg.policy.Deadline)
	}

	// What the attempts leave for RoundTrip to return. Copies of a hedged
	// attempt run concurrently, hence the lock.
	var (
		mu   sync.Mutex
		won  *http.Response  // the first success
		last *failedResponse // the latest failure, not yet handed over
	)
	// release drains and closes the body of a response Do is about to retry,
	// as soon as the retry is scheduled, so its connection is free during the
	// wait. The bytes read are kept: if a wait for the gate, throttle or
	// limiter then stops Do, that response is the last and is handed over.
	release := func(RetryEvent) {
		mu.Lock()
		defer mu.Unlock()
		if last != nil {
			last.resp.Body = drainBody(last.resp.Body)
			last.timed = nil
		}
	}
	opts = append(opts, func(c *config) {
		user := c.hooks.OnRetryScheduled
		c.hooks.OnRetryScheduled = func(e RetryEvent) {
			release(e)
			if user != nil {
				user(e)
			}
		}
	})
	var firstSent atomic.Bool
	op := func(actx context.Context, a Attempt) error {
		if a.Copy == 0 {
			// A new attempt: the previous one's failure is no longer the last.
			mu.Lock()
			old := last
			last = nil
			mu.Unlock()
			old.discard()
		}
		// The request runs on its own context: it ends with actx (the
		// budget, the attempt timeout, the watchdog until the headers, a
		// hedge that won, the caller) until the headers arrive, and is
		// detached from it then, because Do ends actx when the attempt
		// returns while the body is still to be read. Closing the body
		// releases it.
		rctx, cancelR := context.WithCancelCause(context.WithValue(ctx, attemptKey{}, true))
		detach := context.AfterFunc(actx, func() { cancelR(context.Cause(actx)) })
		r := req.Clone(rctx)
		if cfg.deadlineHeader != "" {
			setDeadlineHeader(actx, r.Header, cfg.deadlineHeader, cfg.clock.Now(), budgetEnd)
		}
		if hasBody && !firstSent.CompareAndSwap(false, true) {
			body, err := req.GetBody()
			if err != nil {
				detach()
				cancelR(nil)
				return fmt.Errorf("replaying request body: %w", err) // unrecognised: terminal
			}
			r.Body = body
		}
		firstSent.Store(true)
		sentAt := time.Now() // the watchdog's timers run on the real clock
		resp, err := base.RoundTrip(r)
		detach()
		if err != nil {
			cancelR(nil)
			if actx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
				// The request's context was ended for actx's reason: an
				// attempt timeout is context.DeadlineExceeded (Transient),
				// not the context.Canceled that ending rctx reports.
				err = context.Cause(actx)
			}
			// The round trip failed: ClassifyError retries that unless it
			// knows the error to be permanent.
			return machine.RoundTripFailure(err)
		}
		body := resp.Body
		resp.Body = readCloser{body, closeFunc(func() error {
			err := body.Close()
			cancelR(nil)
			return err
		})}
		if resp.StatusCode < 400 {
			// A success's headers reach no Observe: give them to the
			// coordinators that read them (a Pacer).
			for _, c := range cfg.coordinators {
				if ho, ok := c.(HeaderObserver); ok {
					ho.ObserveHeader(cfg.clock.Now(), resp.Header)
				}
			}
			if watchdog.On() && isEventStream(resp) {
				first := cmp.Or(watchdog.FirstByte, watchdog.Idle)
				resp.Body = watchBody(resp.Body, watchdog, first-time.Since(sentAt), cancelR)
			}
			mu.Lock()
			first := won == nil
			if first {
				won = resp
			}
			mu.Unlock()
			if !first {
				_ = resp.Body.Close() // another copy of the attempt answered first
			}
			return nil
		}
		limit := ErrorBodyTimeout
		if !budgetEnd.IsZero() {
			limit = min(limit, budgetEnd.Sub(cfg.clock.Now()))
		}
		if dl, ok := actx.Deadline(); ok {
			limit = min(limit, time.Until(dl)) // a context deadline is on the real clock
		}
		f := &failedResponse{resp: resp, timed: newTimedBody(rctx, resp.Body, limit)}
		f.head, _ = io.ReadAll(io.LimitReader(f.timed, MaxErrorBody))
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(f.head), f.timed), f.timed}
		mu.Lock()
		old := last
		last = f
		mu.Unlock()
		old.discard()
		return &HTTPError{StatusCode: resp.StatusCode, Header: resp.Header, Body: f.head}
	}
	err := Do(ctx, op, opts...)
	if !firstSent.Load() {
		closeReqBody()
	}
	// Do has returned: no copy runs any more.
	if err == nil {
		last.discard()
		return won, nil
	}
	if won != nil {
		_ = won.Body.Close() // cannot happen: a success ends Do with nil
	}
	var stopped *Error
	if errors.As(err, &stopped) && stopped.Reason == StopCancelled {
		last.discard()
		return nil, err
	}
	if last != nil {
		if last.timed != nil {
			// The caller reads the rest of the body without a time limit.
			rest := last.timed.handOver()
			last.resp.Body = readCloser{io.MultiReader(bytes.NewReader(last.head), rest), rest}
		}
		return last.resp, nil
	}
	return nil, err
}

// timedBody is the body of a failed response while Transport reads it. Its
// time ends when its timer fires or its context ends; from then on Read
// returns ErrErrorBodyTimeout without touching the body. A Read in progress
// at that moment is ended by closing the body (net/http's response bodies,
// and io.Pipe, allow a Close during a Read).
type timedBody struct {
	body      io.ReadCloser
	stopTimer func() bool
	stopCtx   func() bool

	mu      sync.Mutex
	reading bool // a Read of body is in progress
	expired bool // the time for reading is over
	cut     bool // body was closed to end a Read
}

// newTimedBody returns body with limit to read it in, also ending when ctx
// does. A limit <= 0 has already ended.
func newTimedBody(ctx context.Context, body io.ReadCloser, limit time.Duration) *timedBody {
	b := &timedBody{body: body}
	if limit <= 0 {
		b.expired = true
		b.stopTimer, b.stopCtx = func() bool { return false }, func() bool { return false }
		return b
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopTimer = time.AfterFunc(limit, b.expire).Stop
	b.stopCtx = context.AfterFunc(ctx, b.expire)
	return b
}

func (b *timedBody) expire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.expired {
		return
	}
	b.expired = true
	if b.reading {
		b.cut = true
		_ = b.body.Close()
	}
}

func (b *timedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.expired {
		b.mu.Unlock()
		return 0, ErrErrorBodyTimeout
	}
	b.reading = true
	b.mu.Unlock()
	n, err := b.body.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reading = false
	if b.cut {
		err = ErrErrorBodyTimeout
	}
	return n, err
}

// Close stops the timing and closes the body.
func (b *timedBody) Close() error {
	b.stopTimer()
	b.stopCtx()
	return b.body.Close()
}

// handOver stops the timing and returns what is left of the body for the
// caller to read: the body itself, unless it was cut off.
func (b *timedBody) handOver() io.ReadCloser {
	b.stopTimer()
	b.stopCtx()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cut {
		return io.NopCloser(errReader{ErrErrorBodyTimeout})
	}
	return b.body
}

// drainBody reads up to maxDrain bytes of body, closes it, and returns a body
// that replays what was read (ending in ErrBodyTruncated if there was more).
func drainBody(body io.ReadCloser) io.ReadCloser {
	buf, err := io.ReadAll(io.LimitReader(body, maxDrain+1))
	_ = body.Close()
	var r io.Reader = bytes.NewReader(buf)
	switch {
	case len(buf) > maxDrain:
		r = io.MultiReader(bytes.NewReader(buf[:maxDrain]), errReader{ErrBodyTruncated})
	case err != nil:
		r = io.MultiReader(r, errReader{err})
	}
	return io.NopCloser(r)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// Middleware adapts the Transport to middleware of the form
// func(req, next) (resp, err), with next sending one attempt; this is the
// shape of anthropic-sdk-go's option.Middleware, so t.Middleware can be passed
// to option.WithMiddleware directly.
func (t *Transport) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	inner := &Transport{Base: roundTripperFunc(next), Options: t.Options}
	return inner.RoundTrip(req)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type readCloser struct {
	io.Reader
	io.Closer
}

// closeFunc is a func as an io.Closer.
type closeFunc func() error

func (f closeFunc) Close() error { return f() }

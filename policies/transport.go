package policies

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
)

// MaxErrorBody is the most of a failed response's body that Transport reads
// to classify it (64 KiB); the caller can still read the whole body of the
// response Transport returns.
const MaxErrorBody = 64 << 10

// maxDrain bounds how much of a retried response's body is read before it is
// closed; reading it to the end lets the connection be reused.
const maxDrain = 256 << 10

// Transport is an http.RoundTripper that retries requests with Do and the
// Options given. Per request:
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
//   - An error of the base RoundTripper (no response arrived) is a failure
//     of the round trip: ClassifyError retries it unless it is known to be
//     permanent (see there). If no response arrived at all (connection
//     errors only, a budget or queue stop before the first attempt,
//     cancellation), the error is Do's *Error; its Last carries the base's
//     error, message unchanged, for errors.Is and errors.As.
//   - A request whose body cannot be replayed (Body set, GetBody nil) is sent
//     once, without retries.
//   - A request made from inside a Do attempt (see InAttempt) is sent once:
//     the Do loop around it owns the retries, so they do not multiply.
//
// WithAttemptTimeout is ignored here: it would cut off streamed bodies. Use
// http.Transport's ResponseHeaderTimeout for that. WithFallback is rejected:
// a Transport cannot change the model named in a request body, so RoundTrip
// fails at once with ErrFallbackInTransport; put Do around the call instead.
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

// ErrFallbackInTransport is returned by Transport.RoundTrip when its options
// include WithFallback, which a Transport cannot honour.
var ErrFallbackInTransport = errors.New("policies.Transport: WithFallback has no effect on a Transport (it cannot change the model in the request body); use Do around the call")

// seedMu guards the draws that seed each request's generator from a
// *rand.Rand shared through a Transport's Options.
var seedMu sync.Mutex

// requestOptions returns opts for one request: a shared WithRand is replaced
// by a generator of the request's own, seeded from the shared one.
func requestOptions(opts []Option) ([]Option, error) {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.fallback != nil {
		return nil, ErrFallbackInTransport
	}
	out := append(append([]Option(nil), opts...), WithAttemptTimeout(0))
	if c.rng != nil {
		seedMu.Lock()
		s1, s2 := c.rng.Uint64(), c.rng.Uint64()
		seedMu.Unlock()
		out = append(out, WithRand(rand.New(rand.NewPCG(s1, s2))))
	}
	return out, nil
}

// NewTransport returns a Transport over base with the given options.
func NewTransport(base http.RoundTripper, opts ...Option) *Transport {
	return &Transport{Base: base, Options: opts}
}

// RoundTrip sends req, retrying as described on Transport.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	ctx := req.Context()
	opts, err := requestOptions(t.Options)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	if InAttempt(ctx) || !replayable {
		return base.RoundTrip(req)
	}

	var last *http.Response // the latest response, not yet handed over
	discard := func() {
		if last != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(last.Body, maxDrain))
			_ = last.Body.Close()
			last = nil
		}
	}
	// release drains and closes the body of a response Do is about to retry,
	// as soon as the retry is scheduled, so its connection is free during the
	// wait. The bytes read are kept: if a wait for the gate, throttle or
	// limiter then stops Do, that response is the last and is handed over.
	release := func(RetryEvent) {
		if last != nil {
			last.Body = drainBody(last.Body)
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
	sent := false
	op := func(actx context.Context, a Attempt) error {
		discard()
		r := req.Clone(actx)
		if sent && req.Body != nil && req.Body != http.NoBody {
			body, err := req.GetBody()
			if err != nil {
				return fmt.Errorf("replaying request body: %w", err) // unrecognised: terminal
			}
			r.Body = body
		}
		sent = true
		resp, err := base.RoundTrip(r)
		if err != nil {
			// The round trip failed: ClassifyError retries that unless it
			// knows the error to be permanent.
			return &roundTripError{err}
		}
		last = resp
		if resp.StatusCode < 400 {
			return nil
		}
		prefix, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(prefix), resp.Body), resp.Body}
		return &HTTPError{StatusCode: resp.StatusCode, Header: resp.Header, Body: prefix}
	}
	err = Do(ctx, op, opts...)
	if !sent && req.Body != nil {
		_ = req.Body.Close() // a RoundTripper closes the body even when it sends nothing
	}
	var stopped *Error
	if err != nil && errors.As(err, &stopped) && stopped.Reason == StopCancelled {
		discard()
		return nil, err
	}
	if last != nil {
		return last, nil
	}
	return nil, err
}

// ErrBodyTruncated ends the body of a response Transport returns when it had
// already drained that body for a retry and the body was longer than the
// 256 KiB it keeps.
var ErrBodyTruncated = errors.New("policies.Transport: response body truncated after 256 KiB (it was drained for a retry)")

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

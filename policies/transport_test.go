package policies_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// trackedBody records how much of it was read and whether it was closed.
type trackedBody struct {
	r      io.Reader
	read   atomic.Int64
	closed atomic.Bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	return n, err
}

func (b *trackedBody) Close() error { b.closed.Store(true); return nil }

type scriptedTransport struct {
	statuses []int // one per attempt; the last repeats; 0 means a connection error
	body     string
	bodies   []*trackedBody
	sent     []string // request bodies as received
}

func (s *scriptedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var sent []byte
	if req.Body != nil {
		sent, _ = io.ReadAll(req.Body)
		_ = req.Body.Close()
	}
	s.sent = append(s.sent, string(sent))
	status := s.statuses[min(len(s.sent), len(s.statuses))-1]
	if status == 0 {
		return nil, &netErr{syscall.ECONNRESET}
	}
	b := &trackedBody{r: strings.NewReader(s.body)}
	s.bodies = append(s.bodies, b)
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: b, Request: req}, nil
}

type netErr struct{ err error }

func (e *netErr) Error() string { return "read tcp: " + e.err.Error() }
func (e *netErr) Unwrap() error { return e.err }

func post(t *testing.T, body string, replayable bool) *http.Request {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if !replayable {
		req.GetBody = nil
	}
	return req
}

func TestTransportDrainsRetriedAndHandsOverLast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		big := strings.Repeat("x", policies.MaxErrorBody+1000)
		base := &scriptedTransport{statuses: []int{529, 503, 500}, body: big}
		tr := newTransport(t, base, policies.WithMaxAttempts(3))
		resp, err := tr.RoundTrip(post(t, "payload", true))
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		if resp.StatusCode != 500 {
			t.Fatalf("status %d, want the last response (500)", resp.StatusCode)
		}
		for i, b := range base.bodies[:2] {
			if !b.closed.Load() || b.read.Load() != int64(len(big)) {
				t.Errorf("retried body %d: closed %v, read %d of %d", i, b.closed.Load(), b.read.Load(), len(big))
			}
		}
		all, _ := io.ReadAll(resp.Body)
		if string(all) != big {
			t.Errorf("caller read %d bytes of the last body, want all %d", len(all), len(big))
		}
		if last := base.bodies[2]; last.closed.Load() {
			t.Errorf("Transport closed the body it handed over")
		}
		for i, s := range base.sent {
			if s != "payload" {
				t.Errorf("attempt %d sent body %q, want the replayed payload", i+1, s)
			}
		}
	})
}

func TestTransportLeavesSuccessBodyUnread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &scriptedTransport{statuses: []int{529, 200}, body: "event: message_start\n"}
		resp, err := newTransport(t, base).RoundTrip(post(t, "p", true))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("RoundTrip = %v, %v", resp, err)
		}
		if b := base.bodies[1]; b.read.Load() != 0 || b.closed.Load() {
			t.Errorf("streamed body touched: read %d, closed %v", b.read.Load(), b.closed.Load())
		}
	})
}

func TestTransportNonReplayableSentOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &scriptedTransport{statuses: []int{529, 200}}
		req := post(t, "p", false)
		req.Body = io.NopCloser(bytes.NewBufferString("p")) // no GetBody
		resp, err := newTransport(t, base).RoundTrip(req)
		if err != nil || resp.StatusCode != 529 || len(base.sent) != 1 {
			t.Fatalf("got %v, %v after %d sends; want the 529 after one send", resp, err, len(base.sent))
		}
	})
}

func TestTransportConnectionErrorsUntilBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &scriptedTransport{statuses: []int{0}}
		_, err := newTransport(t, base, policies.WithBudget(2*time.Second)).RoundTrip(post(t, "p", true))
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopDeadline || !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("RoundTrip error %v, want a budget stop wrapping the reset", err)
		}
		if len(base.sent) < 2 {
			t.Errorf("%d sends; connection errors should be retried", len(base.sent))
		}
	})
}

func TestTransportCancelClosesLastBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		base := &scriptedTransport{statuses: []int{529}}
		time.AfterFunc(time.Second, cancel)
		req := post(t, "p", true).WithContext(ctx)
		resp, err := newTransport(t, base, policies.WithBackoff(policies.Constant{Wait: time.Minute})).RoundTrip(req)
		if resp != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("RoundTrip = %v, %v; want no response and a cancellation", resp, err)
		}
		if !base.bodies[0].closed.Load() {
			t.Errorf("the failed response's body was left open")
		}
	})
}

func TestTransportInsideDoSendsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &scriptedTransport{statuses: []int{529, 200}}
		client := &http.Client{Transport: newTransport(t, base)}
		calls := 0
		err := policies.Do(t.Context(), func(ctx context.Context, a policies.Attempt) error {
			calls++
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode >= 400 {
				return &policies.HTTPError{StatusCode: resp.StatusCode, Header: resp.Header}
			}
			return nil
		})
		if err != nil || calls != 2 || len(base.sent) != 2 {
			t.Fatalf("err %v, %d Do attempts, %d sends; want 2 and 2 (no nested retries)", err, calls, len(base.sent))
		}
	})
}

// flakyTransport answers 500 to every other request, safely for concurrent use.
type flakyTransport struct{ n atomic.Int64 }

func (f *flakyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	status := http.StatusOK
	if f.n.Add(1)%2 == 1 {
		status = http.StatusInternalServerError
	}
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// One WithRand shared by concurrent requests through a Transport: each
// request draws from its own generator, so -race finds nothing.
func TestTransportSharedRandConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTransport(t, &flakyTransport{}, policies.WithRand(rand.New(rand.NewPCG(1, 2))), policies.WithMaxAttempts(3))
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			})
		}
		wg.Wait()
	})
}

func TestTransportRejectsFallback(t *testing.T) {
	base := &scriptedTransport{statuses: []int{200}}
	fallback := policies.WithFallback(&policies.ModelFallback{Primary: "a", Fallback: "b"})
	if tr, err := policies.NewTransport(base, fallback); tr != nil || !errors.Is(err, policies.ErrFallbackInTransport) {
		t.Fatalf("NewTransport = %v, %v; want ErrFallbackInTransport", tr, err)
	}
	tr := &policies.Transport{Base: base, Options: []policies.Option{fallback}} // built without NewTransport
	resp, err := tr.RoundTrip(post(t, "x", true))
	if resp != nil || !errors.Is(err, policies.ErrFallbackInTransport) {
		t.Fatalf("RoundTrip = %v, %v; want ErrFallbackInTransport", resp, err)
	}
	if len(base.sent) != 0 {
		t.Errorf("%d requests sent", len(base.sent))
	}
}

// A retried response's body is drained and closed as soon as the retry is
// scheduled, not when the next attempt starts.
func TestTransportClosesRetriedBodyBeforeTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &scriptedTransport{statuses: []int{500, 200}, body: "error body"}
		var closedAtSchedule []bool
		tr := newTransport(t, base, policies.WithBackoff(policies.Constant{Wait: time.Second}),
			policies.WithHooks(policies.Hooks{OnRetryScheduled: func(policies.RetryEvent) {
				closedAtSchedule = append(closedAtSchedule, base.bodies[len(base.bodies)-1].closed.Load())
			}}))
		resp, err := tr.RoundTrip(post(t, "p", true))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("RoundTrip = %v, %v", resp, err)
		}
		resp.Body.Close()
		if len(closedAtSchedule) != 1 || !closedAtSchedule[0] {
			t.Errorf("retried body closed when the retry was scheduled: %v, want [true]", closedAtSchedule)
		}
	})
}

// A response drained for a retry that then never happens (the gate closed
// past the budget during the wait) is handed over with the bytes kept.
func TestTransportHandsOverDrainedBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body := strings.Repeat("e", policies.MaxErrorBody+500)
		base := &scriptedTransport{statuses: []int{500, 200}, body: body}
		gate := &policies.Gate{}
		go func() {
			time.Sleep(500 * time.Millisecond)
			gate.Push(time.Now(), time.Hour) // a 429 elsewhere, past the budget
		}()
		tr := newTransport(t, base, policies.WithGate(gate), policies.WithBudget(10*time.Second),
			policies.WithBackoff(policies.Constant{Wait: time.Second}))
		resp, err := tr.RoundTrip(post(t, "p", true))
		if err != nil || resp.StatusCode != 500 {
			t.Fatalf("RoundTrip = %v, %v; want the 500", resp, err)
		}
		if len(base.sent) != 1 || !base.bodies[0].closed.Load() {
			t.Fatalf("%d attempts sent; first body closed %v", len(base.sent), base.bodies[0].closed.Load())
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil || string(got) != body {
			t.Errorf("handed-over body: %d bytes, %v; want all %d", len(got), err, len(body))
		}
		resp.Body.Close()
	})
}

// erringTransport fails every round trip with err, as http.Transport does
// (no *url.Error: http.Client adds that).
type erringTransport struct {
	err   error
	sends atomic.Int32
}

func (e *erringTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	e.sends.Add(1)
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return nil, e.err
}

// Errors of the base RoundTripper are failures of the round trip: retried
// unless known to be permanent, even when net/http reports them as plain
// strings.
func TestTransportClassifiesBaseErrors(t *testing.T) {
	tests := []struct {
		err  error
		want policies.StopReason
	}{
		{errors.New("http2: client connection lost"), policies.StopAttempts},
		{errors.New("http: server closed idle connection"), policies.StopAttempts},
		{errors.New("http2: Transport received Server's graceful shutdown GOAWAY"), policies.StopAttempts},
		{errors.New(`unsupported protocol scheme "ftp"`), policies.StopTerminal},
		{errors.New("http: no Host in request URL"), policies.StopTerminal},
		{&net.DNSError{Err: "no such host", Name: "api.invalid", IsNotFound: true}, policies.StopTerminal},
		{x509.UnknownAuthorityError{}, policies.StopTerminal},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &erringTransport{err: tt.err}
				_, err := newTransport(t, base, policies.WithMaxAttempts(3)).RoundTrip(post(t, "p", true))
				var pe *policies.Error
				if !errors.As(err, &pe) || pe.Reason != tt.want {
					t.Errorf("%v: RoundTrip error %v, want a %v stop", tt.err, err, tt.want)
				} else if pe.Last.Error() != tt.err.Error() || !errors.Is(err, tt.err) {
					t.Errorf("%v: last error %q, want the base's error as it was", tt.err, pe.Last)
				}
			})
		})
	}
}

// trickleBody yields burst bytes at once, then n more, one every `every`,
// then io.EOF. Closing it ends its writer at once.
func trickleBody(burst, n int, every time.Duration) io.ReadCloser {
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer pw.Close()
		if _, err := pw.Write(bytes.Repeat([]byte("x"), burst)); err != nil {
			return
		}
		for range n {
			select {
			case <-done:
				return
			case <-time.After(every):
			}
			if _, err := pw.Write([]byte("x")); err != nil {
				return
			}
		}
	}()
	return &stopBody{pr, done, sync.Once{}}
}

type stopBody struct {
	*io.PipeReader
	done chan struct{}
	once sync.Once
}

func (b *stopBody) Close() error {
	b.once.Do(func() { close(b.done) })
	return b.PipeReader.Close()
}

// slowBodyTransport answers every request with status and a body from
// newBody, and closes every body it made when the test ends.
type slowBodyTransport struct {
	status  int
	newBody func() io.ReadCloser
	bodies  []io.ReadCloser
}

func (s *slowBodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	b := s.newBody()
	s.bodies = append(s.bodies, b)
	return &http.Response{StatusCode: s.status, Header: http.Header{}, Body: b, Request: req}, nil
}

func (s *slowBodyTransport) closeAll() {
	for _, b := range s.bodies {
		_ = b.Close()
	}
}

// A failed response whose body trickles does not hold RoundTrip: reading
// and draining it stop at ErrorBodyTimeout, the budget or the request's
// deadline, whichever comes first.
func TestTransportBoundsFailedBodyRead(t *testing.T) {
	limit := policies.ErrorBodyTimeout
	tests := []struct {
		name     string
		body     func() io.ReadCloser
		opts     []policies.Option
		ctxLimit time.Duration // the request's context deadline; 0: an hour
		cancelAt time.Duration // when the caller cancels; 0: never
		elapsed  time.Duration // when RoundTrip returns
		cut      bool          // the returned body ends in ErrErrorBodyTimeout
		// the request's context ends with the read: RoundTrip may return
		// the response (a stop at the deadline) or the context's error
		ctxEnds bool
	}{
		{
			name:    "trickle: own limit per response",
			body:    func() io.ReadCloser { return trickleBody(10, 1000, time.Second) },
			opts:    []policies.Option{policies.WithMaxAttempts(2)},
			elapsed: 2 * limit,
			cut:     true,
		},
		{
			name:    "trickle after the first 64 KiB: the drain is bounded, the last body handed over whole",
			body:    func() io.ReadCloser { return trickleBody(policies.MaxErrorBody+10, 1000, time.Second) },
			opts:    []policies.Option{policies.WithMaxAttempts(2)},
			elapsed: limit,
		},
		{
			name:    "budget shorter than the limit",
			body:    func() io.ReadCloser { return trickleBody(10, 1000, time.Second) },
			opts:    []policies.Option{policies.WithBudget(2 * time.Second), policies.WithBackoff(policies.Constant{Wait: 100 * time.Millisecond})},
			elapsed: 2 * time.Second,
			cut:     true,
		},
		{
			name:     "request deadline shorter than the limit",
			body:     func() io.ReadCloser { return trickleBody(10, 1000, time.Second) },
			opts:     []policies.Option{policies.WithBudget(0)},
			ctxLimit: 3 * time.Second,
			elapsed:  3 * time.Second,
			cut:      true,
			ctxEnds:  true,
		},
		{
			name:     "caller cancels during the read",
			body:     func() io.ReadCloser { return trickleBody(10, 1000, time.Second) },
			cancelAt: 1500 * time.Millisecond,
			elapsed:  1500 * time.Millisecond,
			ctxEnds:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &slowBodyTransport{status: 529, newBody: tt.body}
				defer base.closeAll()
				ctx, cancel := context.WithTimeout(t.Context(), cmp.Or(tt.ctxLimit, time.Hour))
				defer cancel()
				if tt.cancelAt > 0 {
					time.AfterFunc(tt.cancelAt, cancel)
				}
				opts := append([]policies.Option{policies.WithBackoff(policies.Constant{})}, tt.opts...)
				start := time.Now()
				resp, err := newTransport(t, base, opts...).RoundTrip(post(t, "p", true).WithContext(ctx))
				if got := time.Since(start); got != tt.elapsed {
					t.Errorf("RoundTrip returned after %v, want %v", got, tt.elapsed)
				}
				if tt.ctxEnds && resp == nil {
					if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
						t.Errorf("RoundTrip error %v, want the context's error", err)
					}
					return
				}
				if err != nil || resp.StatusCode != 529 {
					t.Fatalf("RoundTrip = %v, %v; want the 529", resp, err)
				}
				defer resp.Body.Close()
				_, err = io.ReadAll(resp.Body)
				if cut := errors.Is(err, policies.ErrErrorBodyTimeout); cut != tt.cut || !cut && err != nil {
					t.Errorf("reading the returned body: %v; want cut off: %v", err, tt.cut)
				}
			})
		})
	}
}

// slowHeaders is a base whose responses take d to arrive, unless the
// request's context ends first.
type slowHeaders struct{ d time.Duration }

func (s slowHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	select {
	case <-time.After(s.d):
		return &http.Response{StatusCode: 529, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// The budget bounds a Transport's round trip too: headers still awaited at
// the budget's end are given up there (4 s round trips, 10 s budget: the
// third, from 9 s, is cut at 10 s).
func TestTransportBudgetCutsTheRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		tr := newTransport(t, slowHeaders{4 * time.Second},
			policies.WithBackoff(policies.Constant{Wait: 500 * time.Millisecond}), policies.WithBudget(10*time.Second))
		resp, err := tr.RoundTrip(post(t, "p", true))
		if elapsed := time.Since(start); elapsed != 10*time.Second {
			t.Errorf("RoundTrip returned after %v, want at the 10 s budget", elapsed)
		}
		// The last attempt got no response: Do's error says why.
		if resp != nil || !errors.Is(err, policies.ErrBudgetEnded) {
			t.Fatalf("RoundTrip = %v, %v; want no response and ErrBudgetEnded", resp, err)
		}
	})
}

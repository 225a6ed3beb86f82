package policies_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// sseBase answers every request with an event stream played on the clock
// through an io.Pipe: the opening events, deltas text deltas gap apart,
// then message_stop if complete, or else a ping every pings (if > 0) until
// the connection is cut at cut.
type sseBase struct {
	deltas   int
	gap      time.Duration
	complete bool
	pings    time.Duration
	cut      time.Duration
	ended    atomic.Value // the cause that ended the request's context, if one did
}

func (s *sseBase) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	start := time.Now()
	wait := func(at time.Duration) bool {
		select {
		case <-time.After(at - time.Since(start)):
			return true
		case <-ctx.Done():
			return false
		}
	}
	pr, pw := io.Pipe()
	endBody := func() {
		s.ended.Store(fmt.Sprint(context.Cause(ctx)))
		_ = pw.CloseWithError(context.Cause(ctx))
	}
	stop := context.AfterFunc(ctx, endBody)
	go func() {
		defer func() {
			// This goroutine may see the context end before its AfterFunc
			// has run, and stop then keeps it from running: so the body is
			// ended here too (a second end changes nothing).
			stop()
			if ctx.Err() != nil {
				endBody()
			}
		}()
		send := func(name, data string) bool {
			_, err := fmt.Fprintf(pw, "event: %s\ndata: %s\n\n", name, data)
			return err == nil
		}
		if !send("message_start", `{"type":"message_start"}`) || !send("ping", `{"type":"ping"}`) {
			return
		}
		for k := range s.deltas {
			if !wait(time.Duration(k+1)*s.gap) || !send("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"w"}}`) {
				return
			}
		}
		if s.complete {
			if send("message_stop", `{"type":"message_stop"}`) {
				_ = pw.Close()
			}
			return
		}
		for at := time.Duration(s.deltas)*s.gap + s.pings; s.pings > 0 && at < s.cut; at += s.pings {
			if !wait(at) || !send("ping", `{"type":"ping"}`) {
				return
			}
		}
		if wait(s.cut) {
			_ = pw.CloseWithError(io.ErrUnexpectedEOF)
		}
	}()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}, Body: pr, Request: req}, nil
}

// Transport's watchdog on the body it returns: a slow healthy stream is
// read to its end; a stream that stalls after content, or sends only
// pings, ends, when the simulator's watchdog says, with a stalled
// *StreamError, and its connection is closed. RoundTrip has returned, so
// it is not retried there.
func TestTransportWatchdogEndsAStalledBody(t *testing.T) {
	const idle = 3 * time.Second
	tests := []struct {
		name     string
		base     *sseBase
		timeline machine.StreamTimeline
	}{
		{"healthy and slow", &sseBase{deltas: 7, gap: time.Second, complete: true}, machine.StreamTimeline{}},
		{"stall after 3 deltas", &sseBase{deltas: 3, gap: time.Second, cut: 10 * time.Minute},
			machine.StreamTimeline{Faulted: true, Content: 3, First: time.Second, Gap: time.Second, End: 10 * time.Minute}},
		{"ping_only", &sseBase{pings: time.Second, cut: 10 * time.Minute},
			machine.StreamTimeline{Faulted: true, End: 10 * time.Minute, Pings: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newTransport(t, tt.base, policies.WithPolicy(policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 3, StreamIdleTimeout: idle}))
				start := time.Now()
				resp, err := tr.RoundTrip(post(t, `{"model":"m","stream":true}`, true))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				elapsed := time.Since(start)
				at, content, fires := machine.Watchdog{Idle: idle}.Fires(tt.timeline)
				if !fires {
					if err != nil || !strings.Contains(string(b), "message_stop") || elapsed != 7*time.Second {
						t.Fatalf("read %d bytes, %v, after %v; want the whole stream after 7s", len(b), err, elapsed)
					}
					return
				}
				var se *policies.StreamError
				if !errors.As(err, &se) || !se.Stalled || se.Content != content || !errors.Is(err, policies.ErrStalled) {
					t.Fatalf("body ended with %v, want a stalled *StreamError after %d content events", err, content)
				}
				if out := policies.ClassifyError(err, time.Now()); out.Class != policies.Transient || out.MidStream() != (content > 0) {
					t.Errorf("classified as %+v", out)
				}
				if elapsed != at {
					t.Errorf("ended after %v, the simulator's watchdog at %v", elapsed, at)
				}
				synctest.Wait()
				if got, _ := tt.base.ended.Load().(string); got != policies.ErrStalled.Error() {
					t.Errorf("the request's context ended with %q, want the watchdog's cause", got)
				}
			})
		})
	}
}

// slowHeaderBase answers after wait with 200.
type slowHeaderBase struct {
	wait time.Duration
	n    atomic.Int32
}

func (s *slowHeaderBase) RoundTrip(req *http.Request) (*http.Response, error) {
	s.n.Add(1)
	select {
	case <-time.After(s.wait):
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

// The watchdog's first-byte timeout applies before the headers only to
// requests that ask for a stream: a request that does not may take its
// time to answer.
func TestTransportWatchdogLeavesRequestsThatDoNotStream(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		accept   string
		requests int32
	}{
		{"JSON without stream", `{"model":"m","stream":false}`, "", 1},
		{"stream only inside a message", `{"model":"m","messages":[{"stream":true}]}`, "", 1},
		{"stream: true", `{"model":"m","messages":[{"stream":true}],"stream":true}`, "", 3},
		{"Accept: text/event-stream", `{}`, "text/event-stream", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &slowHeaderBase{wait: 10 * time.Second}
				tr := newTransport(t, base, policies.WithPolicy(policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 3, StreamIdleTimeout: 3 * time.Second}))
				req := post(t, tc.body, true)
				if tc.accept != "" {
					req.Header.Set("Accept", tc.accept)
				}
				resp, err := tr.RoundTrip(req)
				if n := base.n.Load(); n != tc.requests {
					t.Errorf("%d requests sent, want %d", n, tc.requests)
				}
				if tc.requests == 1 {
					if err != nil || resp.StatusCode != 200 {
						t.Errorf("RoundTrip = %v, %v; want the 200", resp, err)
					}
					return
				}
				var pe *policies.Error
				var se *policies.StreamError
				if !errors.As(err, &pe) || !errors.As(err, &se) || !se.Stalled {
					t.Errorf("RoundTrip error %v, want the attempts ended by the watchdog", err)
				}
			})
		})
	}
}

// A hedging Transport refuses a request whose body it cannot replay, and
// says why, before sending anything.
func TestTransportRefusesToHedgeAnUnreplayableBody(t *testing.T) {
	base := &scriptedTransport{statuses: []int{200}}
	tr := newTransport(t, base, policies.WithCoordinator(must(policies.NewHedger(policies.HedgeConfig{Delay: time.Second}))))
	req := post(t, "x", false)
	body := &trackedBody{r: strings.NewReader("x")}
	req.Body = body
	resp, err := tr.RoundTrip(req)
	if resp != nil || !errors.Is(err, policies.ErrHedgeUnreplayableBody) || !strings.Contains(err.Error(), "GetBody") {
		t.Fatalf("RoundTrip = %v, %v; want ErrHedgeUnreplayableBody", resp, err)
	}
	if len(base.sent) != 0 || !body.closed.Load() {
		t.Errorf("%d requests sent, body closed %v; want none and closed", len(base.sent), body.closed.Load())
	}
	// Without a Hedger it is sent once, as before.
	if _, err := newTransport(t, base).RoundTrip(post(t, "x", false)); err != nil || len(base.sent) != 1 {
		t.Errorf("without a Hedger: %v, %d sent", err, len(base.sent))
	}
}

// namedBase answers the i-th request after waits[i] with a body naming it,
// and records which bodies were closed.
type namedBase struct {
	waits  []time.Duration
	n      atomic.Int32
	bodies [8]*trackedBody
}

func (s *namedBase) RoundTrip(req *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(req.Body)
	if string(b) != "question" {
		return nil, fmt.Errorf("body %q", b)
	}
	i := int(s.n.Add(1)) - 1
	select {
	case <-time.After(s.waits[i]):
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	s.bodies[i] = &trackedBody{r: strings.NewReader(fmt.Sprintf("answer %d", i))}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: s.bodies[i], Request: req}, nil
}

// A hedged round trip returns the first copy to answer, its body whole;
// the copy that lost is cancelled, or closed if it answered too, and the
// Hedger counts both.
func TestTransportHedgeReturnsTheFirstAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := must(policies.NewHedger(policies.HedgeConfig{Delay: time.Second, MaxHedges: 2}))
		// Copy 0 answers at 5 s, copy 1 (sent at 1 s) at 1.5 s, copy 2
		// (at 2 s) would answer at 2 s but is never sent.
		base := &namedBase{waits: []time.Duration{5 * time.Second, 500 * time.Millisecond, 0}}
		start := time.Now()
		resp, err := newTransport(t, base, policies.WithCoordinator(h)).RoundTrip(post(t, "question", true))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if string(b) != "answer 1" || time.Since(start) != 1500*time.Millisecond {
			t.Errorf("got %q after %v, want answer 1 after 1.5s", b, time.Since(start))
		}
		if st := h.Stats(); st.Sent != 1 || st.Cancelled != 1 || base.n.Load() != 2 {
			t.Errorf("hedger %+v, %d requests; want 1 hedge sent, 1 copy cancelled, 2 requests", st, base.n.Load())
		}
		if !base.bodies[1].closed.Load() || base.bodies[0] != nil {
			t.Error("the answer's body was not closed by the caller's Close, or the cancelled copy got one")
		}
	})
}

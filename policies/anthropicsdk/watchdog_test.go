package anthropicsdk_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/anthropicsdk"
	"github.com/retrysim/retrysim/policies/machine"
)

// paced is how pacedAPI plays one streamed answer on the clock, from the
// request's arrival: the shapes of serve's stream faults
// (docs/scenarios.md, "Stream faults").
type paced struct {
	// silent: no byte, not even the headers, until cut (stall_first_byte).
	silent bool
	// deltas text deltas, the first gap after the arrival, then gap apart.
	deltas int
	gap    time.Duration
	// complete ends the stream with message_stop after the deltas;
	// otherwise a ping comes every pings (if > 0) until the connection is
	// cut at cut (stall after k deltas, ping_only).
	complete bool
	pings    time.Duration
	cut      time.Duration
}

// pacedAPI answers the i-th streamed request with plays[i] (the last
// repeats), its body an io.Pipe written on the clock, so the real SDK
// reads it as it comes.
type pacedAPI struct {
	plays []paced
	mu    sync.Mutex
	n     int
}

func (p *pacedAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	p.mu.Lock()
	play := p.plays[min(p.n, len(p.plays)-1)]
	p.n++
	p.mu.Unlock()
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
	if play.silent {
		if !wait(play.cut) {
			return nil, ctx.Err()
		}
		return nil, io.ErrUnexpectedEOF // the connection was cut before the headers
	}
	pr, pw := io.Pipe()
	// The end of the request's context ends the body's reads.
	endBody := func() { _ = pw.CloseWithError(context.Cause(ctx)) }
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
		if !send("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"big","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}`) ||
			!send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) ||
			!send("ping", `{"type":"ping"}`) {
			return
		}
		for k := range play.deltas {
			if !wait(time.Duration(k+1)*play.gap) || !send("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"w%d "}}`, k)) {
				return
			}
		}
		if play.complete {
			if send("content_block_stop", `{"type":"content_block_stop","index":0}`) &&
				send("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}`) &&
				send("message_stop", `{"type":"message_stop"}`) {
				_ = pw.Close()
			}
			return
		}
		if play.pings > 0 {
			for at := time.Duration(play.deltas)*play.gap + play.pings; at < play.cut; at += play.pings {
				if !wait(at) || !send("ping", `{"type":"ping"}`) {
					return
				}
			}
		}
		if wait(play.cut) {
			_ = pw.CloseWithError(io.ErrUnexpectedEOF) // the connection was cut
		}
	}()
	return &http.Response{
		Status: "200 OK", StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}, "Request-Id": {"req_1"}},
		Body:    pr,
		Request: req,
	}, nil
}

// The stream watchdog with anthropicsdk.ReadStream and the real SDK: a
// slow but healthy stream (a text delta every second for 7 s, idle timeout
// 3 s) completes on its first attempt, because ReadStream reports its
// content events; stalled streams (serve's stall, ping_only and
// stall_first_byte) are ended at the time the simulator's watchdog
// (machine.Watchdog.Fires) gives and retried, classified as it classifies
// them.
func TestReadStreamFeedsTheWatchdog(t *testing.T) {
	const idle = 3 * time.Second
	healthy := paced{deltas: 7, gap: time.Second, complete: true}
	tests := []struct {
		name     string
		first    paced // the first attempt's stream; later ones are healthy
		timeline machine.StreamTimeline
		status   int // the retried outcome's status: 200 after content, 0 before
	}{
		{"healthy and slow", healthy, machine.StreamTimeline{}, 0},
		{"stall after 3 deltas", paced{deltas: 3, gap: time.Second, cut: 10 * time.Minute},
			machine.StreamTimeline{Faulted: true, Content: 3, First: time.Second, Gap: time.Second, End: 10 * time.Minute}, 200},
		{"ping_only", paced{pings: time.Second, cut: 10 * time.Minute},
			machine.StreamTimeline{Faulted: true, End: 10 * time.Minute, Pings: time.Second}, 0},
		{"stall_first_byte", paced{silent: true, cut: 10 * time.Minute},
			machine.StreamTimeline{Faulted: true, End: 10 * time.Minute, Silent: true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := &pacedAPI{plays: []paced{tt.first, healthy}}
				client := newClient(api)
				var retries []policies.RetryEvent
				var text string
				start := time.Now()
				var endedAt time.Duration
				err := policies.Do(t.Context(), func(ctx context.Context, _ policies.Attempt) error {
					stream := client.Messages.NewStreaming(ctx, params("big"))
					defer stream.Close()
					msg, err := anthropicsdk.ReadStream(ctx, stream)
					if err != nil {
						endedAt = time.Since(start)
						return err
					}
					text = msg.Content[0].Text
					return nil
				},
					policies.WithPolicy(policies.Policy{Backoff: policies.Constant{Wait: time.Second}, MaxAttempts: 3, StreamIdleTimeout: idle}),
					anthropicsdk.WithClassifier(),
					policies.WithHooks(policies.Hooks{OnRetryScheduled: func(e policies.RetryEvent) { retries = append(retries, e) }}),
				)
				if err != nil {
					t.Fatalf("Do: %v (after %d retries)", err, len(retries))
				}
				if want := "w0 w1 w2 w3 w4 w5 w6 "; text != want {
					t.Errorf("text %q, want %q", text, want)
				}
				at, content, fires := machine.Watchdog{Idle: idle}.Fires(tt.timeline)
				if !fires {
					if len(retries) != 0 || api.n != 1 {
						t.Fatalf("%d requests, retries %+v; want the first to complete", api.n, retries)
					}
					if elapsed := time.Since(start); elapsed != 7*time.Second {
						t.Errorf("took %v, want 7s", elapsed)
					}
					return
				}
				if len(retries) != 1 || api.n != 2 {
					t.Fatalf("%d requests, retries %+v; want one retry", api.n, retries)
				}
				var se *policies.StreamError
				if !errors.As(retries[0].Err, &se) || !se.Stalled || se.Content != content {
					t.Errorf("retried on %v, want a stalled *StreamError after %d content events", retries[0].Err, content)
				}
				if out := retries[0].Outcome; out.Class != policies.Transient || out.Status != tt.status {
					t.Errorf("retried as %v status %d, want transient status %d", out.Class, out.Status, tt.status)
				}
				if endedAt != at {
					t.Errorf("the watchdog ended the first attempt at %v, the simulator's at %v", endedAt, at)
				}
				if elapsed, want := time.Since(start), at+time.Second+7*time.Second; elapsed != want {
					t.Errorf("took %v, want %v", elapsed, want)
				}
			})
		})
	}
}

// Without a watchdog in its context, ReadStream reads a slow stream to its
// end; a stream cut after content comes back as a *policies.StreamError
// that classifies as a mid-stream failure (status 200).
func TestReadStreamCutIsAStreamError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newClient(&pacedAPI{plays: []paced{{deltas: 2, gap: time.Second, cut: 5 * time.Second}}})
		stream := client.Messages.NewStreaming(t.Context(), params("big"))
		defer stream.Close()
		_, err := anthropicsdk.ReadStream(t.Context(), stream)
		var se *policies.StreamError
		if !errors.As(err, &se) || se.Content != 2 || se.Stalled || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("ReadStream error %v, want a cut *StreamError after 2 content events", err)
		}
		if out := anthropicsdk.Classify(err, time.Now()); out.Class != policies.Transient || !out.MidStream() {
			t.Errorf("classified as %+v, want a transient mid-stream failure", out)
		}
	})
}

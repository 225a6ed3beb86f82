package policies_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/retrysim/retrysim/policies"
)

// These tests use real servers on 127.0.0.1 (HTTP/1.1, and HTTP/2 over TLS)
// whose handlers break the connection the way a crashing or overloaded
// server does. They run on the real clock, so every retry waits 0.

// sseStream is a complete streamed answer; sseStart is its first event.
const (
	sseStart  = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n"
	sseStream = sseStart + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

// breakMode is how a loopback server's handler fails a request.
type breakMode string

const (
	abortBeforeHeaders  breakMode = "abort before headers"  // panic(http.ErrAbortHandler): HTTP/2 sends RST_STREAM
	hijackBeforeHeaders breakMode = "hijack before headers" // HTTP/1.1 only: the connection is closed
	abortMidStream      breakMode = "abort mid-stream"      // a 200, one SSE event, flush, then abort
)

// startBreakingAPI starts a loopback server whose first `fails` requests
// break as mode says; later requests get sseStream. It returns the server
// and the count of requests it received.
func startBreakingAPI(t *testing.T, http2 bool, mode breakMode, fails int32) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if hits.Add(1) > fails {
			w.Header().Set("content-type", "text/event-stream")
			_, _ = io.WriteString(w, sseStream)
			return
		}
		switch mode {
		case hijackBeforeHeaders:
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(http.ErrAbortHandler)
			}
			_ = conn.Close()
		case abortMidStream:
			w.Header().Set("content-type", "text/event-stream")
			_, _ = io.WriteString(w, sseStart)
			_ = http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		default:
			panic(http.ErrAbortHandler)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if http2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &hits
}

// protoName names the protocol of a test case.
func protoName(http2 bool) string {
	if http2 {
		return "HTTP/2"
	}
	return "HTTP/1.1"
}

// loopbackCases lists the protocol and break mode combinations; hijacking
// exists only in HTTP/1.1.
func loopbackCases(modes ...breakMode) (cases []struct {
	http2 bool
	mode  breakMode
}) {
	for _, h2 := range []bool{false, true} {
		for _, m := range modes {
			if h2 && m == hijackBeforeHeaders {
				continue
			}
			cases = append(cases, struct {
				http2 bool
				mode  breakMode
			}{h2, m})
		}
	}
	return cases
}

// readStream reads a whole SSE response and fails unless it ended with
// message_stop.
func readStream(resp *http.Response) error {
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if !strings.HasSuffix(string(body), sseStream[len(sseStart):]) {
		return fmt.Errorf("stream ended without message_stop: %w", io.ErrUnexpectedEOF)
	}
	return nil
}

func postStream(ctx context.Context, client *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"stream":true}`))
	if err != nil {
		return nil, err
	}
	return client.Do(req)
}

// A connection broken before the response headers is retried by Transport.
func TestTransportRetriesBrokenConnectionsLoopback(t *testing.T) {
	for _, tc := range loopbackCases(abortBeforeHeaders, hijackBeforeHeaders) {
		t.Run(protoName(tc.http2)+" "+string(tc.mode), func(t *testing.T) {
			srv, hits := startBreakingAPI(t, tc.http2, tc.mode, 1)
			var classes []policies.Class
			client := &http.Client{Transport: newTransport(t, srv.Client().Transport,
				policies.WithMaxAttempts(3), policies.WithBackoff(policies.Constant{}),
				policies.WithHooks(policies.Hooks{OnRetryScheduled: func(e policies.RetryEvent) {
					classes = append(classes, e.Outcome.Class)
				}}))}
			resp, err := postStream(t.Context(), client, srv.URL)
			if err != nil {
				t.Fatalf("request failed after %d sends: %v", hits.Load(), err)
			}
			if want := map[bool]int{false: 1, true: 2}[tc.http2]; resp.ProtoMajor != want {
				t.Errorf("answered over %s, want HTTP/%d", resp.Proto, want)
			}
			if err := readStream(resp); err != nil {
				t.Errorf("reading the answer: %v", err)
			}
			if len(classes) != 1 || classes[0] != policies.Transient {
				t.Errorf("retries scheduled for %v, want one transient", classes)
			}
		})
	}
}

// Do retries a call through a plain http.Client, or a client over Transport
// (which then sends once), whether the connection breaks before the headers
// or in the middle of the streamed body.
func TestDoRetriesBrokenConnectionsLoopback(t *testing.T) {
	for _, tc := range loopbackCases(abortBeforeHeaders, hijackBeforeHeaders, abortMidStream) {
		for _, overTransport := range []bool{false, true} {
			name := protoName(tc.http2) + " " + string(tc.mode)
			if overTransport {
				name += " over Transport"
			}
			t.Run(name, func(t *testing.T) {
				srv, hits := startBreakingAPI(t, tc.http2, tc.mode, 1)
				client := srv.Client()
				if overTransport {
					client = &http.Client{Transport: newTransport(t, client.Transport)}
				}
				var retried []error
				err := policies.Do(t.Context(), func(ctx context.Context, a policies.Attempt) error {
					resp, err := postStream(ctx, client, srv.URL)
					if err != nil {
						return err
					}
					return readStream(resp)
				},
					policies.WithMaxAttempts(3), policies.WithBackoff(policies.Constant{}),
					policies.WithHooks(policies.Hooks{OnRetryScheduled: func(e policies.RetryEvent) {
						retried = append(retried, e.Err)
					}}))
				if err != nil {
					t.Fatalf("Do: %v", err)
				}
				if len(retried) != 1 || hits.Load() != 2 {
					t.Errorf("retried after %v; server saw %d requests, want 2", retried, hits.Load())
				}
			})
		}
	}
}

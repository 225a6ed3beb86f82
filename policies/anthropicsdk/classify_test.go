package anthropicsdk_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/anthropicsdk"
)

const (
	contractCapBody = `{"type":"error","error":{"type":"rate_limit_error","message":"contract","details":{"error_code":"contract_spend_limit_reached"}}}`
	timeoutBody     = `{"type":"error","error":{"type":"timeout_error","message":"timeout"}}`
)

// TestClassify drives the real SDK client against scripted responses, so
// every *anthropic.Error is built by the SDK itself, and classifies the
// error it returns.
func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		reply  reply
		stream bool // call Messages.NewStreaming and iterate
		ctx    func(context.Context) (context.Context, context.CancelFunc)
		wrap   bool // wrap the SDK's error before classifying
		sdk    bool // the error is an *anthropic.Error (with the reply's status)
		want   policies.Outcome
	}{
		{name: "529 overloaded", reply: reply{status: 529, body: overloadedBody}, sdk: true,
			want: policies.Outcome{Class: policies.Capacity, Status: 529}},
		{name: "503", reply: reply{status: 503, body: overloadedBody}, sdk: true,
			want: policies.Outcome{Class: policies.Capacity, Status: 503}},
		{name: "429 retry-after", reply: reply{status: 429, header: []string{"retry-after", "2"}, body: rateLimitBody}, sdk: true,
			want: policies.Outcome{Class: policies.RetryAfter, Status: 429, ServerWait: 2 * time.Second}},
		{name: "429 retry-after-ms before retry-after", reply: reply{status: 429, header: []string{"retry-after-ms", "1500.5", "retry-after", "9"}, body: rateLimitBody}, sdk: true,
			want: policies.Outcome{Class: policies.RetryAfter, Status: 429, ServerWait: 1500500 * time.Microsecond}},
		{name: "429 retry-after HTTP-date", reply: reply{status: 429, header: []string{"retry-after", "Sat, 01 Jan 2000 00:00:03 GMT"}, body: rateLimitBody}, sdk: true,
			want: policies.Outcome{Class: policies.RetryAfter, Status: 429, ServerWait: 3 * time.Second}},
		{name: "429 without hint", reply: reply{status: 429, body: rateLimitBody}, sdk: true,
			want: policies.Outcome{Class: policies.RetryAfter, Status: 429}},
		{name: "spend-cap 429", reply: reply{status: 429, header: []string{"retry-after", "2", "x-should-retry", "true"}, body: spendCapBody}, sdk: true,
			want: policies.Outcome{Class: policies.Terminal, Status: 429}},
		{name: "contract spend-cap 429", reply: reply{status: 429, body: contractCapBody}, sdk: true,
			want: policies.Outcome{Class: policies.Terminal, Status: 429}},
		{name: "500 api_error", reply: reply{status: 500, body: apiErrorBody}, sdk: true,
			want: policies.Outcome{Class: policies.Transient, Status: 500}},
		{name: "502 HTML from a proxy", reply: reply{status: 502, body: "<html>bad gateway</html>"}, sdk: true,
			want: policies.Outcome{Class: policies.Transient, Status: 502}},
		{name: "500 overloaded_error body", reply: reply{status: 500, body: overloadedBody}, sdk: true,
			want: policies.Outcome{Class: policies.Capacity, Status: 500}},
		{name: "400", reply: reply{status: 400, body: badRequestBody}, sdk: true,
			want: policies.Outcome{Class: policies.Terminal, Status: 400}},
		{name: "401", reply: reply{status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"no"}}`}, sdk: true,
			want: policies.Outcome{Class: policies.Terminal, Status: 401}},
		{name: "529 x-should-retry false", reply: reply{status: 529, header: []string{"x-should-retry", "false", "retry-after", "1"}, body: overloadedBody}, sdk: true,
			want: policies.Outcome{Class: policies.Terminal, Status: 529}},
		{name: "400 x-should-retry true", reply: reply{status: 400, header: []string{"x-should-retry", "true"}, body: badRequestBody}, sdk: true,
			want: policies.Outcome{Class: policies.Transient, Status: 400}},
		{name: "mid-stream overloaded_error", reply: reply{status: 200, midStream: overloadedBody}, stream: true, sdk: true,
			want: policies.Outcome{Class: policies.Capacity, Status: 200}},
		{name: "mid-stream overloaded_error ignores the 200's headers", reply: reply{status: 200, header: []string{"x-should-retry", "false", "retry-after", "5"}, midStream: overloadedBody}, stream: true, sdk: true,
			want: policies.Outcome{Class: policies.Capacity, Status: 200}},
		{name: "mid-stream api_error", reply: reply{status: 200, midStream: apiErrorBody}, stream: true, sdk: true,
			want: policies.Outcome{Class: policies.Transient, Status: 200}},
		{name: "mid-stream timeout_error", reply: reply{status: 200, midStream: timeoutBody}, stream: true, sdk: true,
			want: policies.Outcome{Class: policies.Transient, Status: 200}},
		{name: "mid-stream rate_limit_error", reply: reply{status: 200, midStream: rateLimitBody}, stream: true, sdk: true,
			want: policies.Outcome{Class: policies.RetryAfter, Status: 200}},
		{name: "mid-stream spend cap", reply: reply{status: 200, midStream: spendCapBody}, stream: true, sdk: true,
			want: policies.Outcome{Class: policies.Terminal, Status: 200}},
		{name: "mid-stream unknown type", reply: reply{status: 200, midStream: `{"type":"error","error":{"type":"invalid_request_error","message":"?"}}`}, stream: true, sdk: true,
			want: policies.Outcome{Class: policies.Terminal, Status: 200}},
		{name: "wrapped 529", reply: reply{status: 529, body: overloadedBody}, wrap: true, sdk: true,
			want: policies.Outcome{Class: policies.Capacity, Status: 529}},
		{name: "wrapped mid-stream overloaded_error", reply: reply{status: 200, midStream: overloadedBody}, stream: true, wrap: true, sdk: true,
			want: policies.Outcome{Class: policies.Capacity, Status: 200}},
		{name: "wrapped 429 retry-after", reply: reply{status: 429, header: []string{"retry-after", "2"}, body: rateLimitBody}, wrap: true, sdk: true,
			want: policies.Outcome{Class: policies.RetryAfter, Status: 429, ServerWait: 2 * time.Second}},
		{name: "connection reset", reply: reply{connErr: syscall.ECONNRESET},
			want: policies.Outcome{Class: policies.Transient}},
		{name: "connection reset while streaming", reply: reply{connErr: syscall.ECONNRESET}, stream: true,
			want: policies.Outcome{Class: policies.Transient}},
		{name: "caller cancelled", reply: reply{status: 200},
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				cancel()
				return ctx, cancel
			},
			want: policies.Outcome{Class: policies.Terminal}},
		{name: "deadline exceeded", reply: reply{status: 200},
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithDeadline(ctx, time.Now().Add(-time.Second))
			},
			want: policies.Outcome{Class: policies.Transient}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The bubble's clock starts at 2000-01-01 00:00:00 UTC, which
			// the HTTP-date case relies on.
			synctest.Test(t, func(t *testing.T) {
				client := newClient(newFakeAPI(tt.reply))
				ctx := t.Context()
				if tt.ctx != nil {
					var cancel context.CancelFunc
					ctx, cancel = tt.ctx(ctx)
					defer cancel()
				}
				var err error
				if tt.stream {
					_, err = streamText(ctx, client, "big")
				} else {
					_, err = client.Messages.New(ctx, params("big"))
				}
				if err == nil {
					t.Fatal("the call succeeded")
				}
				var apiErr *anthropic.Error
				if isSDK := errors.As(err, &apiErr); isSDK != tt.sdk {
					t.Fatalf("error %v (%T): *anthropic.Error %v, want %v", err, err, isSDK, tt.sdk)
				}
				if tt.sdk && apiErr.StatusCode != tt.reply.status {
					t.Fatalf("SDK error status %d, want %d", apiErr.StatusCode, tt.reply.status)
				}
				if tt.wrap {
					err = fmt.Errorf("asking the model: %w", err)
				}
				if got := anthropicsdk.Classify(err, time.Now()); got != tt.want {
					t.Errorf("Classify(%v) = %+v, want %+v", err, got, tt.want)
				}
			})
		})
	}
}

// TestDefaultClassifierMissesSDKErrors records why this package exists: the
// default classifier stops on an *anthropic.Error, even a 529 or a
// mid-stream overloaded_error, as on any error it does not know.
func TestDefaultClassifierMissesSDKErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newClient(newFakeAPI(reply{status: 529, body: overloadedBody}, reply{status: 200, midStream: overloadedBody}))
		_, err529 := client.Messages.New(t.Context(), params("big"))
		_, errMid := streamText(t.Context(), client, "big")
		for _, err := range []error{err529, errMid} {
			var apiErr *anthropic.Error
			if !errors.As(err, &apiErr) || apiErr.Type() != "overloaded_error" {
				t.Fatalf("got %v, want an SDK overloaded_error", err)
			}
			if got := policies.ClassifyError(err, time.Now()).Class; got != policies.Terminal {
				t.Errorf("policies.ClassifyError(%d overloaded_error) = %v; if the core learnt the SDK's errors, this package may go", apiErr.StatusCode, got)
			}
			if got := anthropicsdk.Classify(err, time.Now()).Class; got != policies.Capacity {
				t.Errorf("Classify(%d overloaded_error) = %v, want capacity", apiErr.StatusCode, got)
			}
		}
	})
}

// TestClassifyNonSDKErrors checks the fallback to policies.ClassifyError
// for errors that are not the SDK's.
func TestClassifyNonSDKErrors(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		err  error
		want policies.Outcome
	}{
		{&policies.HTTPError{StatusCode: 529}, policies.Outcome{Class: policies.Capacity, Status: 529}},
		{fmt.Errorf("x: %w", &policies.HTTPError{StatusCode: 429, Header: http.Header{"Retry-After": {"1"}}}), policies.Outcome{Class: policies.RetryAfter, Status: 429, ServerWait: time.Second}},
		{context.Canceled, policies.Outcome{Class: policies.Terminal}},
		{context.DeadlineExceeded, policies.Outcome{Class: policies.Transient}},
		{syscall.ECONNREFUSED, policies.Outcome{Class: policies.Transient}},
		{errors.New("bug"), policies.Outcome{Class: policies.Terminal}},
	}
	for _, tt := range tests {
		if got, want := anthropicsdk.Classify(tt.err, now), policies.ClassifyError(tt.err, now); got != want || got != tt.want {
			t.Errorf("Classify(%v) = %+v, ClassifyError = %+v, want %+v", tt.err, got, want, tt.want)
		}
	}
}

// TestClassifyHandMadeError covers an *anthropic.Error built without the
// SDK's decoding (as a user's test might): no body, no response.
func TestClassifyHandMadeError(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		err  *anthropic.Error
		want policies.Outcome
	}{
		{&anthropic.Error{StatusCode: 529}, policies.Outcome{Class: policies.Capacity, Status: 529}},
		{&anthropic.Error{StatusCode: 429}, policies.Outcome{Class: policies.RetryAfter, Status: 429}},
		{&anthropic.Error{StatusCode: 404}, policies.Outcome{Class: policies.Terminal, Status: 404}},
		{&anthropic.Error{}, policies.Outcome{Class: policies.Terminal}}, // no status, no type: never Success
	} {
		if got := anthropicsdk.Classify(tt.err, now); got != tt.want {
			t.Errorf("Classify(status %d) = %+v, want %+v", tt.err.StatusCode, got, tt.want)
		}
	}
}

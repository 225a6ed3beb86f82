package policies_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/anthropicsdk"
	"github.com/retrysim/retrysim/serve"
)

// These tests drive the real anthropic-sdk-go/v2 client, its own retries
// off, against fakeAPI served in memory inside a synctest bubble.

func sdkClient(httpClient *http.Client, extra ...option.RequestOption) anthropic.Client {
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey("test-key"),
		option.WithBaseURL("http://api.test/"),
		option.WithMaxRetries(0), // one retry layer: ours
		option.WithHTTPClient(httpClient),
	}
	return anthropic.NewClient(append(opts, extra...)...)
}

func newParams(model string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     anthropic.Model(model),
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	}
}

func TestSDKTransport(t *testing.T) {
	tests := []struct {
		name     string
		replies  []reply
		requests int
		status   int // the SDK error's status; 0 for success
		check    func(t *testing.T, reqs []request)
	}{
		{
			name:     "529 twice then ok",
			replies:  []reply{{status: 529, body: overloadedBody}, {status: 529, body: overloadedBody}, {status: 200}},
			requests: 3,
			check: func(t *testing.T, reqs []request) {
				for _, r := range reqs[1:] {
					if r.body != reqs[0].body {
						t.Errorf("replayed body differs:\n%s\n%s", r.body, reqs[0].body)
					}
				}
			},
		},
		{
			name:     "429 retry-after 2s then ok",
			replies:  []reply{{status: 429, header: []string{"retry-after", "2"}, body: rateLimitBody}, {status: 200}},
			requests: 2,
			check: func(t *testing.T, reqs []request) {
				if reqs[1].at != 2*time.Second {
					t.Errorf("retry sent at %v, want 2s", reqs[1].at)
				}
			},
		},
		{
			name:     "spend cap 429",
			replies:  []reply{{status: 429, body: spendCapBody}, {status: 200}},
			requests: 1,
			status:   429,
		},
		{
			name:     "500 then 400",
			replies:  []reply{{status: 500, body: apiErrorBody}, {status: 400, body: badRequestBody}, {status: 200}},
			requests: 2,
			status:   400,
		},
		{
			name:    "529 forever under a 3 s budget",
			replies: []reply{{status: 529, body: overloadedBody}},
			status:  529,
			check: func(t *testing.T, reqs []request) {
				if len(reqs) < 3 {
					t.Errorf("only %d requests in 3 s", len(reqs))
				}
				for _, r := range reqs {
					if r.at > 3*time.Second {
						t.Errorf("request sent at %v, after the budget", r.at)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newFakeAPI(tt.replies...)
				tr := newTransport(t, serve.InMemory(api), policies.WithBudget(3*time.Second), policies.WithGate(&policies.Gate{}))
				client := sdkClient(&http.Client{Transport: tr})
				start := time.Now()
				msg, err := client.Messages.New(t.Context(), newParams("big"))
				reqs := api.seen()
				if tt.requests > 0 && len(reqs) != tt.requests {
					t.Errorf("%d requests, want %d", len(reqs), tt.requests)
				}
				if tt.status == 0 {
					if err != nil {
						t.Fatalf("New: %v", err)
					}
					if msg.Content[0].Text != "Hello" {
						t.Errorf("text %q", msg.Content[0].Text)
					}
				} else {
					var apiErr *anthropic.Error
					if !errors.As(err, &apiErr) || apiErr.StatusCode != tt.status {
						t.Fatalf("New = %v, want an API error with status %d", err, tt.status)
					}
				}
				if d := time.Since(start); d > 3*time.Second {
					t.Errorf("took %v, beyond the 3 s budget", d)
				}
				if tt.check != nil {
					tt.check(t, reqs)
				}
			})
		})
	}
}

// TestSDKStreamingFallback runs Do around a streaming call: 529, then a
// stream that breaks with an overloaded_error event after a text delta, then
// 529, then success on the fallback model. The transport is installed too; it
// steps aside inside Do so retries do not multiply.
func TestSDKStreamingFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI(
			reply{status: 529, body: overloadedBody},
			reply{status: 200, overloadMidStream: true},
			reply{status: 529, body: overloadedBody},
			reply{status: 200},
		)
		gate := &policies.Gate{}
		client := sdkClient(&http.Client{Transport: newTransport(t, serve.InMemory(api), policies.WithGate(gate))})
		fb := &policies.ModelFallback{Primary: "big", Fallback: "small"}
		rec := &recorder{}
		var text string
		op := func(ctx context.Context, a policies.Attempt) error {
			text = ""
			stream := client.Messages.NewStreaming(ctx, newParams(a.Model))
			defer stream.Close()
			var msg anthropic.Message
			for stream.Next() {
				if err := msg.Accumulate(stream.Current()); err != nil {
					return err
				}
				if d := stream.Current().Delta; d.Text != "" {
					text += d.Text
				}
			}
			return stream.Err()
		}
		err := policies.Do(t.Context(), op,
			policies.WithGate(gate),
			policies.WithFallback(fb),
			anthropicsdk.WithClassifier(),
			policies.WithHooks(rec.hooks()),
		)
		if err != nil {
			t.Fatalf("Do: %v", err)
		}
		if got := api.models(); got != "big,big,big,small" {
			t.Errorf("models %s, want big,big,big,small", got)
		}
		if text != "Hello" {
			t.Errorf("text %q, want the whole answer of the last attempt only", text)
		}
		if len(rec.retries) != 3 {
			t.Fatalf("%d retries, want 3", len(rec.retries))
		}
		if mid := rec.retries[1]; mid.Outcome.Class != policies.Capacity || mid.Outcome.Status != 200 {
			t.Errorf("mid-stream failure read as %+v, want capacity with status 200", mid.Outcome)
		}
		if len(rec.fallbacks) != 1 || rec.fallbacks[0].Attempt != 3 {
			t.Errorf("fallbacks %+v", rec.fallbacks)
		}
	})
}

// TestSDKMiddleware installs the transport through option.WithMiddleware.
func TestSDKMiddleware(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI(reply{status: 503, body: overloadedBody}, reply{status: 200})
		tr := newTransport(t, nil, policies.WithBudget(time.Minute))
		client := sdkClient(&http.Client{Transport: serve.InMemory(api)}, option.WithMiddleware(tr.Middleware))
		msg, err := client.Messages.New(t.Context(), newParams("big"))
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		if n := len(api.seen()); n != 2 || msg.Content[0].Text != "Hello" {
			t.Errorf("%d requests, text %q", n, msg.Content[0].Text)
		}
	})
}

// TestSDKSpendCapThroughDo checks that Do with the SDK classifier does not
// retry a spend-cap 429, and that the SDK's error stays reachable.
func TestSDKSpendCapThroughDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI(reply{status: 429, body: spendCapBody}, reply{status: 200})
		client := sdkClient(&http.Client{Transport: serve.InMemory(api)})
		err := policies.Do(t.Context(), func(ctx context.Context, a policies.Attempt) error {
			_, err := client.Messages.New(ctx, newParams("big"))
			return err
		}, anthropicsdk.WithClassifier())
		var pe *policies.Error
		var apiErr *anthropic.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopTerminal || !errors.As(err, &apiErr) || apiErr.ErrorCode() != "enforced_spend_limit_reached" {
			t.Fatalf("Do = %v, want a terminal stop carrying the SDK error", err)
		}
		if n := len(api.seen()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

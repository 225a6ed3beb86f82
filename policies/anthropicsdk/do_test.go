package anthropicsdk_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/anthropicsdk"
	"github.com/retrysim/retrysim/policies/machine"
)

// retryLog records the outcomes Do scheduled retries for.
type retryLog []policies.Outcome

func (l *retryLog) hooks() policies.Hooks {
	return policies.Hooks{OnRetryScheduled: func(e policies.RetryEvent) { *l = append(*l, e.Outcome) }}
}

// TestDoWithClassifier runs Do with WithClassifier around real SDK calls.
func TestDoWithClassifier(t *testing.T) {
	tests := []struct {
		name    string
		replies []reply
		stream  bool
		models  string              // the models the API saw
		retries []policies.Class    // the classes retries were scheduled for
		stop    policies.StopReason // NotStopped: Do succeeds
		minTime time.Duration       // Do takes at least this long
	}{
		{
			name:    "529, 429 retry-after 2s, ok",
			replies: []reply{{status: 529, body: overloadedBody}, {status: 429, header: []string{"retry-after", "2"}, body: rateLimitBody}, {status: 200}},
			models:  "big,big,big",
			retries: []policies.Class{policies.Capacity, policies.RetryAfter},
			minTime: 2 * time.Second,
		},
		{
			name:    "streamed: 529, mid-stream overloaded_error, ok",
			replies: []reply{{status: 529, body: overloadedBody}, {status: 200, midStream: overloadedBody}, {status: 200}},
			stream:  true,
			models:  "big,big,big",
			retries: []policies.Class{policies.Capacity, policies.Capacity},
		},
		{
			name:    "streamed: ends without message_stop, ok",
			replies: []reply{{status: 200, cutShort: true}, {status: 200}},
			stream:  true,
			models:  "big,big",
			retries: []policies.Class{policies.Transient},
		},
		{
			name:    "spend cap is not retried",
			replies: []reply{{status: 429, body: spendCapBody}, {status: 200}},
			models:  "big",
			stop:    policies.StopTerminal,
		},
		{
			name:    "500 then 400",
			replies: []reply{{status: 500, body: apiErrorBody}, {status: 400, body: badRequestBody}, {status: 200}},
			models:  "big,big",
			retries: []policies.Class{policies.Transient},
			stop:    policies.StopTerminal,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newFakeAPI(tt.replies...)
				client := newClient(api)
				var log retryLog
				var text string
				start := time.Now()
				err := policies.Do(t.Context(), func(ctx context.Context, a policies.Attempt) error {
					var err error
					if tt.stream {
						text, err = streamText(ctx, client, "big")
						return err
					}
					msg, err := client.Messages.New(ctx, params("big"))
					if err == nil {
						text = msg.Content[0].Text
					}
					return err
				}, anthropicsdk.WithClassifier(), policies.WithBudget(time.Minute), policies.WithGate(&policies.Gate{}), policies.WithHooks(log.hooks()))
				if got := api.seen(); got != tt.models {
					t.Errorf("requests for %s, want %s", got, tt.models)
				}
				if len(log) != len(tt.retries) {
					t.Errorf("retries %+v, want classes %v", log, tt.retries)
				} else {
					for i, out := range log {
						if out.Class != tt.retries[i] {
							t.Errorf("retry %d for %+v, want %v", i+1, out, tt.retries[i])
						}
					}
				}
				if tt.stop == machine.NotStopped {
					if err != nil || text != "Hello" {
						t.Fatalf("Do = %v, text %q", err, text)
					}
				} else {
					var pe *policies.Error
					var apiErr *anthropic.Error
					if !errors.As(err, &pe) || pe.Reason != tt.stop || !errors.As(err, &apiErr) {
						t.Fatalf("Do = %v, want a %v stop carrying the SDK error", err, tt.stop)
					}
				}
				if d := time.Since(start); d < tt.minTime {
					t.Errorf("took %v, want at least %v", d, tt.minTime)
				}
			})
		})
	}
}

// TestTransportWithClassifier checks that the option also suits a
// Transport, which sees responses rather than SDK errors: Classify leaves
// those to policies.ClassifyError.
func TestTransportWithClassifier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI(reply{status: 529, body: overloadedBody}, reply{status: 429, header: []string{"retry-after", "1"}, body: rateLimitBody}, reply{status: 200})
		tr := newTransport(t, api, anthropicsdk.WithClassifier(), policies.WithBudget(time.Minute))
		client := newClient(tr)
		msg, err := client.Messages.New(t.Context(), params("big"))
		if err != nil || msg.Content[0].Text != "Hello" {
			t.Fatalf("New = %v", err)
		}
		if got := api.seen(); got != "big,big,big" {
			t.Errorf("requests for %s", got)
		}
	})
}

// The SDK gives Messages.New a per-request timeout (10 minutes unless
// option.WithRequestTimeout says otherwise), and with a Transport installed
// that one request holds all of the Transport's attempts and waits: the
// timeout caps the Transport's budget. docs/client.md says so.
func TestSDKRequestTimeoutCapsTransportBudget(t *testing.T) {
	tests := []struct {
		name    string
		opts    []option.RequestOption
		elapsed time.Duration // when the call returns
	}{
		{"default 10-minute request timeout", nil, 9 * time.Minute},
		{"request timeout above the budget", []option.RequestOption{option.WithRequestTimeout(20 * time.Minute)}, 15 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newFakeAPI(reply{status: 529, body: overloadedBody})
				tr := newTransport(t, api, policies.WithBudget(15*time.Minute), policies.WithBackoff(policies.Constant{Wait: time.Minute}))
				client := newClient(tr)
				start := time.Now()
				_, err := client.Messages.New(t.Context(), params("big"), tt.opts...)
				var apiErr *anthropic.Error
				if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 {
					t.Fatalf("New = %v, want the last 529", err)
				}
				if got := time.Since(start); got != tt.elapsed {
					t.Errorf("returned after %v, want %v", got, tt.elapsed)
				}
			})
		})
	}
}

package anthropicsdk_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/anthropicsdk"
	"github.com/retrysim/retrysim/policies/machine"
)

// instantClock lets the example run at once: Sleep moves its time forward
// instead of waiting. Production code leaves machine.WithClock out.
type instantClock struct{ now time.Time }

func (c *instantClock) Now() time.Time { return c.now }

func (c *instantClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.now = c.now.Add(max(d, 0))
	return nil
}

// Classify reads the errors the SDK returns: from an error status, with its
// headers and body, and from an error event in the middle of a stream.
func ExampleClassify() {
	api := newFakeAPI( // stands in for the Messages API
		reply{status: 529, body: overloadedBody},
		reply{status: 429, header: []string{"retry-after", "2"}, body: rateLimitBody},
		reply{status: 429, body: spendCapBody},
		reply{status: 200, midStream: overloadedBody},
	)
	client := newClient(api) // option.WithMaxRetries(0), over api
	ctx := context.Background()
	for range 3 {
		_, err := client.Messages.New(ctx, params("claude-big"))
		out := anthropicsdk.Classify(err, time.Now())
		fmt.Printf("%d: %v, server wait %v (default classifier: %v)\n", out.Status, out.Class, out.ServerWait, policies.ClassifyError(err, time.Now()).Class)
	}
	_, err := streamText(ctx, client, "claude-big")
	out := anthropicsdk.Classify(err, time.Now())
	fmt.Printf("%d mid-stream: %v\n", out.Status, out.Class)
	// Output:
	// 529: capacity, server wait 0s (default classifier: terminal)
	// 429: retry-after, server wait 2s (default classifier: terminal)
	// 429: terminal, server wait 0s (default classifier: terminal)
	// 200 mid-stream: capacity
}

// Do around a streaming call: an overloaded_error event in the middle of the
// stream repeats the whole request, and after three capacity failures the
// operation moves to the fallback model. A stream that ends without
// message_stop is incomplete and repeated too.
func ExampleWithClassifier() {
	api := newFakeAPI(
		reply{status: 529, body: overloadedBody},
		reply{status: 200, midStream: overloadedBody},
		reply{status: 529, body: overloadedBody},
		reply{status: 200, cutShort: true},
		reply{status: 200},
	)
	client := anthropic.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey("my-key"),
		option.WithBaseURL("http://api.test/"),
		option.WithMaxRetries(0), // policies owns the retries
		option.WithHTTPClient(&http.Client{Transport: api}),
	)
	fallback := &policies.ModelFallback{Primary: "claude-big", Fallback: "claude-small", After: 3}

	var answer string
	op := func(ctx context.Context, a policies.Attempt) error {
		stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
			Model:     anthropic.Model(a.Model),
			MaxTokens: 1024,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hi"))},
		})
		defer stream.Close()
		// A fresh message per attempt: partial output is discarded. A stream
		// that ends without message_stop is an error (ErrIncompleteStream),
		// not a short answer.
		msg, err := anthropicsdk.ReadStream(ctx, stream)
		if err != nil {
			return err
		}
		answer = ""
		for _, block := range msg.Content {
			answer += block.Text
		}
		return nil
	}
	// The instant clock is for the example only; production passes its own context.
	ctx := machine.WithClock(context.Background(), &instantClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	err := policies.Do(ctx, op,
		anthropicsdk.WithClassifier(),
		policies.WithBudget(2*time.Minute),
		policies.WithFallback(fallback),
		policies.WithHooks(policies.Hooks{
			OnRetryScheduled: func(e policies.RetryEvent) {
				fmt.Printf("attempt %d: %v (status %d)\n", e.Attempt, e.Outcome.Class, e.Outcome.Status)
			},
			OnFallback: func(e policies.FallbackEvent) { fmt.Printf("switching %s -> %s\n", e.From, e.To) },
		}),
	)
	fmt.Println(answer, err, api.seen())
	// Output:
	// attempt 1: capacity (status 529)
	// attempt 2: capacity (status 200)
	// switching claude-big -> claude-small
	// attempt 3: capacity (status 529)
	// attempt 4: transient (status 200)
	// Hello <nil> claude-big,claude-big,claude-big,claude-small,claude-small
}

package policies_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/serve"
)

// instantClock lets the examples run at once: Sleep moves its time forward
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

func newInstantClock() *instantClock {
	return &instantClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func ExampleClassifyResponse() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	show := func(status int, header http.Header, body string) {
		out := policies.ClassifyResponse(status, header, []byte(body), now)
		fmt.Printf("%d -> %v, server wait %v\n", status, out.Class, out.ServerWait)
	}
	show(429, http.Header{"Retry-After": {"2"}}, `{"type":"error","error":{"type":"rate_limit_error"}}`)
	show(429, http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"9"}}, "")
	show(429, nil, `{"type":"error","error":{"type":"rate_limit_error","details":{"error_code":"enforced_spend_limit_reached"}}}`)
	show(529, nil, `{"type":"error","error":{"type":"overloaded_error"}}`)
	show(200, nil, `{"type":"error","error":{"type":"overloaded_error"}}`)
	show(500, nil, "")
	show(400, http.Header{"X-Should-Retry": {"true"}}, "")
	show(401, nil, "")
	// Output:
	// 429 -> retry-after, server wait 2s
	// 429 -> retry-after, server wait 1.5s
	// 429 -> terminal, server wait 0s
	// 529 -> capacity, server wait 0s
	// 200 -> capacity, server wait 0s
	// 500 -> transient, server wait 0s
	// 400 -> transient, server wait 0s
	// 401 -> terminal, server wait 0s
}

func ExampleDo() {
	failures := []error{
		&policies.HTTPError{StatusCode: 529},
		&policies.HTTPError{StatusCode: 429, Header: http.Header{"Retry-After": {"2"}}},
	}
	op := func(ctx context.Context, a policies.Attempt) error {
		if a.Number <= len(failures) {
			return failures[a.Number-1]
		}
		fmt.Printf("attempt %d succeeded\n", a.Number)
		return nil
	}
	// The instant clock is for a reproducible example only: production
	// passes its own context, and the real clock.
	ctx := machine.WithClock(context.Background(), newInstantClock())
	err := policies.Do(ctx, op,
		policies.WithBudget(time.Minute),
		policies.WithGate(&policies.Gate{}), // share one per API key
		policies.WithHooks(policies.Hooks{
			OnRetryScheduled: func(e policies.RetryEvent) {
				fmt.Printf("attempt %d: %v (%d), next in %v\n", e.Attempt, e.Outcome.Class, e.Outcome.Status, e.Delay)
			},
		}),
		// For a reproducible example only: production uses a fresh random
		// source.
		policies.WithRand(rand.New(rand.NewPCG(1, 2))),
	)
	fmt.Println("error:", err)
	// Output:
	// attempt 1: capacity (529), next in 384.686634ms
	// attempt 2: retry-after (429), next in 2s
	// attempt 3 succeeded
	// error: <nil>
}

func ExampleDo_giveUp() {
	op := func(ctx context.Context, a policies.Attempt) error {
		return &policies.HTTPError{StatusCode: 529}
	}
	ctx := machine.WithClock(context.Background(), newInstantClock()) // example only
	err := policies.Do(ctx, op,
		policies.WithMaxAttempts(3),
		policies.WithRand(rand.New(rand.NewPCG(1, 2))),
	)
	var stop *policies.Error
	if errors.As(err, &stop) {
		fmt.Println(stop.Reason, stop.Attempts, stop.LastOutcome.Class)
	}
	fmt.Println(err)
	// Output:
	// attempts 3 capacity
	// retry stopped (attempts) after 3 attempt(s) in 1.001122857s: last error: http 529
}

// Transport retries whole HTTP requests for the SDK's non-streaming calls.
func ExampleTransport() {
	api := newFakeAPI(
		reply{status: 529, body: overloadedBody},
		reply{status: 500, body: apiErrorBody},
		reply{status: 200},
	)
	transport, err := policies.NewTransport(serve.InMemory(api), // nil means http.DefaultTransport
		policies.WithBudget(time.Minute),
		policies.WithHooks(policies.Hooks{
			OnRetryScheduled: func(e policies.RetryEvent) { fmt.Println("retrying after", e.Err) },
		}),
	)
	if err != nil {
		panic(err) // an option a Transport refuses (WithFallback)
	}
	client := anthropic.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey("my-key"),
		option.WithBaseURL("http://api.test/"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: transport}),
	)
	ctx := machine.WithClock(context.Background(), newInstantClock()) // example only: waits take no time
	msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{
		Model:     "claude-big",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hi"))},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(msg.Content[0].Text)
	// Output:
	// retrying after http 529: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}
	// retrying after http 500 Internal Server Error: {"type":"error","error":{"type":"api_error","message":"internal"}}
	// Hello
}

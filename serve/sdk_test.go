package serve_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/anthropicsdk"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// The real anthropic-sdk-go/v2 client against the handler, in memory inside
// a synctest bubble: every wait is on fake time.

func sdkClient(h http.Handler, extra ...option.RequestOption) anthropic.Client {
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey("ignored"),
		option.WithBaseURL("http://serve.test/"),
		option.WithHTTPClient(&http.Client{Transport: serve.InMemory(h)}),
	}
	return anthropic.NewClient(append(opts, extra...)...)
}

func params() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "claude-test",
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	}
}

const answer = "This answer comes from retrysim serve: the request was admitted by the server model."

func TestSDKMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := sdkClient(newHandler(t, admitAll))
		start := time.Now()
		msg, err := client.Messages.New(context.Background(), params())
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != time.Second {
			t.Errorf("took %v, want the model's 1s", took)
		}
		if len(msg.Content) != 1 || msg.Content[0].Text != answer || msg.StopReason != anthropic.StopReasonEndTurn ||
			msg.Model != "claude-test" || msg.Usage.OutputTokens != 14 {
			t.Errorf("message %+v", msg)
		}
	})
}

func TestSDKStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := sdkClient(newHandler(t, admitAll, serve.WithSpeed(4)))
		start := time.Now()
		stream := client.Messages.NewStreaming(context.Background(), params())
		var msg anthropic.Message
		deltas := 0
		for stream.Next() {
			ev := stream.Current()
			if ev.Type == "content_block_delta" {
				deltas++
			}
			if err := msg.Accumulate(ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 250*time.Millisecond {
			t.Errorf("took %v, want 1s / 4", took)
		}
		if deltas != 14 || len(msg.Content) != 1 || msg.Content[0].Text != answer || msg.StopReason != anthropic.StopReasonEndTurn {
			t.Errorf("%d deltas, message %+v", deltas, msg)
		}
	})
}

// The SDK's own retries honour the rendered retry-after: the second call
// of the model second is rejected, the SDK waits the 1 s it is told and
// the retry lands in the next window.
func TestSDKHonoursRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, rateLimited)
		client := sdkClient(h) // the SDK's default: 2 retries
		if _, err := client.Messages.New(context.Background(), params()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := client.Messages.New(context.Background(), params()); err != nil {
			t.Fatal(err)
		}
		// 200 ms to the 429, 1 s of retry-after, 200 ms to the answer.
		if took := time.Since(start); took != 1400*time.Millisecond {
			t.Errorf("took %v, want 1.4s", took)
		}
		if st := h.Stats(); st.Admitted != 2 || st.Rejected != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

// A 529 reaches the SDK as an *anthropic.Error that classifies as Capacity.
func TestSDKOverloaded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := sdkClient(newHandler(t, alwaysOverloaded), option.WithMaxRetries(0))
		_, err := client.Messages.New(context.Background(), params())
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || apiErr.RequestID != "req_00000000000000000001" {
			t.Fatalf("error %v", err)
		}
		if out := anthropicsdk.Classify(err, time.Now()); out.Class != policies.Capacity {
			t.Errorf("classified as %+v", out)
		}
	})
}

// breakingModel wraps a model whose streams break half-way through their
// response time with an overloaded_error event: the StreamBreaker hook.
type breakingModel struct{ sim.ServerModel }

func (m breakingModel) NewServer(rng *rand.Rand) sim.Server {
	return breakingServer{m.ServerModel.NewServer(rng)}
}

type breakingServer struct{ sim.Server }

func (breakingServer) BreakStream(arrival time.Duration, resp sim.Response) (time.Duration, policies.Outcome, bool) {
	return arrival + (resp.At-arrival)/2, policies.Outcome{Class: policies.Capacity}, true
}

// A model that breaks a stream makes the SDK see a 200, part of the
// answer, then an error while it iterates.
func TestSDKStreamBreak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := sdkClient(newHandler(t, breakingModel{admitAll}))
		start := time.Now()
		stream := client.Messages.NewStreaming(context.Background(), params())
		deltas := 0
		for stream.Next() {
			if stream.Current().Type == "content_block_delta" {
				deltas++
			}
		}
		err := stream.Err()
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 200 {
			t.Fatalf("error %v", err)
		}
		if out := anthropicsdk.Classify(err, time.Now()); out.Class != policies.Capacity {
			t.Errorf("classified as %+v", out)
		}
		if took := time.Since(start); took != 500*time.Millisecond || deltas != 7 {
			t.Errorf("broke after %v and %d deltas, want 500ms and 7", took, deltas)
		}
	})
}

// Non-streamed requests to a breaking model are answered whole: the hook is
// about streams only.
func TestBreakOnlyStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := sdkClient(newHandler(t, breakingModel{admitAll}))
		if _, err := client.Messages.New(context.Background(), params()); err != nil {
			t.Fatal(err)
		}
	})
}

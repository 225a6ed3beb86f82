package serve_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/anthropicsdk"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// midStreamOverload fails every request mid-stream, half-way through its
// one-second response.
var midStreamOverload = &sim.ErrorMix{
	Phases:      []sim.MixPhase{{Outcomes: []sim.MixOutcome{{P: 1, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}}}}},
	Latency:     sim.Fixed(time.Second),
	Stream:      true,
	StreamShare: 0.5,
}

// A model's mid-stream failure goes out as the API sends it: HTTP 200,
// message_start, some deltas, then event: error with the error JSON and no
// message_stop, when the model says the stream breaks.
func TestModelMidStreamOnTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, midStreamOverload)
		client := &http.Client{Transport: serve.InMemory(h)}
		start := time.Now()
		resp, err := client.Post("http://serve.test/v1/messages", "application/json",
			strings.NewReader(`{"model":"m","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var events []string
		var errData string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			if name, ok := strings.CutPrefix(line, "event: "); ok {
				events = append(events, name)
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok && len(events) > 0 && events[len(events)-1] == "error" {
				errData = d
			}
		}
		took := time.Since(start)
		if resp.StatusCode != 200 || events[0] != "message_start" || events[len(events)-1] != "error" || strings.Contains(strings.Join(events, " "), "message_stop") {
			t.Fatalf("status %d, events %v", resp.StatusCode, events)
		}
		deltas := strings.Count(strings.Join(events, " "), "content_block_delta")
		if deltas == 0 || deltas >= 14 {
			t.Errorf("%d deltas, want some of the 14", deltas)
		}
		if !strings.Contains(errData, `"type":"overloaded_error"`) || !strings.Contains(errData, `"request_id":"req_`) {
			t.Errorf("error event data %s", errData)
		}
		if took != 500*time.Millisecond {
			t.Errorf("broke after %v, want the model's 500ms", took)
		}
		if st := h.Stats(); st.Rejected != 1 || st.Admitted != 0 || st.WastedOutputTokens != int64(deltas) {
			t.Errorf("stats %+v, want the %d tokens streamed before the failure wasted", st, deltas)
		}
		metrics, err := client.Get("http://serve.test/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer metrics.Body.Close()
		sc = bufio.NewScanner(metrics.Body)
		want := fmt.Sprintf("retrysim_serve_wasted_output_tokens_total %d", deltas)
		found := false
		for sc.Scan() {
			found = found || sc.Text() == want
		}
		if !found {
			t.Errorf("/metrics has no line %q", want)
		}
	})
}

// The real SDK does not retry a mid-stream failure (it reaches the caller
// while iterating: one request, despite 2 retries allowed); Do with the
// anthropicsdk classifier repeats the whole request.
func TestSDKAndDoOnModelMidStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, midStreamOverload)
		client := sdkClient(h) // the SDK's default: 2 retries
		stream := client.Messages.NewStreaming(context.Background(), params())
		_, err := anthropicsdk.ReadStream(context.Background(), stream)
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 200 {
			t.Fatalf("error %v", err)
		}
		if out := anthropicsdk.Classify(err, time.Now()); out.Class != policies.Capacity || !out.MidStream() {
			t.Errorf("classified as %+v", out)
		}
		if n := h.Stats().Requests; n != 1 {
			t.Errorf("the SDK sent %d requests, want 1 (no retry)", n)
		}

		h = newHandler(t, midStreamOverload)
		client = sdkClient(h, option.WithMaxRetries(0))
		err = policies.Do(context.Background(), func(ctx context.Context, _ policies.Attempt) error {
			_, err := anthropicsdk.ReadStream(ctx, client.Messages.NewStreaming(ctx, params()))
			return err
		}, anthropicsdk.WithClassifier(), policies.WithPolicy(policies.Policy{Backoff: policies.Constant{Wait: time.Second}, MaxAttempts: 3}))
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopAttempts || pe.Attempts != 3 {
			t.Fatalf("Do: %v", err)
		}
		if n := h.Stats().Requests; n != 3 {
			t.Errorf("Do sent %d requests, want 3", n)
		}
	})
}

// A request that does not stream gets the model's mid-stream failure as a
// 529, and serve says so at start-up.
func TestModelMidStreamNotStreamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := sdkClient(newHandler(t, midStreamOverload), option.WithMaxRetries(0))
		_, err := client.Messages.New(context.Background(), params())
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 {
			t.Fatalf("error %v", err)
		}
	})
	if w := serve.Warnings(&sim.RateLimit{RequestsPerMinute: 10, Inner: midStreamOverload}); len(w) != 1 || !strings.Contains(w[0], `"stream": true`) {
		t.Errorf("warnings %q", w)
	}
	if w := serve.Warnings(admitAll); len(w) != 0 {
		t.Errorf("warnings for a model that does not stream failures: %q", w)
	}
}

// validate against a model that fails mid-stream and a spend limit: its
// clients stream, so the SDK preset (which does not retry a mid-stream
// failure and retries the spend-limit 429) and a class-rule policy (the
// reverse) each measure exactly what the simulator predicts.
func TestValidateMidStreamAndSpendLimitExact(t *testing.T) {
	src := `
scenarios:
  - name: s
    seed: 3
    server:
      type: error-mix
      response_time: 1s
      fail_response_time: 100ms
      stream: true
      failures:
        - {probability: 0.3, reject: overloaded}
        - {probability: 0.1, reject: spend-limit}
    clients:
      count: 40
      spread: 5s
      max_attempts: 4
    policies:
      - name: anthropic-sdk-go
      - name: class-rule
        type: full-jitter
`
	f, err := scenarios.Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	synctest.Test(t, func(t *testing.T) {
		v := validation(s, 1)
		v.Connect = inMemory
		cs, err := serve.Validate(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			for _, ch := range c.Checks {
				if ch.Simulated != ch.Measured {
					t.Errorf("%s %s: simulated %v, measured %v", c.Policy, ch.Metric, ch.Simulated, ch.Measured)
				}
			}
		}
		if t.Failed() {
			t.Logf("\n%s", report(t, cs))
		}
	})
	// The two rules differ here, or the test proves nothing.
	sdk, _ := sim.Run(s.Config(0, s.Seed))
	class, _ := sim.Run(s.Config(1, s.Seed))
	if sdk.GaveUpBy[policies.StopTerminal] == 0 || class.GaveUpBy[policies.StopTerminal] == 0 || sdk.Attempts == class.Attempts {
		t.Errorf("sdk gave up %v after %d attempts, class rule %v after %d", sdk.GaveUpBy, sdk.Attempts, class.GaveUpBy, class.Attempts)
	}
}

// The server-wait bounds run divided by the speed, as the waits do: a
// 90 s retry-after above fail_above: 60s ends every call in both worlds
// at speed 10 (unscaled, the real run's 9 s wait passed the 60 s bound).
func TestValidateScalesServerWaitBounds(t *testing.T) {
	src := `
scenarios:
  - name: s
    server:
      phases:
        - {duration: 10m, reject: rate-limited, retry_after: 90s}
        - {admit: 100, window: 1s}
    clients: {count: 5, max_attempts: 3}
    policies:
      - {name: fail, type: full-jitter, server_wait: {fail_above: 60s}}
      - {name: clamp, type: full-jitter, server_wait: {clamp_to: 5s}}
`
	f, err := scenarios.Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		v := validation(f.Scenarios[0], 10)
		v.Connect = inMemory
		cs, err := serve.Validate(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if !c.Agree() {
				t.Errorf("%s disagrees:\n%s", c.Policy, report(t, cs))
			}
		}
	})
}

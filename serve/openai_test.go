package serve_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

func postTo(t *testing.T, h http.Handler, path, body string) (*http.Response, string) {
	t.Helper()
	client := &http.Client{Transport: serve.InMemory(h)}
	resp, err := client.Post("http://serve.test"+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

const (
	chatBody      = `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}`
	chatStream    = `{"model":"gpt-test","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	responsesBody = `{"model":"gpt-test","input":"hi"}`
	responsesStrm = `{"model":"gpt-test","input":"hi","stream":true}`
)

// The OpenAI endpoints answer as the OpenAI API does: a chat.completion, a
// stream of chunks ending in [DONE], a response object, a stream of
// response events ending in response.completed.
func TestOpenAIAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, admitAll)
		resp, body := postTo(t, h, "/v1/chat/completions", chatBody)
		var cc struct {
			Object  string
			Choices []struct {
				Message      struct{ Role, Content string }
				FinishReason string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal([]byte(body), &cc); err != nil || resp.StatusCode != 200 || cc.Object != "chat.completion" ||
			len(cc.Choices) != 1 || cc.Choices[0].Message.Content != answer || cc.Choices[0].FinishReason != "stop" || resp.Header.Get("x-request-id") == "" {
			t.Errorf("chat: %d %s (%v)", resp.StatusCode, body, err)
		}
		resp, body = postTo(t, h, "/v1/chat/completions", chatStream)
		if resp.StatusCode != 200 || !strings.HasPrefix(body, "data: {") || !strings.HasSuffix(body, "data: [DONE]\n\n") ||
			strings.Count(body, `"content":"`) != 15 || strings.Contains(body, "event:") {
			t.Errorf("chat stream: %d %s", resp.StatusCode, body)
		}
		resp, body = postTo(t, h, "/v1/responses", responsesBody)
		if resp.StatusCode != 200 || !strings.Contains(body, `"object":"response"`) || !strings.Contains(body, `"status":"completed"`) || !strings.Contains(body, answer) {
			t.Errorf("responses: %d %s", resp.StatusCode, body)
		}
		resp, body = postTo(t, h, "/v1/responses", responsesStrm)
		if resp.StatusCode != 200 || !strings.HasPrefix(body, "event: response.created\n") || !strings.Contains(body, "event: response.output_text.delta\n") ||
			!strings.Contains(body, "event: response.completed\n") {
			t.Errorf("responses stream: %d %s", resp.StatusCode, body)
		}
	})
}

// Failures in OpenAI's shapes: a 429 with retry-after and x-ratelimit-*,
// a 5xx, a bad request the server refuses, a mid-stream failure as a
// data-only error chunk (Chat Completions, no [DONE]) or an error event
// (Responses); each reads back to the model's Outcome.
func TestOpenAIFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limited := &sim.CapacityWindows{ResponseTime: sim.Fixed(100 * time.Millisecond),
			Phases: []sim.Phase{{Reject: sim.Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: 1500 * time.Millisecond}}}}
		resp, body := postTo(t, newHandler(t, limited), "/v1/chat/completions", chatBody)
		if resp.StatusCode != 429 || resp.Header.Get("retry-after") != "2" || resp.Header.Get("retry-after-ms") != "1500" ||
			resp.Header.Get("x-ratelimit-remaining-requests") != "0" || resp.Header.Get("x-ratelimit-reset-requests") != "1.5s" ||
			!strings.HasPrefix(body, `{"error":{"message":`) || !strings.Contains(body, `"code":"rate_limit_exceeded"`) {
			t.Errorf("429: %d %v %s", resp.StatusCode, resp.Header, body)
		}
		if got := policies.ClassifyResponse(resp.StatusCode, resp.Header, []byte(body), time.Now()); got != (policies.Outcome{Class: policies.RetryAfter, Status: 429, ServerWait: 1500 * time.Millisecond}) {
			t.Errorf("429 reads as %+v", got)
		}
		resp, body = postTo(t, newHandler(t, alwaysOverloaded), "/v1/responses", responsesBody)
		if resp.StatusCode != 529 || !strings.Contains(body, `"type":"server_error"`) {
			t.Errorf("overloaded: %d %s", resp.StatusCode, body)
		}
		resp, body = postTo(t, newHandler(t, admitAll), "/v1/chat/completions", `{"model":"gpt-test"}`)
		if resp.StatusCode != 400 || body != `{"error":{"message":"messages: required, at least one message","type":"invalid_request_error","param":null,"code":null}}` {
			t.Errorf("bad request: %d %s", resp.StatusCode, body)
		}
		resp, body = postTo(t, newHandler(t, midStreamOverload), "/v1/chat/completions", chatStream)
		last := body[strings.LastIndex(strings.TrimSpace(body), "data: ")+6:]
		if resp.StatusCode != 200 || strings.Contains(body, "[DONE]") || !strings.HasPrefix(last, `{"error":{`) ||
			policies.ClassifyResponse(200, nil, []byte(strings.TrimSpace(last)), time.Now()).Class != policies.Capacity {
			t.Errorf("chat mid-stream: %d %s", resp.StatusCode, body)
		}
		resp, body = postTo(t, newHandler(t, midStreamOverload), "/v1/responses", responsesStrm)
		i := strings.LastIndex(body, "event: error\ndata: ")
		if resp.StatusCode != 200 || i < 0 || strings.Contains(body, "response.completed") ||
			policies.ClassifyResponse(200, nil, []byte(strings.TrimSpace(body[i+19:])), time.Now()).Class != policies.Capacity {
			t.Errorf("responses mid-stream: %d %s", resp.StatusCode, body)
		}
	})
}

package anthropicsdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/retrysim/retrysim/policies/anthropicsdk"
)

// reply is one scripted response of fakeAPI.
type reply struct {
	status int
	header []string // key, value, ...
	body   string   // the body of an error status; a 200 gets a message
	// midStream, for a streamed 200, is the error event's data sent after
	// the first text delta.
	midStream string
	// cutShort, for a streamed 200, ends the stream cleanly after the first
	// text delta, without message_stop: the answer is incomplete.
	cutShort bool
	// connErr makes the round trip fail with this error instead.
	connErr error
}

// fakeAPI is an in-memory Anthropic Messages endpoint: an http.RoundTripper
// that answers each request with the next scripted reply (the last one
// repeats), so the real SDK client builds its errors from real responses.
type fakeAPI struct {
	replies []reply

	mu     sync.Mutex
	models []string
}

func newFakeAPI(replies ...reply) *fakeAPI { return &fakeAPI{replies: replies} }

func (f *fakeAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	var params struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		_ = req.Body.Close()
		_ = json.Unmarshal(b, &params)
	}
	f.mu.Lock()
	rep := f.replies[min(len(f.models), len(f.replies)-1)]
	f.models = append(f.models, params.Model)
	n := len(f.models)
	f.mu.Unlock()
	if rep.connErr != nil {
		return nil, rep.connErr
	}

	header := http.Header{}
	for i := 0; i+1 < len(rep.header); i += 2 {
		header.Set(rep.header[i], rep.header[i+1])
	}
	header.Set("request-id", fmt.Sprintf("req_%d", n))
	var body string
	switch {
	case rep.status == http.StatusOK && params.Stream:
		header.Set("content-type", "text/event-stream")
		body = streamBody(params.Model, rep.midStream, rep.cutShort)
	case rep.status == http.StatusOK:
		header.Set("content-type", "application/json")
		body = `{"id":"msg_1","type":"message","role":"assistant","model":"` + params.Model +
			`","content":[{"type":"text","text":"Hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`
	default:
		header.Set("content-type", "application/json")
		body = rep.body
	}
	return &http.Response{
		Status:     fmt.Sprintf("%d %s", rep.status, http.StatusText(rep.status)),
		StatusCode: rep.status,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        header,
		Body:          io.NopCloser(bytes.NewReader([]byte(body))),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

func (f *fakeAPI) seen() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.models, ",")
}

// streamBody is a streamed message answering "Hello"; with errData it breaks
// off after a first text delta with an error event carrying errData; with
// cutShort it ends there without one (and without message_stop).
func streamBody(model, errData string, cutShort bool) string {
	events := [][2]string{
		{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"` + model + `","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
	}
	switch {
	case cutShort:
		events = append(events,
			[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`})
	case errData != "":
		events = append(events,
			[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`},
			[2]string{"error", errData})
	default:
		events = append(events,
			[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`},
			[2]string{"content_block_stop", `{"type":"content_block_stop","index":0}`},
			[2]string{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}`},
			[2]string{"message_stop", `{"type":"message_stop"}`})
	}
	var b strings.Builder
	for _, ev := range events {
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", ev[0], ev[1])
	}
	return b.String()
}

// newClient is the real SDK client over api, its own retries off.
func newClient(api http.RoundTripper) anthropic.Client {
	return anthropic.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey("test-key"),
		option.WithBaseURL("http://api.test/"),
		option.WithMaxRetries(0), // policies owns the retries
		option.WithHTTPClient(&http.Client{Transport: api}),
	)
}

func params(model string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     anthropic.Model(model),
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	}
}

// streamText runs one streaming call and returns the text it accumulated
// and the stream's error.
func streamText(ctx context.Context, client anthropic.Client, model string) (string, error) {
	stream := client.Messages.NewStreaming(ctx, params(model))
	defer stream.Close()
	msg, err := anthropicsdk.ReadStream(ctx, stream)
	if err != nil {
		return "", err
	}
	return msg.Content[0].Text, nil
}

const (
	overloadedBody = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	rateLimitBody  = `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`
	spendCapBody   = `{"type":"error","error":{"type":"rate_limit_error","message":"spend limit","details":{"error_code":"enforced_spend_limit_reached"}}}`
	apiErrorBody   = `{"type":"error","error":{"type":"api_error","message":"internal"}}`
	badRequestBody = `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`
)

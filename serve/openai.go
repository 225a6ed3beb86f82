package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// api is the API a request came in on: the model decides the same way for
// all three; only the shapes of requests and answers differ.
type api uint8

const (
	apiMessages  api = iota // Anthropic: POST /v1/messages
	apiChat                 // OpenAI: POST /v1/chat/completions
	apiResponses            // OpenAI: POST /v1/responses
)

func (a api) requestIDHeader() string {
	if a == apiMessages {
		return "request-id"
	}
	return "x-request-id"
}

// openAIRequest is what serve reads of an OpenAI request: Chat
// Completions' messages and max_tokens (or max_completion_tokens), or the
// Responses API's input and max_output_tokens.
type openAIRequest struct {
	Model               string          `json:"model"`
	Messages            []ignored       `json:"messages"`
	Input               json.RawMessage `json:"input"`
	MaxTokens           *int64          `json:"max_tokens"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	MaxOutputTokens     *int64          `json:"max_output_tokens"`
	Stream              bool            `json:"stream"`
}

// defaultOpenAITokens is the answer's bound when an OpenAI request sets
// none (its token limits are optional).
const defaultOpenAITokens = 4096

// parseRequest decodes and checks a request body of API a.
func parseRequest(body []byte, a api) (messageRequest, error) {
	if a == apiMessages {
		return parseMessageRequest(body)
	}
	var req openAIRequest
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return messageRequest{}, errors.New("the request body is empty; send a JSON object")
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return messageRequest{}, fmt.Errorf("the request body is not a JSON object: %v", err)
	}
	out := messageRequest{Model: req.Model, Stream: req.Stream}
	limit, field := req.MaxTokens, "max_tokens"
	if a == apiResponses {
		limit, field = req.MaxOutputTokens, "max_output_tokens"
	} else if req.MaxCompletionTokens != nil {
		limit, field = req.MaxCompletionTokens, "max_completion_tokens"
	}
	if err := checkModel(req.Model); err != nil {
		return out, err
	}
	switch {
	case a == apiChat && len(req.Messages) == 0:
		return out, errors.New("messages: required, at least one message")
	case a == apiResponses && (len(req.Input) == 0 || string(req.Input) == "null"):
		return out, errors.New("input: required")
	case limit != nil && *limit < 1:
		return out, fmt.Errorf("%s: must be at least 1, got %d", field, *limit)
	}
	n := int64(defaultOpenAITokens)
	if limit != nil {
		n = *limit
	}
	out.MaxTokens = &n
	return out, nil
}

// body returns the whole answer in the shape of the reply's API.
func (r reply) body() []byte {
	text := strings.Join(r.words, "")
	out := len(r.words)
	switch r.api {
	case apiChat:
		finish := "stop"
		if r.stopReason == "max_tokens" {
			finish = "length"
		}
		return mustJSON(map[string]any{
			"id": "chatcmpl-" + r.id, "object": "chat.completion", "created": 0, "model": r.model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": finish,
				"message": map[string]any{"role": "assistant", "content": text, "refusal": nil}}},
			"usage": map[string]any{"prompt_tokens": r.inputTok, "completion_tokens": out, "total_tokens": r.inputTok + out},
		})
	case apiResponses:
		return mustJSON(r.response("completed", text))
	}
	return r.message()
}

// response is a Responses API response object.
func (r reply) response(status, text string) map[string]any {
	output := []any{}
	if status == "completed" {
		output = append(output, map[string]any{"type": "message", "id": "msg_" + r.id, "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}})
	}
	return map[string]any{"id": "resp_" + r.id, "object": "response", "created_at": 0, "status": status, "model": r.model,
		"output": output, "usage": map[string]any{"input_tokens": r.inputTok, "output_tokens": len(r.words), "total_tokens": r.inputTok + len(r.words)}}
}

// chunk is a Chat Completions stream chunk.
func (r reply) chunk(delta map[string]any, finish any) event {
	return event{"", mustJSON(map[string]any{"id": "chatcmpl-" + r.id, "object": "chat.completion.chunk", "created": 0, "model": r.model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})}
}

// openingEvents are the events sent as soon as a streamed request is
// admitted.
func (r reply) openingEvents() []event {
	switch r.api {
	case apiChat:
		return []event{r.chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	case apiResponses:
		return []event{{"response.created", mustJSON(map[string]any{"type": "response.created", "sequence_number": 0, "response": r.response("in_progress", "")})}}
	}
	return r.opening()
}

// deltaEvent is the text delta of word k.
func (r reply) deltaEvent(k int) event {
	switch r.api {
	case apiChat:
		return r.chunk(map[string]any{"content": r.words[k]}, nil)
	case apiResponses:
		return event{"response.output_text.delta", mustJSON(map[string]any{"type": "response.output_text.delta", "item_id": "msg_" + r.id,
			"output_index": 0, "content_index": 0, "delta": r.words[k], "sequence_number": k + 1})}
	}
	return r.delta(k)
}

// closingEvents end a streamed answer.
func (r reply) closingEvents() []event {
	switch r.api {
	case apiChat:
		finish := "stop"
		if r.stopReason == "max_tokens" {
			finish = "length"
		}
		return []event{r.chunk(map[string]any{}, finish), {"", []byte("[DONE]")}}
	case apiResponses:
		return []event{{"response.completed", mustJSON(map[string]any{"type": "response.completed", "sequence_number": len(r.words) + 1,
			"response": r.response("completed", strings.Join(r.words, ""))})}}
	}
	return r.closing()
}

// errorEvent is the event that breaks a stream after sent deltas.
func (r reply) errorEvent(o policies.Outcome, sent int) (event, bool) {
	if r.api == apiMessages {
		name, data, ok := machine.RenderEvent(o)
		return event{name, withRequestID(data, r.requestID)}, ok
	}
	name, data, ok := machine.RenderOpenAIEvent(o, r.api == apiResponses, sent+1)
	return event{name, data}, ok
}

package policies

import (
	"bytes"
	"encoding/json"
	"strings"
)

// IsContentEvent reports whether a server-sent event, given by its event
// name (empty for a data-only event) and its data, carries part of the
// answer: what the stream watchdog counts, and what the simulator's
// streams and serve's faults call content events. Content events are:
//
//   - Anthropic's Messages API: content_block_delta (text, tool input,
//     thinking and citation deltas alike);
//   - OpenAI's Responses API: an event whose name ends in ".delta"
//     (response.output_text.delta, response.function_call_arguments.delta,
//     …);
//   - OpenAI's Chat Completions API (data-only events): a chunk one of
//     whose choices has a delta with non-empty content, refusal or
//     reasoning_content, or tool calls.
//
// Nothing else is: pings (Anthropic's ping event, an SSE comment, which an
// SSE reader never dispatches), message_start, content_block_start and
// _stop, message_delta, message_stop, response.created, a chunk with only
// a role or a finish_reason, and [DONE]. Error events are not content.
func IsContentEvent(event string, data []byte) bool {
	switch {
	case event == "content_block_delta":
		return true
	case event != "":
		return strings.HasPrefix(event, "response.") && strings.HasSuffix(event, ".delta")
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || !bytes.Contains(data, []byte(`"delta"`)) {
		return false // [DONE], or not a chunk with a delta
	}
	var chunk struct {
		Choices []struct {
			Delta struct {
				Content          string            `json:"content"`
				Refusal          string            `json:"refusal"`
				ReasoningContent string            `json:"reasoning_content"`
				ToolCalls        []json.RawMessage `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &chunk) != nil {
		return false
	}
	for _, c := range chunk.Choices {
		d := c.Delta
		if d.Content != "" || d.Refusal != "" || d.ReasoningContent != "" || len(d.ToolCalls) > 0 {
			return true
		}
	}
	return false
}

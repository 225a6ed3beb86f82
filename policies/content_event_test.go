package policies_test

import (
	"testing"

	"github.com/retrysim/retrysim/policies"
)

func TestIsContentEvent(t *testing.T) {
	tests := []struct {
		event, data string
		want        bool
	}{
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`, true},
		{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{"}}`, true},
		{"ping", `{"type":"ping"}`, false},
		{"message_start", `{"type":"message_start","message":{}}`, false},
		{"content_block_start", `{"type":"content_block_start"}`, false},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`, false},
		{"message_stop", `{"type":"message_stop"}`, false},
		{"error", `{"type":"error","error":{"type":"overloaded_error"}}`, false},
		{"response.output_text.delta", `{"type":"response.output_text.delta","delta":"Hi"}`, true},
		{"response.function_call_arguments.delta", `{"delta":"{"}`, true},
		{"response.created", `{"type":"response.created"}`, false},
		{"response.completed", `{}`, false},
		{"", `{"choices":[{"index":0,"delta":{"content":"Hi"}}]}`, true},
		{"", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}]}}]}`, true},
		{"", `{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`, false},
		{"", `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, false},
		{"", `[DONE]`, false},
		{"", `{"delta": broken`, false},
	}
	for _, tt := range tests {
		if got := policies.IsContentEvent(tt.event, []byte(tt.data)); got != tt.want {
			t.Errorf("IsContentEvent(%q, %s) = %v, want %v", tt.event, tt.data, got, tt.want)
		}
	}
}

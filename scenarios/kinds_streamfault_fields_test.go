package scenarios

import (
	"fmt"
	"strings"
	"testing"
)

// A stream fault's bad after_events or for is an error at that field's
// value (or at the stream_fault mapping when the field is absent), not at
// kind.
func TestStreamFaultErrorsPointAtTheField(t *testing.T) {
	for _, tc := range []struct{ fault, field, at string }{
		{`{kind: ping_only, after_events: 2, for: 1m}`, "after_events", "after_events: "},
		{`{kind: stall_first_byte, after_events: 1, for: 1m}`, "after_events", "after_events: "},
		{`{kind: stall, after_events: 2, for: 0s}`, "for", "for: "},
		{`{kind: cut, after_events: 2, for: 1m}`, "for", "for: "},
		{`{kind: stall, after_events: 2}`, "for", "stream_fault: "},
	} {
		line := "        - {probability: 0.1, stream_fault: " + tc.fault + "}"
		col := strings.Index(line, tc.at) + len(tc.at) + 1 // 1-based, at the value
		want := fmt.Sprintf("x.yaml:7:%d: scenarios[0].server.failures[0].stream_fault.%s: ", col, tc.field)
		_, err := Parse("x.yaml", []byte(errorMix(line)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", tc.fault, err, want)
		}
	}
}

package machine

import (
	"testing"
	"time"
)

// The two renderings carry one Outcome: over every status, class and a
// spread of waits, ClassifyResponse reads the OpenAI response back to what
// it reads from the Anthropic one (so the round trip of render_test.go
// holds for both), and the stream's error events likewise.
func TestRenderOpenAIRoundTrip(t *testing.T) {
	waits := []time.Duration{0, 1, time.Millisecond, 1500 * time.Millisecond, time.Hour, -time.Second}
	statuses := []int{0, 42, 600}
	for s := 100; s <= 599; s++ {
		statuses = append(statuses, s)
	}
	n := 0
	for c := Success; c <= Terminal; c++ {
		for _, s := range statuses {
			for _, w := range waits {
				for _, hint := range []Hint{NoHint, HintNoRetry} {
					o := Outcome{Class: c, Status: s, ServerWait: w, Hint: hint}
					a, oa := Render(o), RenderOpenAI(o)
					want := ClassifyResponse(a.Status, a.Header, a.Body, now)
					got := ClassifyResponse(oa.Status, oa.Header, oa.Body, now)
					if got != want {
						t.Fatalf("%+v: OpenAI form %d %v %s reads as %+v; the Anthropic form as %+v", o, oa.Status, oa.Header, oa.Body, got, want)
					}
					if representable(o) && o.Hint == NoHint && got != o {
						t.Fatalf("%+v reads back as %+v", o, got)
					}
					n++
				}
			}
		}
	}
	for c := RetryAfter; c <= Terminal; c++ {
		o := Outcome{Class: c, Status: 200}
		ev, data, _ := RenderEvent(o)
		want := ClassifyEvent(ev, data)
		for _, responses := range []bool{false, true} {
			ev, data, ok := RenderOpenAIEvent(o, responses, 3)
			if got := ClassifyResponse(200, nil, data, now); !ok || got != want || (ev == "error") != responses {
				t.Errorf("%v (responses %v): event %q %s reads as %+v, want %+v", c, responses, ev, data, got, want)
			}
		}
	}
}

func TestRenderOpenAIForms(t *testing.T) {
	tests := []struct {
		o      Outcome
		status int
		body   string
		header map[string]string
	}{
		{Outcome{Class: RetryAfter, Status: 429, ServerWait: 1500 * time.Millisecond}, 429,
			`{"error":{"message":"This request would exceed the rate limit; wait as retry-after says before sending again.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			map[string]string{"retry-after": "2", "retry-after-ms": "1500", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.5s"}},
		{Outcome{Class: Terminal, Status: 429}, 429,
			`{"error":{"message":"The spend limit has been reached; requests fail until it is raised.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, nil},
		{Outcome{Class: Capacity, Status: 503}, 503, `{"error":{"message":"Overloaded","type":"server_error","param":null,"code":"overloaded"}}`, nil},
		{Outcome{Class: Transient, Status: 500}, 500, `{"error":{"message":"Internal server error","type":"server_error","param":null,"code":null}}`, nil},
	}
	for _, tt := range tests {
		r := RenderOpenAI(tt.o)
		if r.Status != tt.status || string(r.Body) != tt.body {
			t.Errorf("%+v: %d %s", tt.o, r.Status, r.Body)
		}
		for k, v := range tt.header {
			if r.Header.Get(k) != v {
				t.Errorf("%+v: %s %q, want %q", tt.o, k, r.Header.Get(k), v)
			}
		}
	}
	if _, data, _ := RenderOpenAIEvent(Outcome{Class: Capacity, Status: 200}, true, 7); string(data) != `{"type":"error","code":"overloaded","message":"Overloaded","param":null,"sequence_number":7}` {
		t.Errorf("responses error event %s", data)
	}
}

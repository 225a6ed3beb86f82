package policies_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// reply is one scripted response of fakeAPI.
type reply struct {
	status int
	header []string // key, value, ...
	body   string   // a JSON body; for status 200, a message is made
	// overloadMidStream makes a streamed 200 send a text delta and then an
	// overloaded_error event.
	overloadMidStream bool
}

// request is what fakeAPI saw.
type request struct {
	at    time.Duration
	model string
	body  string
}

// fakeAPI is an Anthropic-style Messages endpoint replaying scripted replies,
// one per request; the last reply repeats.
type fakeAPI struct {
	origin  time.Time
	replies []reply

	mu       sync.Mutex
	requests []request
}

func newFakeAPI(replies ...reply) *fakeAPI { return &fakeAPI{origin: time.Now(), replies: replies} }

func (f *fakeAPI) seen() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.requests...)
}

func (f *fakeAPI) models() string {
	var ms []string
	for _, r := range f.seen() {
		ms = append(ms, r.model)
	}
	return strings.Join(ms, ",")
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var params struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	_ = json.Unmarshal(body, &params)
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, request{at: time.Since(f.origin), model: params.Model, body: string(body)})
	rep := f.replies[min(n, len(f.replies)-1)]
	f.mu.Unlock()

	for i := 0; i+1 < len(rep.header); i += 2 {
		w.Header().Set(rep.header[i], rep.header[i+1])
	}
	w.Header().Set("request-id", fmt.Sprintf("req_%d", n+1))
	switch {
	case rep.status == http.StatusOK && params.Stream:
		w.Header().Set("content-type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		events := streamOK(params.Model, "Hello")
		if rep.overloadMidStream {
			events = streamOverloaded(params.Model)
		}
		for _, ev := range events {
			name, data, _ := strings.Cut(ev, "\n")
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); err != nil {
				return // the client closed the stream
			}
		}
	case rep.status == http.StatusOK:
		w.Header().Set("content-type", "application/json")
		fmt.Fprint(w, messageJSON(params.Model, "Hello"))
	default:
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(rep.status)
		fmt.Fprint(w, rep.body)
	}
}

func messageJSON(model, text string) string {
	return `{"id":"msg_1","type":"message","role":"assistant","model":"` + model + `","content":[{"type":"text","text":"` + text +
		`"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`
}

// streamStart is the opening of a streamed message, up to a first text delta.
func streamStart(model, text string) []string {
	return []string{
		"message_start\n" + `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"` + model + `","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}`,
		"content_block_start\n" + `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta\n" + `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + text + `"}}`,
	}
}

func streamOK(model, text string) []string {
	return append(streamStart(model, text),
		"content_block_stop\n"+`{"type":"content_block_stop","index":0}`,
		"message_delta\n"+`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}`,
		"message_stop\n"+`{"type":"message_stop"}`,
	)
}

// streamOverloaded sends a text delta, then an overloaded error event.
func streamOverloaded(model string) []string {
	return append(streamStart(model, "Hel"),
		"error\n"+`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
}

const (
	overloadedBody = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	rateLimitBody  = `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`
	spendCapBody   = `{"type":"error","error":{"type":"rate_limit_error","message":"spend limit","details":{"error_code":"enforced_spend_limit_reached"}}}`
	apiErrorBody   = `{"type":"error","error":{"type":"api_error","message":"internal"}}`
	badRequestBody = `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`
)

package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// replyText is the answer to every admitted request, sent one word per
// text delta when streamed.
const replyText = "This answer comes from retrysim serve: the request was admitted by the server model."

// reply is the answer to one admitted request.
type reply struct {
	requestID  string
	id, model  string
	words      []string // the text deltas, at most max_tokens of them
	stopReason string
	inputTok   int
	api        api
}

func newReply(requestID string, req messageRequest, bodyLen int) reply {
	words := strings.SplitAfter(replyText, " ")
	// One word is one output token here; max_tokens cuts the answer short.
	stop := "end_turn"
	if int64(len(words)) > *req.MaxTokens {
		words, stop = words[:*req.MaxTokens], "max_tokens"
	}
	return reply{
		requestID:  requestID,
		id:         "msg_" + strings.TrimPrefix(requestID, "req_"),
		model:      req.Model,
		words:      words,
		stopReason: stop,
		inputTok:   max(1, bodyLen/4), // a rough count: about four bytes a token
	}
}

type usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type message struct {
	ID           string      `json:"id"`
	Type         string      `json:"type"`
	Role         string      `json:"role"`
	Model        string      `json:"model"`
	Content      []textBlock `json:"content"`
	StopReason   *string     `json:"stop_reason"`
	StopSequence *string     `json:"stop_sequence"`
	Usage        usage       `json:"usage"`
}

// message returns the whole answer as a JSON message.
func (r reply) message() []byte {
	stop := r.stopReason
	return mustJSON(message{ID: r.id, Type: "message", Role: "assistant", Model: r.model,
		Content:    []textBlock{{Type: "text", Text: strings.Join(r.words, "")}},
		StopReason: &stop, Usage: usage{InputTokens: r.inputTok, OutputTokens: len(r.words)}})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs and strings are marshalled
	}
	return b
}

// event is one server-sent event.
type event struct {
	name string
	data []byte
}

// opening returns the events sent as soon as a streamed request is admitted.
func (r reply) opening() []event {
	start := message{ID: r.id, Type: "message", Role: "assistant", Model: r.model, Content: []textBlock{},
		Usage: usage{InputTokens: r.inputTok, OutputTokens: 1}}
	return []event{
		{"message_start", mustJSON(struct {
			Type    string  `json:"type"`
			Message message `json:"message"`
		}{"message_start", start})},
		{"content_block_start", []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)},
		{"ping", []byte(`{"type":"ping"}`)},
	}
}

// delta returns the text delta of word k.
func (r reply) delta(k int) event {
	return event{"content_block_delta", mustJSON(struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
		Delta struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"delta"`
	}{Type: "content_block_delta", Delta: struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text_delta", r.words[k]}})}
}

// closing returns the events that end a streamed answer.
func (r reply) closing() []event {
	return []event{
		{"content_block_stop", []byte(`{"type":"content_block_stop","index":0}`)},
		{"message_delta", []byte(fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`,
			r.stopReason, len(r.words)))},
		{"message_stop", []byte(`{"type":"message_stop"}`)},
	}
}

// openStream answers HTTP 200 as an event stream and sends r's opening
// events; ok is false if the client has gone. send sends further events.
func openStream(w http.ResponseWriter, rc *http.ResponseController, r reply) (send func(...event) bool, ok bool) {
	w.Header().Set(r.api.requestIDHeader(), r.requestID)
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send = sender(w, rc)
	return send, send(r.openingEvents()...)
}

// stream sends an admitted streamed answer: the opening at once, the text
// deltas spread evenly over the model's response time, the closing events
// when the response is due. If the model breaks the stream, an error event
// ends it at the break instead, with no message_stop: a StreamBreaker's
// break, or a failure the model itself makes mid-stream (a streamed
// error-mix), which gets half the deltas before the event.
func (h *Handler) stream(w http.ResponseWriter, ctx context.Context, rc *http.ResponseController, d decision, r reply) {
	h.setRateLimits(w.Header(), r.api)
	send, ok := openStream(w, rc, r)
	if !ok {
		return
	}
	span := d.due.Sub(d.arrival)
	n := len(r.words)
	if d.partial {
		// The model says only when the stream breaks, not how much of the
		// answer came first: half of it, over the time to the break.
		n = max(1, n/2)
	}
	sent := 0
	for k := range n {
		at := d.arrival.Add(span / time.Duration(n+1) * time.Duration(k+1))
		if !d.partial && !d.breakAt.IsZero() && !at.Before(d.breakAt) {
			break
		}
		if !sleepUntil(ctx, at) || !send(r.deltaEvent(k)) {
			return
		}
		sent++
	}
	if !d.breakAt.IsZero() {
		if !sleepUntil(ctx, d.breakAt) {
			return
		}
		if ev, ok := r.errorEvent(d.breakOn, n); ok {
			h.wastedTokens.Add(int64(sent)) // streamed, then lost to the error
			send(ev)
			return
		}
	}
	if sleepUntil(ctx, d.due) {
		send(r.closingEvents()...)
	}
}

// sender returns the function that writes server-sent events to w and
// flushes them; it reports whether the writes succeeded.
func sender(w http.ResponseWriter, rc *http.ResponseController) func(evs ...event) bool {
	return func(evs ...event) bool {
		for _, ev := range evs {
			var err error
			switch ev.name {
			case "": // a data-only event, as OpenAI's Chat Completions streams send
				_, err = fmt.Fprintf(w, "data: %s\n\n", ev.data)
			case ":": // a comment line, which SSE readers skip
				_, err = fmt.Fprintf(w, ": %s\n\n", ev.data)
			default:
				_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data)
			}
			if err != nil {
				return false
			}
		}
		_ = rc.Flush() // a writer that cannot flush still gets the bytes
		return true
	}
}

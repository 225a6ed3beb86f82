package policies

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/retrysim/retrysim/policies/machine"
)

// The stream watchdog under a Transport. RoundTrip returns a response as
// soon as its headers arrive, so the watchdog works in two parts:
//
//   - Until the headers, for a request that asks for a stream (see
//     requestStreams), the attempt is watched as Do watches any attempt:
//     headers that do not come within the first-byte timeout end it, and
//     Do retries it (a *StreamError, Stalled, status 0), inside RoundTrip.
//   - After them, the body of a response with status below 400 and
//     content type text/event-stream is watched as the caller reads it:
//     its content events (IsContentEvent) reset the idle timer, and the
//     first must come within the first-byte timeout of the send. When the
//     watchdog fires, the body's connection is closed and its Read returns
//     a *StreamError (Stalled, Err ErrStalled, Content the content events
//     read). RoundTrip has returned by then and cannot retry: a Do around
//     the call can (ClassifyError makes the StreamError Transient, status
//     200 after content).

// maxWatchedEventData bounds the data of one server-sent event that the
// body watchdog keeps to tell a data-only content event (an OpenAI chat
// chunk); an event with more data than that is told by its name alone, and
// a data-only one counts as content.
const maxWatchedEventData = 64 << 10

// maxStreamFlagScan bounds how much of a request body requestStreams
// reads to find its top-level "stream" member.
const maxStreamFlagScan = 8 << 20

// requestStreams reports whether req asks for a streamed answer: it
// accepts text/event-stream, or its body is a JSON object with the
// top-level member "stream": true (the Messages, Chat Completions and
// Responses APIs; the official SDKs set no Accept header). The body is
// read through GetBody.
func requestStreams(req *http.Request) bool {
	for _, v := range req.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(v), "text/event-stream") {
			return true
		}
	}
	if req.GetBody == nil || req.Body == nil || req.Body == http.NoBody {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	dec := json.NewDecoder(io.LimitReader(body, maxStreamFlagScan))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return false
		}
		if key == "stream" {
			var v bool
			return dec.Decode(&v) == nil && v
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// isEventStream reports whether resp's body is a stream of server-sent
// events.
func isEventStream(resp *http.Response) bool {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// watchedBody is the body of a streamed response under the watchdog.
type watchedBody struct {
	body io.ReadCloser
	w    *watch

	mu     sync.Mutex // guards the parser (Read is not called concurrently, Close may be)
	line   []byte     // the current line, incomplete
	event  string     // the current event's name
	data   []byte     // its data, up to maxWatchedEventData
	over   bool       // its data was longer
	closed bool
}

// watchBody returns body under the watchdog w, its first content event
// due first from now; stall ends the body's request (closing it), with
// the watchdog's cause.
func watchBody(body io.ReadCloser, w machine.Watchdog, first time.Duration, stall context.CancelCauseFunc) *watchedBody {
	b := &watchedBody{body: body}
	b.w = &watch{idle: w.Idle, cancel: func(cause error) {
		stall(cause)
		_ = body.Close() // ends a Read in progress (net/http's bodies and io.Pipe allow it)
	}}
	b.w.mu.Lock()
	b.w.arm(max(first, 0))
	b.w.mu.Unlock()
	return b
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.mu.Lock()
	b.scan(p[:n])
	b.mu.Unlock()
	b.w.mu.Lock()
	fired, content := b.w.fired, b.w.content
	b.w.mu.Unlock()
	if fired {
		return n, &StreamError{Content: content, Stalled: true, Err: ErrStalled}
	}
	if err != nil {
		b.stop()
	}
	return n, err
}

// Close stops the watchdog and closes the body.
func (b *watchedBody) Close() error {
	b.stop()
	return b.body.Close()
}

func (b *watchedBody) stop() {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	b.w.stopped = true
	if b.w.timer != nil {
		b.w.timer.Stop()
	}
}

// scan parses the server-sent events in p, which follows what was read
// before, and tells the watchdog of each content event; b.mu is held.
func (b *watchedBody) scan(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(b.line) < maxWatchedEventData {
				b.line = append(b.line, p[:min(len(p), maxWatchedEventData-len(b.line))]...)
			}
			return
		}
		line := p[:i]
		if len(b.line) > 0 {
			line = append(b.line, line...)
		}
		b.field(bytes.TrimSuffix(line, []byte("\r")))
		b.line = b.line[:0]
		p = p[i+1:]
	}
}

// field handles one line of the event stream.
func (b *watchedBody) field(line []byte) {
	if len(line) == 0 { // dispatch
		if b.event != "" || len(b.data) > 0 || b.over {
			if (!b.over && IsContentEvent(b.event, b.data)) || (b.over && (b.event == "" || IsContentEvent(b.event, nil))) {
				b.w.event()
			}
		}
		b.event, b.data, b.over = "", b.data[:0], false
		return
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "event":
		b.event = string(value)
	case "data":
		if len(b.data)+len(value)+1 > maxWatchedEventData {
			b.over = true
			return
		}
		if len(b.data) > 0 {
			b.data = append(b.data, '\n')
		}
		b.data = append(b.data, value...)
	}
}

// Package serve runs a retrysim server model as a real HTTP API on the real
// clock: an Anthropic-style Messages endpoint whose every answer, success
// or rejection, and the time it takes, comes from the model (a sim.Server),
// the same code the simulator runs. Point an SDK, curl or your own client at
// it to watch a retry policy meet the scenario's server for real.
//
// The model's clock starts at the first request (or at POST /control/reset)
// and runs Speed times faster than the real one: model time is real time
// since then multiplied by Speed, and every duration the model reports (a
// response time, a retry-after) is divided by Speed on the wire.
//
// Endpoints:
//
//	POST /v1/messages     a message, plain JSON or streamed (SSE) with "stream": true
//	POST /control/reset   a fresh model state; its clock starts now
//	GET  /healthz         "ok"
//	GET  /metrics         Prometheus metrics
//
// Validate (in validate.go) runs a scenario's clients against it and
// compares what they measure with what the simulator predicts.
package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// Limits and timeouts, in one place.
const (
	// DefaultMaxBody is the largest request body accepted (32 MiB, the
	// Messages API's own limit); a larger one gets 413 request_too_large.
	DefaultMaxBody = 32 << 20
	// DefaultMaxInFlight bounds the requests served at once; one more gets
	// 529 overloaded_error from the server itself, not from the model, and
	// counts as refused.
	DefaultMaxInFlight = 10_000
	// BodyReadTimeout bounds the time to read a request's body.
	BodyReadTimeout = 30 * time.Second
	// WriteMargin is how long a response may take to write after the
	// moment the model says it is due: the write deadline of every
	// response is that moment plus WriteMargin.
	WriteMargin = 30 * time.Second
	// MaxSpeed bounds the speed factor: beyond it, timer precision (about
	// a millisecond under load) is more than a second of model time.
	MaxSpeed = 1000
)

// Option configures a Handler.
type Option func(*config)

type config struct {
	speed       float64
	seed        uint64
	maxBody     int64
	maxInFlight int
	fallback    string
	logTo       io.Writer // a Server's log, if any
	logEvery    time.Duration
}

// WithSpeed runs the model's clock x times faster than the real one (x > 0,
// at most MaxSpeed); default 1.
func WithSpeed(x float64) Option { return func(c *config) { c.speed = x } }

// WithSeed seeds the model's random source, the one the simulator gives the
// server in a run with that seed (sim.ServerRand); default 1.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithMaxBody sets the largest request body accepted, in bytes (> 0).
func WithMaxBody(n int64) Option { return func(c *config) { c.maxBody = n } }

// WithMaxInFlight bounds the requests served at once (> 0).
func WithMaxInFlight(n int) Option { return func(c *config) { c.maxInFlight = n } }

// WithFallbackModel names the model that the server model treats as the
// fallback (sim.Request.Fallback): requests for it are decided as
// fallback calls. Without it, every request is a primary one.
func WithFallbackModel(name string) Option { return func(c *config) { c.fallback = name } }

// WithLog makes a Server (not a bare Handler) write one line to w every
// interval (> 0): the requests, admissions, rejections and refusals since
// the line before.
func WithLog(w io.Writer, every time.Duration) Option {
	return func(c *config) { c.logTo, c.logEvery = w, every }
}

// StreamBreaker may be implemented by a sim.Server whose admitted, streamed
// responses can fail part-way: HTTP 200, some of the answer, then an SSE
// error event, as the Anthropic API does under overload. For each admitted
// streamed request, serve asks BreakStream (under the same lock as Arrive,
// right after it); ok says the stream breaks, at when (model time, from the
// arrival up to resp.At), out what the error event carries (rendered by
// policies.RenderEvent). The models in package sim do not implement it:
// their streams always finish.
type StreamBreaker interface {
	BreakStream(arrival time.Duration, resp sim.Response) (at time.Duration, out policies.Outcome, ok bool)
}

// Handler serves one server model; see the package documentation. It is
// safe for concurrent use; requests reach the model one at a time, in the
// order of their arrival times.
type Handler struct {
	model   sim.ServerModel
	cfg     config
	metrics *metrics
	ids     atomic.Uint64

	requests, admitted, rejected, refused, inFlight atomic.Int64

	mu     sync.Mutex // guards the model's state and its clock
	state  sim.Server // nil until the clock starts
	origin time.Time  // real time of model time 0
}

// NewHandler returns a Handler for model with the given options. The model
// must validate.
func NewHandler(model sim.ServerModel, opts ...Option) (*Handler, error) {
	if model == nil {
		return nil, errors.New("serve: no server model")
	}
	if err := model.Validate(); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if sim.DecidesLater(model) {
		// Its decisions would have to wait for requests that arrive later,
		// which one HTTP exchange per attempt cannot model.
		return nil, fmt.Errorf("serve: the %T server model decides requests after they arrive (a read, then a write); serve cannot run it", model)
	}
	c := config{speed: 1, seed: 1, maxBody: DefaultMaxBody, maxInFlight: DefaultMaxInFlight}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	switch {
	case !(c.speed > 0) || c.speed > MaxSpeed || math.IsInf(c.speed, 0):
		return nil, fmt.Errorf("serve: speed must be > 0 and at most %d, got %v", MaxSpeed, c.speed)
	case c.maxBody <= 0:
		return nil, fmt.Errorf("serve: max body must be > 0, got %d", c.maxBody)
	case c.maxInFlight <= 0:
		return nil, fmt.Errorf("serve: max in flight must be > 0, got %d", c.maxInFlight)
	case c.logTo != nil && c.logEvery <= 0:
		return nil, fmt.Errorf("serve: log interval must be > 0, got %v", c.logEvery)
	}
	h := &Handler{model: model, cfg: c}
	h.metrics = newMetrics(h)
	return h, nil
}

// Speed returns the speed factor.
func (h *Handler) Speed() float64 { return h.cfg.speed }

// Reset gives the model a fresh state (as at the start of a run) and starts
// its clock now. Requests in flight keep the times they were given.
func (h *Handler) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.startLocked(time.Now())
}

func (h *Handler) startLocked(now time.Time) {
	h.state = h.model.NewServer(sim.ServerRand(h.cfg.seed))
	h.origin = now
}

// ModelTime returns the model's clock now, and false if it has not started.
func (h *Handler) ModelTime() (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == nil {
		return 0, false
	}
	return h.toModel(time.Since(h.origin)), true
}

// toModel turns real elapsed time into model time.
func (h *Handler) toModel(d time.Duration) time.Duration { return toModel(d, h.cfg.speed) }

// toReal turns a model duration into real time, rounded up.
func (h *Handler) toReal(d time.Duration) time.Duration { return toReal(d, h.cfg.speed) }

func toModel(d time.Duration, speed float64) time.Duration {
	if speed == 1 {
		return d
	}
	return saturate(float64(d) * speed)
}

func toReal(d time.Duration, speed float64) time.Duration {
	if speed == 1 || d <= 0 {
		return d
	}
	return saturate(math.Ceil(float64(d) / speed))
}

func saturate(f float64) time.Duration {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(f)
}

// Stats are the handler's counts since it was made.
type Stats struct {
	// Requests counts POST /v1/messages requests received.
	Requests int64
	// Admitted and Rejected count the model's decisions.
	Admitted, Rejected int64
	// Refused counts requests the server answered itself, without asking
	// the model: malformed, too large, or over the in-flight limit.
	Refused int64
	// InFlight is the number of requests being served now.
	InFlight int64
}

// Stats returns the counts so far.
func (h *Handler) Stats() Stats {
	return Stats{Requests: h.requests.Load(), Admitted: h.admitted.Load(), Rejected: h.rejected.Load(),
		Refused: h.refused.Load(), InFlight: h.inFlight.Load()}
}

// ServeHTTP routes a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/messages":
		if r.Method != http.MethodPost {
			h.refuseMethod(w, http.MethodPost)
			return
		}
		h.messages(w, r)
	case "/control/reset":
		if r.Method != http.MethodPost {
			h.refuseMethod(w, http.MethodPost)
			return
		}
		h.Reset()
		w.Header().Set("content-type", "application/json")
		_, _ = io.WriteString(w, `{"reset":true}`+"\n")
	case "/healthz":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.refuseMethod(w, "GET, HEAD")
			return
		}
		w.Header().Set("content-type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	case "/metrics":
		h.metrics.handler.ServeHTTP(w, r)
	default:
		h.writeError(w, http.StatusNotFound, policies.ErrorBody("not_found_error", "no such endpoint: "+r.URL.Path), h.requestID())
	}
}

func (h *Handler) refuseMethod(w http.ResponseWriter, allow string) {
	w.Header().Set("allow", allow)
	h.writeError(w, http.StatusMethodNotAllowed, policies.ErrorBody("invalid_request_error", "method not allowed; use "+allow), h.requestID())
}

// requestID returns a new request-id, unique within the handler.
func (h *Handler) requestID() string {
	return fmt.Sprintf("req_%020d", h.ids.Add(1))
}

// writeError writes an error status with an API error body, adding the
// request id to the body as the API does.
func (h *Handler) writeError(w http.ResponseWriter, status int, body []byte, id string) {
	w.Header().Set("request-id", id)
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(withRequestID(body, id))
}

// withRequestID adds "request_id" to a JSON object.
func withRequestID(body []byte, id string) []byte {
	body = bytes.TrimRight(body, " \n")
	if len(body) < 2 || body[len(body)-1] != '}' {
		return body
	}
	out := make([]byte, 0, len(body)+len(id)+20)
	out = append(out, body[:len(body)-1]...)
	out = append(out, `,"request_id":`...)
	out = strconv.AppendQuote(out, id)
	return append(out, '}')
}

// refuse answers a request without asking the model.
func (h *Handler) refuse(w http.ResponseWriter, status int, errType, message, reason, id string) {
	h.refused.Add(1)
	h.metrics.refused.WithLabelValues(reason).Inc()
	h.writeError(w, status, policies.ErrorBody(errType, message), id)
}

// messageRequest is what serve reads of a Messages request.
type messageRequest struct {
	Model     string            `json:"model"`
	MaxTokens *int64            `json:"max_tokens"`
	Messages  []json.RawMessage `json:"messages"`
	Stream    bool              `json:"stream"`
}

// parseMessageRequest checks a request body; the error is the message of
// an invalid_request_error.
func parseMessageRequest(body []byte) (messageRequest, error) {
	var req messageRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return req, errors.New("the request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return req, fmt.Errorf("%s: expected %s, got JSON %s", typeErr.Field, typeErr.Type, typeErr.Value)
		}
		return req, fmt.Errorf("the request body is not a JSON object: %v", err)
	}
	if dec.More() {
		return req, errors.New("the request body holds more than one JSON value")
	}
	switch {
	case strings.TrimSpace(req.Model) == "":
		return req, errors.New("model: required")
	case req.MaxTokens == nil:
		return req, errors.New("max_tokens: required")
	case *req.MaxTokens < 1:
		return req, fmt.Errorf("max_tokens: must be at least 1, got %d", *req.MaxTokens)
	case len(req.Messages) == 0:
		return req, errors.New("messages: required, at least one message")
	}
	return req, nil
}

// decision is what the model decided for one request, in real time.
type decision struct {
	arrival time.Time        // when the request reached the model
	due     time.Time        // when its response is due
	out     policies.Outcome // with ServerWait already in real time
	breakAt time.Time        // a streamed response breaks here (zero: never)
	breakOn policies.Outcome // and sends this error event
}

// arrive asks the model, under the lock, so that arrival times reach it in
// order. The clock starts at the first request.
func (h *Handler) arrive(req sim.Request, stream bool) decision {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if h.state == nil {
		h.startLocked(now)
	}
	at := h.toModel(now.Sub(h.origin))
	resp := h.state.Arrive(at, req)
	d := decision{arrival: now, due: h.origin.Add(h.toReal(max(resp.At, at))), out: resp.Outcome}
	d.out.ServerWait = h.toReal(d.out.ServerWait)
	if sb, ok := h.state.(StreamBreaker); ok && stream && resp.Outcome.Class == policies.Success {
		if bAt, bOut, ok := sb.BreakStream(at, resp); ok {
			d.breakAt = h.origin.Add(h.toReal(min(max(bAt, at), resp.At)))
			d.breakOn = bOut
		}
	}
	return d
}

// messages serves POST /v1/messages.
func (h *Handler) messages(w http.ResponseWriter, r *http.Request) {
	id := h.requestID()
	h.requests.Add(1)
	if h.inFlight.Add(1) > int64(h.cfg.maxInFlight) {
		h.inFlight.Add(-1)
		h.refuse(w, 529, "overloaded_error", "the server is serving as many requests as it may (its own limit, not the model's)", "busy", id)
		return
	}
	defer h.inFlight.Add(-1)

	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(BodyReadTimeout)) // not every ResponseWriter supports deadlines
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.maxBody))
	_ = rc.SetReadDeadline(time.Time{})
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			h.refuse(w, http.StatusRequestEntityTooLarge, "request_too_large",
				fmt.Sprintf("the request body is larger than %d bytes", h.cfg.maxBody), "too_large", id)
			return
		}
		h.refuse(w, http.StatusBadRequest, "invalid_request_error", "could not read the request body: "+err.Error(), "invalid", id)
		return
	}
	req, err := parseMessageRequest(body)
	if err != nil {
		h.refuse(w, http.StatusBadRequest, "invalid_request_error", err.Error(), "invalid", id)
		return
	}

	d := h.arrive(sim.Request{Fallback: h.cfg.fallback != "" && req.Model == h.cfg.fallback}, req.Stream)
	if d.out.Class == policies.Success {
		h.admitted.Add(1)
		h.metrics.admitted.Inc()
	} else {
		h.rejected.Add(1)
		h.metrics.rejected.WithLabelValues(strconv.Itoa(policies.Render(d.out).Status)).Inc()
	}
	_ = rc.SetWriteDeadline(d.due.Add(WriteMargin))
	reply := newReply(id, req, len(body))
	if d.out.Class == policies.Success && req.Stream {
		h.stream(w, r.Context(), rc, d, reply)
		return
	}
	if !sleepUntil(r.Context(), d.due) {
		return // the client went away
	}
	if d.out.Class != policies.Success {
		out := policies.Render(d.out)
		for k, v := range out.Header {
			w.Header()[k] = v
		}
		h.writeError(w, out.Status, out.Body, id)
		return
	}
	w.Header().Set("request-id", id)
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(policies.Render(d.out).Status)
	_, _ = w.Write(reply.message())
}

// sleepUntil waits until t or until ctx ends; it reports whether t came.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

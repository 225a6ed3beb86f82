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
//	POST /v1/messages          a message, plain JSON or streamed (SSE) with "stream": true
//	POST /v1/chat/completions  the same decision as OpenAI's Chat Completions API answers it
//	POST /v1/responses         the same as OpenAI's Responses API answers it
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
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// Limits and timeouts, in one place.
const (
	// DefaultMaxBody is the largest request body accepted (32 MiB, the
	// Messages API's own limit); a larger one gets 413 request_too_large.
	DefaultMaxBody = 32 << 20
	// DefaultMaxBodies bounds the bytes that all request bodies hold
	// together while they are read and decoded (four bodies of the largest
	// size): a request whose body would take them past it gets 529
	// overloaded_error from the server itself and counts as refused.
	DefaultMaxBodies = 4 * DefaultMaxBody
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
	maxBodies   int64
	maxInFlight int
	checkHost   bool
	hosts       []string // allowed besides localhost and IP addresses; "*" is any
	token       string   // required by /control/*, if set
	fallback    string
	logTo       io.Writer // a Server's log, if any
	logEvery    time.Duration
	record      func(Exchange)
}

// Exchange is one request the model decided, as WithExchanges reports it.
type Exchange struct {
	// Client is the request's ClientHeader ("" if it sent none).
	Client string
	// Arrival and End are model times since the clock's start: when the
	// request reached the model and when its response was due.
	Arrival, End time.Duration
	// Failed says the model did not admit it (a mid-stream failure too).
	Failed bool
}

// ClientHeader names the client (the caller) a request comes from, for
// WithExchanges: a harness that sets it lets the server's side count each
// caller's attempts and whether it completed or gave up.
const ClientHeader = "x-retrysim-client"

// PriorityHeader gives a request's priority (critical, default,
// sheddable, or a whole number within ±100; sim.ParsePriority), which a
// model that sheds by priority reads (a reserve shedder); absent, the
// default. Any other value is refused with 400.
const PriorityHeader = "x-retrysim-priority"

// WarmupClient is the ClientHeader value of a harness's warm-up calls:
// serve answers them itself, at once, with 529 and retry-after-ms 1,
// without the model (whose clock does not start) and without counting
// them, so that a program can run its SDK's retry path once before its
// measured calls (a cold JavaScript engine runs it tens of milliseconds
// late).
const WarmupClient = "warmup"

func (h *Handler) warmup(w http.ResponseWriter, a api, id string) {
	o := policies.Outcome{Class: policies.Capacity, Status: 529, ServerWait: time.Millisecond}
	out := machine.Render(o)
	if a != apiMessages {
		out = machine.RenderOpenAI(o)
	}
	maps.Copy(w.Header(), out.Header)
	if a == apiMessages {
		h.writeError(w, out.Status, out.Body, id)
		return
	}
	h.writeOpenAIError(w, out.Status, out.Body, id)
}

// WithExchanges calls f with every request the model decides, as it
// decides it (under the model's lock: f must be quick).
func WithExchanges(f func(Exchange)) Option { return func(c *config) { c.record = f } }

// WithSpeed runs the model's clock x times faster than the real one (x > 0,
// at most MaxSpeed); default 1.
func WithSpeed(x float64) Option { return func(c *config) { c.speed = x } }

// WithSeed seeds the model's random source, the one the simulator gives the
// server in a run with that seed (sim.ServerRand); default 1.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithMaxBody sets the largest request body accepted, in bytes (> 0).
func WithMaxBody(n int64) Option { return func(c *config) { c.maxBody = n } }

// WithMaxBodies bounds the bytes that all request bodies hold together
// while they are read and decoded (at least the largest body); default
// DefaultMaxBodies.
func WithMaxBodies(n int64) Option { return func(c *config) { c.maxBodies = n } }

// WithAllowedHosts turns on the check of every request's Host: it must be
// localhost (or a name under .localhost), an IP address, or one of names;
// "*" allows any. Other requests get 403 permission_error, so that a web
// page whose own name resolves to this server (DNS rebinding) cannot reach
// it. Listen turns the check on, with the host of its address; several
// WithAllowedHosts add up.
func WithAllowedHosts(names ...string) Option {
	return func(c *config) {
		c.checkHost = true
		for _, n := range names {
			if n = normalHost(n); n != "" {
				c.hosts = append(c.hosts, n)
			}
		}
	}
}

// WithControlToken makes POST /control/* require the header
// "authorization: Bearer TOKEN"; others get 401 authentication_error.
// Without it (or with ""), anyone who reaches the server may reset it.
func WithControlToken(token string) Option { return func(c *config) { c.token = token } }

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
// machine.RenderEvent). The models in package sim do not implement it:
// their streams always finish.
type StreamBreaker interface {
	BreakStream(arrival time.Duration, resp sim.Response) (at time.Duration, out policies.Outcome, ok bool)
}

// Warnings lists what of model's behaviour serve cannot send as the
// simulator models it, for serve to say at start-up.
func Warnings(model sim.ServerModel) []string {
	var out []string
	if sim.FailsMidStream(model) {
		out = append(out, `the model's capacity failures come mid-stream (HTTP 200, part of the answer, then an overloaded_error event), which serve sends only to requests with "stream": true; a request that does not stream gets them as 529 overloaded_error when the model's response is due, which the SDKs retry (they do not retry the mid-stream error)`)
	}
	if sim.HasStreamFaults(model) {
		out = append(out, `the model has stream faults (stalls, ping-only streams, cuts without message_stop), which serve plays as modelled only to requests with "stream": true; a request that does not stream gets no byte until the fault's cut`)
	}
	return out
}

// Handler serves one server model; see the package documentation. It is
// safe for concurrent use; requests reach the model one at a time, in the
// order of their arrival times.
type Handler struct {
	model   sim.ServerModel
	cfg     config
	metrics *metrics
	ids     atomic.Uint64

	// timing makes each answer of the model carry tookHeader: Validate's
	// clients measure how late they ran from it.
	timing bool

	requests, admitted, rejected, refused, inFlight, turnedAway atomic.Int64
	wastedTokens                                                atomic.Int64 // text deltas sent before a mid-stream failure
	bodies                                                      bodyBudget

	mu     sync.Mutex // guards the model's state, its seed and its clock
	state  sim.Server // nil until the clock starts
	seed   uint64     // of the model's random source
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
		// Its decisions would have to wait for requests that arrive later
		// (a contention write, an adaptive-LIFO queue's turn), which one
		// HTTP exchange per attempt answered at arrival cannot model.
		return nil, &UnsupportedError{Command: "serve", What: "the " + kindName(model) +
			" server model decides requests after they arrive (an answer depends on requests that arrive later); serve answers each request as it arrives"}
	}
	c := config{speed: 1, seed: 1, maxBody: DefaultMaxBody, maxBodies: DefaultMaxBodies, maxInFlight: DefaultMaxInFlight}
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
	case c.maxBodies < c.maxBody:
		return nil, fmt.Errorf("serve: max bodies must be at least max body (%d), got %d", c.maxBody, c.maxBodies)
	case c.maxInFlight <= 0:
		return nil, fmt.Errorf("serve: max in flight must be > 0, got %d", c.maxInFlight)
	case c.logTo != nil && c.logEvery <= 0:
		return nil, fmt.Errorf("serve: log interval must be > 0, got %v", c.logEvery)
	}
	h := &Handler{model: model, cfg: c, seed: c.seed, bodies: bodyBudget{max: c.maxBodies}}
	h.metrics = newMetrics(h)
	return h, nil
}

// Speed returns the speed factor.
func (h *Handler) Speed() float64 { return h.cfg.speed }

// Reset gives the model a fresh state with the same seed (as at the start
// of the simulator's run with that seed) and starts its clock now. Requests
// in flight keep the times they were given.
func (h *Handler) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.startLocked(time.Now())
}

// ResetSeed is Reset with another seed, which later resets keep.
func (h *Handler) ResetSeed(seed uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seed = seed
	h.startLocked(time.Now())
}

// Seed returns the seed of the model's random source: WithSeed's, or the
// last ResetSeed's.
func (h *Handler) Seed() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seed
}

func (h *Handler) startLocked(now time.Time) {
	h.state = h.model.NewServer(sim.ServerRand(h.seed))
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
	// the model: malformed, too large, over the in-flight limit or over
	// the bodies' budget.
	Refused int64
	// InFlight is the number of requests being served now.
	InFlight int64
	// TurnedAway counts the other requests answered with an error, on any
	// path: an unknown path (404), a wrong method (405), a Host not
	// allowed (403) or a missing control token (401).
	TurnedAway int64
	// BodyBytes is the bytes that request bodies hold now (see
	// WithMaxBodies).
	BodyBytes int64
	// WastedOutputTokens counts the output tokens (text deltas, one token
	// each) streamed before a stream broke with an error event: the
	// simulator's server.wasted_output_tokens.
	WastedOutputTokens int64
}

// Stats returns the counts so far.
func (h *Handler) Stats() Stats {
	return Stats{Requests: h.requests.Load(), Admitted: h.admitted.Load(), Rejected: h.rejected.Load(),
		Refused: h.refused.Load(), InFlight: h.inFlight.Load(), TurnedAway: h.turnedAway.Load(), BodyBytes: h.bodies.bytes(),
		WastedOutputTokens: h.wastedTokens.Load()}
}

// ServeHTTP routes a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.hostAllowed(r.Host) {
		h.turnAway(w, http.StatusForbidden, "permission_error", fmt.Sprintf(
			"this server does not answer to the host %q (allowed: localhost, IP addresses and the names given to 'retrysim serve --allow-host')", r.Host), "host")
		return
	}
	switch r.URL.Path {
	case "/v1/messages":
		if r.Method != http.MethodPost {
			h.refuseMethod(w, http.MethodPost)
			return
		}
		h.serveAPI(w, r, apiMessages)
	case "/v1/chat/completions", "/v1/responses":
		if r.Method != http.MethodPost {
			h.refuseMethod(w, http.MethodPost)
			return
		}
		a := apiChat
		if r.URL.Path == "/v1/responses" {
			a = apiResponses
		}
		h.serveAPI(w, r, a)
	case "/control/reset":
		if r.Method != http.MethodPost {
			h.refuseMethod(w, http.MethodPost)
			return
		}
		if !h.controlAllowed(r) {
			w.Header().Set("www-authenticate", "Bearer")
			h.turnAway(w, http.StatusUnauthorized, "authentication_error",
				"POST /control/* needs the header 'authorization: Bearer TOKEN' with the server's control token", "token")
			return
		}
		h.reset(w, r)
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
		h.turnAway(w, http.StatusNotFound, "not_found_error", "no such endpoint: "+r.URL.Path, "not_found")
	}
}

// reset serves POST /control/reset: a fresh model state with the seed of
// the query's seed parameter, else the seed after the current one (so that
// repeated runs are those of the simulator's seeds seed, seed+1, ..., as
// --seeds numbers them).
func (h *Handler) reset(w http.ResponseWriter, r *http.Request) {
	seed := h.Seed() + 1
	if q := r.URL.Query(); q.Has("seed") {
		n, err := strconv.ParseUint(q.Get("seed"), 10, 64)
		if err != nil {
			h.writeError(w, http.StatusBadRequest, machine.ErrorBody("invalid_request_error",
				fmt.Sprintf("seed: want a whole number from 0 to %d, got %q", uint64(math.MaxUint64), q.Get("seed"))), h.requestID())
			return
		}
		seed = n
	}
	h.ResetSeed(seed)
	w.Header().Set("content-type", "application/json")
	_, _ = fmt.Fprintf(w, `{"reset":true,"seed":%d}`+"\n", seed)
}

// hostAllowed checks a request's Host (see WithAllowedHosts).
func (h *Handler) hostAllowed(hostport string) bool {
	if !h.cfg.checkHost || hostport == "" { // HTTP/1.0 sends no Host; a browser always does
		return true
	}
	host := normalHost(hostport)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	for _, a := range h.cfg.hosts {
		if a == "*" || a == host {
			return true
		}
	}
	return false
}

// normalHost returns the host name of host or host:port, in lower case,
// without brackets or a final dot.
func normalHost(s string) string {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	s = strings.TrimSuffix(strings.Trim(s, "[]"), ".")
	return strings.ToLower(s)
}

// controlAllowed checks the control token, if there is one.
func (h *Handler) controlAllowed(r *http.Request) bool {
	if h.cfg.token == "" {
		return true
	}
	got := r.Header.Get("authorization")
	return subtle.ConstantTimeCompare([]byte(got), []byte("Bearer "+h.cfg.token)) == 1
}

func (h *Handler) refuseMethod(w http.ResponseWriter, allow string) {
	w.Header().Set("allow", allow)
	h.turnAway(w, http.StatusMethodNotAllowed, "invalid_request_error", "method not allowed; use "+allow, "method")
}

// turnAway answers a request that reaches no endpoint.
func (h *Handler) turnAway(w http.ResponseWriter, status int, errType, message, reason string) {
	h.turnedAway.Add(1)
	h.metrics.turnedAway.WithLabelValues(reason).Inc()
	h.writeError(w, status, machine.ErrorBody(errType, message), h.requestID())
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

// refuse answers a request without asking the model, in the shape of its
// API.
func (h *Handler) refuse(w http.ResponseWriter, a api, status int, errType, message, reason, id string) {
	h.refused.Add(1)
	h.metrics.refused.WithLabelValues(reason).Inc()
	if a == apiMessages {
		h.writeError(w, status, machine.ErrorBody(errType, message), id)
		return
	}
	h.writeOpenAIError(w, status, machine.OpenAIErrorBody(errType, "", message), id)
}

// writeOpenAIError writes an error status with an OpenAI error body; the
// request id goes in x-request-id, as the OpenAI API sends it.
func (h *Handler) writeOpenAIError(w http.ResponseWriter, status int, body []byte, id string) {
	w.Header().Set("x-request-id", id)
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// decision is what the model decided for one request, in real time.
type decision struct {
	arrival time.Time              // when the request reached the model
	due     time.Time              // when its response is due
	out     policies.Outcome       // with ServerWait already in real time
	breakAt time.Time              // a streamed response breaks here (zero: never)
	breakOn policies.Outcome       // and sends this error event
	partial bool                   // the model's mid-stream failure: half the deltas, then the event
	fault   machine.StreamTimeline // a stream fault, in real time from the arrival (faults.go)
}

// arrive asks the model, under the lock, so that arrival times reach it in
// order. The clock starts at the first request.
func (h *Handler) arrive(req sim.Request, stream bool, client string) decision {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if h.state == nil {
		h.startLocked(now)
	}
	at := h.toModel(now.Sub(h.origin))
	resp := h.state.Arrive(at, req)
	d := decision{arrival: now, due: h.origin.Add(h.toReal(max(resp.At, at))), out: resp.Outcome}
	if h.cfg.record != nil {
		h.cfg.record(Exchange{Client: client, Arrival: at, End: max(resp.At, at), Failed: resp.Outcome.Class != policies.Success})
	}
	d.out.ServerWait = h.toReal(d.out.ServerWait)
	if resp.Stream != nil && resp.Stream.Faulted {
		d.fault = h.realTimeline(*resp.Stream)
		return d
	}
	if stream && resp.Outcome.MidStream() {
		// The model's own mid-stream failure: HTTP 200, part of the
		// answer, then the error event when the model's response is due.
		d.breakAt, d.breakOn, d.partial = d.due, resp.Outcome, true
	}
	if sb, ok := h.state.(StreamBreaker); ok && stream && resp.Outcome.Class == policies.Success {
		if bAt, bOut, ok := sb.BreakStream(at, resp); ok {
			d.breakAt = h.origin.Add(h.toReal(min(max(bAt, at), resp.At)))
			d.breakOn = bOut
		}
	}
	return d
}

// serveAPI serves POST /v1/messages, /v1/chat/completions and
// /v1/responses: one model decision per request, rendered in the shape
// of the request's API.
func (h *Handler) serveAPI(w http.ResponseWriter, r *http.Request, a api) {
	id := h.requestID()
	h.requests.Add(1)
	if h.inFlight.Add(1) > int64(h.cfg.maxInFlight) {
		h.inFlight.Add(-1)
		h.refuse(w, a, 529, "overloaded_error", "the server is serving as many requests as it may (its own limit, not the model's)", "busy", id)
		return
	}
	defer h.inFlight.Add(-1)

	if r.ContentLength > h.cfg.maxBody {
		h.refuseTooLarge(w, a, id)
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(BodyReadTimeout)) // not every ResponseWriter supports deadlines
	body, held, err := h.readBody(http.MaxBytesReader(w, r.Body, h.cfg.maxBody), r.ContentLength)
	_ = rc.SetReadDeadline(time.Time{})
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			h.refuseTooLarge(w, a, id)
			return
		}
		if errors.Is(err, errBodyBudget) {
			h.refuse(w, a, 529, "overloaded_error", fmt.Sprintf(
				"the request bodies in flight hold as many bytes as the server allows (%d; its own limit, not the model's)", h.cfg.maxBodies), "busy_bodies", id)
			return
		}
		h.refuse(w, a, http.StatusBadRequest, "invalid_request_error", "could not read the request body: "+err.Error(), "invalid", id)
		return
	}
	req, err := parseRequest(body, a)
	bodyLen := len(body)
	// The buffer is done with; the model's name, a copy, stays reserved
	// until the answer is sent.
	kept := int64(len(req.Model))
	h.bodies.release(held - kept)
	defer h.bodies.release(kept)
	if err != nil {
		h.refuse(w, a, http.StatusBadRequest, "invalid_request_error", err.Error(), "invalid", id)
		return
	}

	if r.Header.Get(ClientHeader) == WarmupClient {
		h.warmup(w, a, id)
		return
	}
	simReq := sim.Request{Fallback: h.cfg.fallback != "" && req.Model == h.cfg.fallback}
	if v := r.Header.Get(PriorityHeader); v != "" {
		p, err := sim.ParsePriority(v)
		if err != nil {
			h.refuse(w, a, http.StatusBadRequest, "invalid_request_error", PriorityHeader+": "+err.Error(), "invalid", id)
			return
		}
		simReq.Priority = p
	}
	if h.timing { // Validate's clients size their requests as the workload does
		simReq.InputTokens, simReq.OutputTokens = parseTokensHeader(r.Header.Get(tokensHeader))
	}
	d := h.arrive(simReq, req.Stream, r.Header.Get(ClientHeader))
	if d.out.Class == policies.Success {
		h.admitted.Add(1)
		h.metrics.admitted.Inc()
	} else {
		h.rejected.Add(1)
		status := machine.Render(d.out).Status
		switch {
		case d.partial:
			status = http.StatusOK
		case d.fault.Faulted && !d.fault.Silent && req.Stream:
			status = http.StatusOK // the stream fault's headers say 200
		case d.fault.Faulted:
			status = 0 // no response at all
		}
		h.metrics.rejected.WithLabelValues(strconv.Itoa(status)).Inc()
	}
	_ = rc.SetWriteDeadline(d.due.Add(WriteMargin))
	reply := newReply(id, req, bodyLen)
	reply.api = a
	if h.timing {
		w.Header().Set(tookHeader, strconv.FormatInt(int64(d.due.Sub(d.arrival)), 10))
	}
	if d.fault.Faulted {
		h.playFault(w, r.Context(), rc, d, reply, req.Stream)
		return
	}
	if (d.out.Class == policies.Success || d.partial) && req.Stream {
		h.stream(w, r.Context(), rc, d, reply)
		return
	}
	if !sleepUntil(r.Context(), d.due) {
		return // the client went away
	}
	if d.out.Class != policies.Success {
		if a == apiMessages {
			out := machine.Render(d.out)
			maps.Copy(w.Header(), out.Header)
			h.setRateLimits(w.Header(), a)
			h.writeError(w, out.Status, out.Body, id)
			return
		}
		out := machine.RenderOpenAI(d.out)
		maps.Copy(w.Header(), out.Header)
		h.setRateLimits(w.Header(), a)
		h.writeOpenAIError(w, out.Status, out.Body, id)
		return
	}
	h.setRateLimits(w.Header(), a)
	w.Header().Set(a.requestIDHeader(), id)
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(machine.Render(d.out).Status)
	_, _ = w.Write(reply.body())
}

// setRateLimits writes the rate-limit headers of a model that has limits
// (sim.LimitReporter) into header, in the dialect of API a, as its
// buckets are now: the headers' time is when they are sent (a stream's
// start, a plain answer's due time). They replace any that the rendering
// of the outcome wrote (RenderOpenAI's remaining 0 and reset = the wait).
func (h *Handler) setRateLimits(header http.Header, a api) {
	h.mu.Lock()
	lr, ok := sim.ServerAs[sim.LimitReporter](h.state)
	if !ok {
		h.mu.Unlock()
		return
	}
	now := time.Now()
	l, ok := lr.RateLimits(h.toModel(now.Sub(h.origin)))
	h.mu.Unlock()
	if !ok {
		return
	}
	for _, b := range []*machine.RateLimit{&l.Requests, &l.InputTokens, &l.OutputTokens, &l.Tokens} {
		b.Reset = h.toReal(b.Reset)
	}
	d := machine.DialectAnthropic
	if a != apiMessages {
		d = machine.DialectOpenAI
		header.Del("x-ratelimit-remaining-requests")
		header.Del("x-ratelimit-reset-requests")
	}
	machine.SetRateLimitHeaders(header, l, d, now)
}

func (h *Handler) refuseTooLarge(w http.ResponseWriter, a api, id string) {
	h.refuse(w, a, http.StatusRequestEntityTooLarge, "request_too_large",
		fmt.Sprintf("the request body is larger than %d bytes", h.cfg.maxBody), "too_large", id)
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

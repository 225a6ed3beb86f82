package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
	"unsafe"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// Layer is a retry layer inside a policy's own (Policy.Layers): an SDK's
// retry loop inside the application's, an HTTP client's inside the SDK's,
// a sidecar's in front of them all. Levels are numbered from the policy
// itself (0, the outermost) inwards; each attempt of level k is a whole
// operation of level k+1, which starts afresh (its own attempts, backoff
// and rules), and only the innermost level's attempts reach the server.
// An attempt of level k ends with the outcome of level k+1's operation:
// its success, or the outcome of its last attempt when it stops (out of
// attempts, or an outcome it does not retry). With no other bound, the
// attempts reaching the server per operation are at most the product of
// the levels' max attempts.
//
// Each level's attempt timeout bounds its attempt: the whole inner loop,
// waits included; the outermost level's deadline bounds level 0's
// attempts too. When an attempt of level k ends so, level k sees a
// timeout (Transient, no status), as policies.Do does for an attempt's
// context, and what happens inside depends on deadline propagation:
//
//   - a layer that receives its caller's deadline (the default) stops
//     with it: it is abandoned at once, its request in flight too (its
//     client stops waiting), and so are the layers inside it that
//     receive its deadline in turn. Such a layer knows the earliest end of
//     the attempts around it: its waits stop there and its requests' client
//     stops waiting there, as Envoy caps a per-try timeout by the remaining
//     deadline. It still sends an attempt with less than its own attempt
//     timeout left.
//   - a layer with NoDeadlinePropagation (a sidecar or gateway that does
//     not read a deadline header) knows none of the attempts around it:
//     when its caller gives up, it goes on as an orphan, with the layers
//     inside it, until its own rules stop it; its attempts still reach the
//     server, and its outcome is discarded. Meanwhile its caller retries,
//     starting a fresh operation of the layer.
//
// A layer has no deadline or fallback of its own: its Rules' Deadline
// must be 0. Its Coordinators are shared by every operation of the run at
// that layer, orphans included (a sidecar's retry budget is shared by all
// its callers); they must not queue operations (an in-flight limit), hedge
// or read rate-limit headers.
type Layer struct {
	// Name names the layer in its counters (layers.NAME.attempts).
	Name  string
	Rules policies.Policy
	// Coordinators are the layer's own shared controls (retry budget,
	// breaker, throttle, ...), asked in this order before each of its
	// attempts.
	Coordinators []machine.Spec
	// NoDeadlinePropagation: the layer does not receive its caller's
	// deadline and goes on as an orphan when its caller gives up.
	NoDeadlinePropagation bool
}

// MaxLayers bounds Policy.Layers.
const MaxLayers = 8

// ValidateLayers checks a policy's layers as a run does.
func ValidateLayers(ls []Layer) error {
	if len(ls) > MaxLayers {
		return fmt.Errorf("%d retry layers, at most %d", len(ls), MaxLayers)
	}
	for i, l := range ls {
		switch {
		case l.Name == "" || l.Name == "outer":
			return fmt.Errorf("layer %d needs a name other than \"\" and \"outer\"", i+1)
		case l.Rules.Backoff == nil:
			return fmt.Errorf("layer %q has no backoff", l.Name)
		case l.Rules.MaxAttempts <= 0:
			return fmt.Errorf("layer %q needs max attempts", l.Name)
		case l.Rules.Deadline != 0:
			return fmt.Errorf("layer %q: an inner layer has no deadline of its own (bound it with the attempt timeout of the layer around it)", l.Name)
		case len(l.Coordinators) > machine.MaxCoordinators:
			return fmt.Errorf("layer %q: %d coordinators, at most %d", l.Name, len(l.Coordinators), machine.MaxCoordinators)
		}
		for _, s := range l.Coordinators {
			if err := validateLayerCoordinator(s); err != nil {
				return fmt.Errorf("layer %q: %w", l.Name, err)
			}
		}
		for _, o := range ls[:i] {
			if o.Name == l.Name {
				return fmt.Errorf("two layers are called %q", l.Name)
			}
		}
	}
	return nil
}

// validateLayerCoordinator refuses what an inner layer cannot drive: a
// coordinator that queues operations (the engine keeps a waiter only for
// the outermost level), a hedge, and one that reads rate-limit headers
// (only the outermost level gets them).
func validateLayerCoordinator(s machine.Spec) error {
	if s == nil {
		return fmt.Errorf("a nil coordinator spec")
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if q, ok := s.(machine.Queuer); ok && q.Queues() {
		return fmt.Errorf("%T queues operations; an inner layer's coordinators must not (put the in-flight limit on the outermost policy)", s)
	}
	if _, ok := s.(policies.HedgeConfig); ok {
		return fmt.Errorf("an inner layer cannot hedge")
	}
	c, err := s.NewCoordinator()
	if err != nil {
		return err
	}
	if _, ok := c.(machine.LimitsObserver); ok {
		return fmt.Errorf("%T reads rate-limit headers, which only the outermost policy gets", s)
	}
	return nil
}

// retryClasses are the classes whose retries each level counts
// (layers.NAME.retries_CLASS); the names are those expectations use.
var retryClasses = [...]struct {
	class policies.Class
	name  string
}{{policies.RetryAfter, "retry_after"}, {policies.Capacity, "capacity"}, {policies.Transient, "transient"}, {policies.Terminal, "terminal"}}

// RetryClassNames are the class names of the counters
// layers.NAME.retries_CLASS, in order.
func RetryClassNames() []string {
	names := make([]string, len(retryClasses))
	for i, c := range retryClasses {
		names[i] = c.name
	}
	return names
}

// Layered is a server model behind a retry layer: the layer's attempts
// reach Inner, and its caller (the engine, or the layer around it) sees
// one answer per request it sends, the layer's. A policy's layers
// (Policy.Layers) are nested Layered models, the outermost around the
// others, built for each run (Config.withLayers): only the innermost's
// attempts reach the scenario's server. The layer's operations are
// machine.Op values, one per request it serves, driven on the engine's
// decision path (Decider): each step of a layer is a pending decision.
//
// What a layer draws (its backoff's jitter) comes from its own stream of
// the run's seed, one per level, not from the operation's stream. Its
// requests to Inner are counted as the run's attempts (Relay), for the
// operation whose request it serves.
type Layered struct {
	Inner ServerModel
	Layer Layer
	// level (1: the outermost layer) and seed choose its random stream.
	level int
	seed  uint64
}

// withLayers returns c with its server behind the policy's retry layers,
// outermost first. A run without layers is unchanged.
func (c Config) withLayers() Config {
	for k := len(c.Policy.Layers) - 1; k >= 0; k-- {
		c.Server = &Layered{Inner: c.Server, Layer: c.Policy.Layers[k], level: k + 1, seed: c.Seed}
	}
	return c
}

// Validate checks the inner model and the layer.
func (m *Layered) Validate() error {
	if m.Inner == nil {
		return fmt.Errorf("retry layer %q wraps no server", m.Layer.Name)
	}
	if err := m.Inner.Validate(); err != nil {
		return err
	}
	return ValidateLayers([]Layer{m.Layer})
}

// Unwrap returns the model the layer sends to.
func (m *Layered) Unwrap() ServerModel { return m.Inner }

// NewServer returns the layer's state for one run around Inner's, which
// draws from rng; the layer draws from its own stream.
func (m *Layered) NewServer(rng *rand.Rand) Server {
	s := &layerState{def: &m.Layer, inner: m.Inner.NewServer(rng), pcg: newStream(m.seed, streamLayer, uint64(m.level))}
	s.rng = rand.New(&s.pcg)
	s.dec, _ = s.inner.(Decider)
	s.plan.Policy = m.Layer.Rules
	for _, sp := range m.Layer.Coordinators {
		c, err := sp.NewCoordinator() // validated: Validate built one
		if err != nil {
			panic(fmt.Sprintf("retry layer %q: %v", m.Layer.Name, err))
		}
		s.plan.Coordinators = append(s.plan.Coordinators, c)
	}
	return s
}

// layerState is a layer's state during a run: its shared coordinators
// (its plan), one call per request it serves and one per decision Inner
// owes a request whose attempt timed out, and its counts.
type layerState struct {
	def *Layer
	// nested: a layer around it relays for it (and reports its counts).
	nested bool
	plan   machine.Plan
	inner  Server
	dec    Decider // inner, if it decides some requests later
	pcg    rand.PCG
	rng    *rand.Rand
	meter  Meter
	// innermost: inner is no Relay, so the layer meters its requests.
	innermost bool
	calls     []layerCall
	free      []int32
	// Counts: requests in, and retries of the caller among them by class
	// (the engine's, for the outermost); requests out, those sent after a
	// caller around gave up, and retries by class.
	arrivals, sends, late int64
	inRetries, retries    [len(retryClasses)]int64
}

// layerCall is one request the layer serves: its own retry loop. A call
// marked owed only waits for the decision Inner owes (ticket), which no
// one waits for.
type layerCall struct {
	op    machine.Op
	req   Request       // the caller's request
	start time.Duration // its arrival
	// told is the caller's deadline the layer honours (0: none, or no
	// propagation); gone is the earliest end of the attempts around it.
	told, gone time.Duration
	next       time.Duration // when its next step is due
	giveUp     time.Duration // when its attempt's client stops waiting (0: never)
	out        policies.Outcome
	innerAt    time.Duration // when Inner decides, once the attempt timed out
	ticket     int32         // Inner's pending decision, in states pending, timed out, owed
	state      callState
}

type callState uint8

const (
	callReady    callState = iota // its next attempt is due at next
	callPending                   // Inner decides its attempt at next (or it times out there)
	callAnswered                  // its attempt's outcome (out) arrives at next
	callTimedOut                  // its attempt times out at next; Inner decides later, at innerAt
	callOwed                      // Inner owes a decision (ticket) to an attempt that ended
	callFree
)

// Relay takes the meter the layer counts Inner's requests with: its own
// if Inner is a server of its own, else Inner's, which the layer then
// passes on (it is Inner's meter, and owes what Inner defers).
func (s *layerState) Relay(m Meter) {
	s.meter = m
	_, s.nested = m.(*layerState)
	if r, ok := s.inner.(Relay); ok {
		r.Relay(s)
		return
	}
	s.innermost = true
}

// Sent and Decided pass Inner's counts on (Meter).
func (s *layerState) Sent(now time.Duration, op int, retry bool) { s.meter.Sent(now, op, retry) }

func (s *layerState) Decided(now time.Duration, op int, class policies.Class, late bool) {
	s.meter.Decided(now, op, class, late)
}

// Later defers a decision Inner owes as one the layer owes.
func (s *layerState) Later(at time.Duration, op int, ticket int32) {
	s.owe(at, op, ticket)
}

// Unwrap returns the server the layer sends to (Wrapper); the layer's
// answers are its own (ownTicket).
func (s *layerState) Unwrap() Server { return s.inner }

func (s *layerState) newCall() int32 {
	if n := len(s.free); n > 0 {
		t := s.free[n-1]
		s.free = s.free[:n-1]
		return t
	}
	if len(s.calls) == cap(s.calls) {
		// Double: append grows large slices by a quarter, and every
		// growth is allocated anew (LayerBytes counts on 2×).
		s.calls = slices.Grow(s.calls, max(len(s.calls), 16))
	}
	s.calls = append(s.calls, layerCall{})
	return int32(len(s.calls) - 1)
}

func (s *layerState) done(t int32) {
	s.calls[t].state = callFree
	s.free = append(s.free, t)
}

// owe makes the decision Inner owes (ticket, due at at) one the layer
// owes, through its meter (the engine's detached-decision path).
func (s *layerState) owe(at time.Duration, op int, ticket int32) {
	t := s.newCall()
	s.calls[t] = layerCall{req: Request{Op: op}, ticket: ticket, state: callOwed}
	s.meter.Later(at, op, t)
}

// Arrive starts the layer's retry loop for req.
func (s *layerState) Arrive(now time.Duration, req Request) Response {
	s.arrivals++
	if req.Retry {
		s.inRetries[classIndex(req.RetryOf)]++
	}
	t := s.newCall()
	c := &s.calls[t]
	*c = layerCall{req: req, start: now, next: now, gone: earliest(req.Gone, req.GiveUpAt)}
	if !s.def.NoDeadlinePropagation {
		c.told = req.GiveUpAt
	}
	c.op.Start(&s.plan)
	return s.step(t, now)
}

// Decide takes the call's next step: the one due at now.
func (s *layerState) Decide(now time.Duration, t int32) Response {
	c := &s.calls[t]
	if c.state == callOwed {
		resp := s.dec.Decide(now, c.ticket)
		if resp.Pending {
			c.ticket = resp.Ticket
			return Response{Pending: true, At: resp.At, Ticket: t}
		}
		if s.innermost {
			s.meter.Decided(now, c.req.Op, resp.Outcome.Class, true)
		}
		s.done(t)
		return Response{Outcome: resp.Outcome, At: max(now, resp.At), Ticket: ownTicket}
	}
	return s.step(t, now)
}

// step runs call t at now until it must wait: for Inner, for a backoff,
// or for nothing more (its answer).
func (s *layerState) step(t int32, now time.Duration) Response {
	for {
		c := &s.calls[t]
		if c.next > now {
			return Response{Pending: true, At: c.next, Ticket: t}
		}
		switch c.state {
		case callPending:
			s.took(c, now, s.dec.Decide(now, c.ticket))
			continue
		case callAnswered:
			if s.conclude(c, now) {
				return s.answer(t, now)
			}
			continue
		}
		if c.told > 0 && now >= c.told {
			return s.abandon(t, now)
		}
		if c.state == callTimedOut {
			s.owe(c.innerAt, c.req.Op, c.ticket)
			c = &s.calls[t] // owe may have grown calls
			c.state, c.out = callAnswered, policies.Outcome{Class: policies.Transient}
			continue
		}
		st := c.op.Before(&s.plan, machine.Moment{Now: epoch.Add(now), Since: now - c.start}, nil, s.rng)
		switch st.Kind {
		case machine.StepSend:
			s.send(c, now)
		case machine.StepWait:
			c.next = s.until(c, now+st.Delay)
		default:
			// A coordinator of the layer refused: its first attempt gets
			// the layer's own 503, as Envoy answers when a budget or
			// breaker refuses; a later one, its last outcome.
			if c.op.Attempts() == 0 {
				c.out = policies.Outcome{Class: policies.Capacity, Status: 503}
			}
			return s.answer(t, now)
		}
	}
}

// conclude gives call c's loop the outcome of its attempt, at now, and
// reports whether the loop is over.
func (s *layerState) conclude(c *layerCall, now time.Duration) bool {
	m := machine.Moment{Now: epoch.Add(now), Since: now - c.start}
	if c.out.Class == policies.Success {
		c.op.After(&s.plan, m, policies.Outcome{}, false, nil, s.rng)
		return true
	}
	st := c.op.After(&s.plan, m, c.out, true, nil, s.rng)
	if st.Kind == machine.StepStop {
		return true
	}
	c.state, c.next = callReady, s.until(c, now+st.Delay)
	return false
}

// until is at, or the caller's deadline the layer honours if that comes
// first.
func (s *layerState) until(c *layerCall, at time.Duration) time.Duration {
	if c.told > 0 && c.told < at {
		return c.told
	}
	return at
}

// send sends call c's attempt to Inner at now.
func (s *layerState) send(c *layerCall, now time.Duration) {
	s.sends++
	if c.gone > 0 && now >= c.gone {
		s.late++
	}
	if c.op.Attempts() > 1 {
		s.retries[classIndex(c.out.Class)]++
	}
	c.giveUp = 0
	if d := s.def.Rules.AttemptTimeout; d > 0 {
		c.giveUp = now + d
	}
	if c.told > 0 && (c.giveUp == 0 || c.told < c.giveUp) {
		c.giveUp = c.told
	}
	req := c.req
	req.GiveUpAt, req.Gone, req.Copy = c.giveUp, c.gone, 0
	req.Retry = c.req.Retry || c.op.Attempts() > 1
	req.RetryOf = c.out.Class
	if s.innermost {
		s.meter.Sent(now, req.Op, req.Retry)
	}
	s.took(c, now, s.inner.Arrive(now, req))
}

// took records Inner's response to call c's attempt, given at now.
func (s *layerState) took(c *layerCall, now time.Duration, resp Response) {
	late := c.giveUp > 0 && resp.At > c.giveUp
	switch {
	case resp.Pending && late:
		// The attempt times out at giveUp; Inner decides at resp.At, for
		// no one (owe, then).
		c.state, c.ticket, c.innerAt, c.next = callTimedOut, resp.Ticket, resp.At, c.giveUp
	case resp.Pending:
		if s.dec == nil {
			panic(fmt.Sprintf("retry layer %q: the server inside left a request pending but cannot decide it", s.def.Name))
		}
		c.state, c.ticket, c.next = callPending, resp.Ticket, resp.At
	default:
		if s.innermost {
			s.meter.Decided(now, c.req.Op, resp.Outcome.Class, late)
		}
		c.state, c.out, c.next = callAnswered, resp.Outcome, resp.At
		if late {
			c.out, c.next = policies.Outcome{Class: policies.Transient}, c.giveUp
		}
	}
}

// abandon ends call t at now, its caller's deadline: its attempt in
// flight timed out, as Expire tells its coordinators, or its next one is
// not sent. Its caller sees a timeout.
func (s *layerState) abandon(t int32, now time.Duration) Response {
	c := &s.calls[t]
	if len(s.plan.Coordinators) > 0 {
		m := machine.Moment{Now: epoch.Add(now), Since: now - c.start}
		if c.state == callReady {
			c.op.Abandon(&s.plan, m.Now, nil)
		} else {
			c.op.Expire(&s.plan, m)
		}
	}
	switch c.state {
	case callPending:
		s.owe(c.next, c.req.Op, c.ticket)
	case callTimedOut:
		s.owe(c.innerAt, c.req.Op, c.ticket)
	}
	c = &s.calls[t]
	c.out = policies.Outcome{Class: policies.Transient}
	return s.answer(t, now)
}

// answer ends call t at now with its outcome.
func (s *layerState) answer(t int32, now time.Duration) Response {
	out := s.calls[t].out
	s.done(t)
	return Response{Outcome: out, At: now, Ticket: ownTicket}
}

// earliest is the earlier of two times, 0 meaning none.
func earliest(a, b time.Duration) time.Duration {
	if a == 0 || b > 0 && b < a {
		return b
	}
	return a
}

func classIndex(c policies.Class) int {
	for n, rc := range retryClasses {
		if rc.class == c {
			return n
		}
	}
	return len(retryClasses) - 1 // Terminal: the rest
}

// ReportCounters reports every level's counters, for the outermost layer
// only (a nested one says nothing; the engine asks the server inside
// first):
// layers.outer.attempts
// and layers.outer.retries_CLASS for the policy's own, then for each layer
// layers.NAME.attempts_in (its operations), layers.NAME.attempts (its
// attempts), layers.NAME.after_giveup (its attempts made after a caller
// around it gave up) and layers.NAME.retries_CLASS; layers.after_giveup
// is the innermost's.
func (s *layerState) ReportCounters(c *Counters) {
	if s.nested {
		return
	}
	levels := []*layerState{s}
	for l, ok := s.inner.(*layerState); ok; l, ok = l.inner.(*layerState) {
		levels = append(levels, l)
	}
	c.Add("layers.outer.attempts", s.arrivals)
	reportRetries(c, "outer", &s.inRetries)
	for _, l := range levels {
		c.Add("layers."+l.def.Name+".attempts_in", l.arrivals)
		c.Add("layers."+l.def.Name+".attempts", l.sends)
		c.Add("layers."+l.def.Name+".after_giveup", l.late)
		reportRetries(c, l.def.Name, &l.retries)
	}
	c.Add("layers.after_giveup", levels[len(levels)-1].late)
}

func reportRetries(c *Counters, name string, n *[len(retryClasses)]int64) {
	for i, rc := range retryClasses {
		c.Add("layers."+name+".retries_"+rc.name, n[i])
	}
}

// LayerBytes bounds what retry layers allocate per operation of a run: each
// layer keeps a call per request in flight through it (layerCall and its
// place in the free list) in a slice grown by append, whose capacity is up
// to twice its length and whose growth allocated up to twice its capacity
// on the way: 4 calls' room per request.
func LayerBytes(layers int) int64 {
	return int64(layers) * 4 * (int64(unsafe.Sizeof(layerCall{})) + 4)
}

// Orphaning reports whether some layer of p goes on after its caller
// gave up.
func (p *Policy) Orphaning() bool {
	return slices.ContainsFunc(p.Layers, func(l Layer) bool { return l.NoDeadlinePropagation })
}

// OrphansPerOperation bounds the orphans one operation of p can have at
// once, given the attempts outer sends at most: each attempt of the
// level around a layer that does not receive its caller's deadline may
// leave one behind, if some level around that layer gives up on time (an
// attempt timeout, or the policy's deadline). 0 when none can.
func (p *Policy) OrphansPerOperation(outer float64) float64 {
	n, attempts := 0.0, outer
	timed := p.Rules.AttemptTimeout > 0 || p.Rules.Deadline > 0
	for _, l := range p.Layers {
		if l.NoDeadlinePropagation && timed {
			n += attempts
		}
		attempts *= float64(l.Rules.MaxAttempts)
		timed = timed || l.Rules.AttemptTimeout > 0
	}
	return n
}

package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// ServerModel describes a server: its rules, fixed for a whole run. A run
// asks it for fresh state (NewServer), so one model serves any number of
// runs, concurrently too. Adding a model is one new type implementing this
// interface; the engine does not know which model runs.
type ServerModel interface {
	// Validate reports the first problem that would make the model
	// meaningless.
	Validate() error
	// NewServer returns the state of one run; rng is the run's server
	// stream, its only source of randomness.
	NewServer(rng *rand.Rand) Server
}

// Server is a server model's state during one run: a state machine over
// virtual time. The engine calls it from one goroutine, with arrival times
// that never decrease.
type Server interface {
	// Arrive decides a request arriving at now and says what the client
	// receives and when.
	Arrive(now time.Duration, req Request) Response
}

// Request is an attempt as the server sees it.
type Request struct {
	// Fallback is true when the attempt calls the fallback model.
	Fallback bool
	// GiveUpAt, if > 0, is when the client stops waiting for the response
	// (its attempt timeout or the end of its budget): a model may skip work
	// whose client has gone. 0 means the client waits as long as it takes.
	GiveUpAt time.Duration
	// InputTokens and OutputTokens size the request, for models that limit
	// or count tokens (a rate limit, a streaming error mix); 0 means the model's default.
	// The engine sets them from a TokenSizer workload, else leaves them 0.
	InputTokens, OutputTokens int
	// Copy is 0 for an attempt's first copy and k for its k-th hedge
	// (policies.HedgeConfig): a balancer may send copies to distinct
	// servers.
	Copy int
	// Op is the operation whose attempt this is (a wrapper that sends
	// requests of its own names it to its Meter).
	Op int
	// Retry says the attempt is not its operation's first (at some level,
	// for a retry layer's request); RetryOf is then the class of the
	// outcome it retries.
	Retry   bool
	RetryOf policies.Class
	// Gone, if > 0, is when a caller further out than GiveUpAt's stopped
	// waiting: a retry layer that does not receive its caller's deadline
	// (Layer.NoDeadlinePropagation) does not pass it in GiveUpAt, and
	// counts the requests it sends after it as sent after a give-up.
	Gone time.Duration
	// Priority is the operation's priority (Prioritizer); 0, the default,
	// when the workload gives none.
	Priority Priority
}

// Priority is how much a request matters when there is not room for all:
// higher is served first and shed last. The zero value is the default
// level; the named levels either side are gRPC's and Envoy's critical and
// sheddable (Stripe's critical and non-critical). Other numbers, within
// ±MaxPriority, order finer.
type Priority int8

// The named priorities, and the bound on any other.
const (
	PrioritySheddable Priority = -1
	PriorityDefault   Priority = 0
	PriorityCritical  Priority = 1
	MaxPriority                = 100
)

// String names p: "critical", "default", "sheddable", else its number.
func (p Priority) String() string {
	switch p {
	case PriorityCritical:
		return "critical"
	case PriorityDefault:
		return "default"
	case PrioritySheddable:
		return "sheddable"
	}
	return strconv.Itoa(int(p))
}

// Relay is an optional interface of a Server that sends requests of its
// own to the server it wraps (a retry layer's attempts): the engine then
// counts those, which it learns of through the Meter it gives the server
// once per run before the first arrival, instead of the requests it sends
// the wrapper itself.
type Relay interface {
	Relay(m Meter)
}

// Meter counts a Relay's requests as the engine counts its own.
type Meter interface {
	// Sent: a request of operation op reaches the server at now (an
	// attempt: Result.Attempts, Observer.OnSend).
	Sent(now time.Duration, op int, retry bool)
	// Decided: the server decided a request of op (Result.Admitted or
	// Rejected, Observer.OnDecision); late says its client stops waiting
	// before the answer.
	Decided(now time.Duration, op int, class policies.Class, late bool)
	// Later asks the engine to call the Relay's Decide(at, ticket) for a
	// decision no client waits for (the path of a decision whose client
	// gave up: see Decider); what it answers reaches no one.
	Later(at time.Duration, op int, ticket int32)
}

// Response is the server's answer to one request.
type Response struct {
	// Outcome is what the client receives; Class Success means admitted.
	Outcome policies.Outcome
	// At is when the response reaches the client; never before the arrival.
	// For a pending response, it is when the server decides instead.
	At time.Duration
	// Pending, if set, says the server decides the request later, at At
	// (never before the arrival): the engine then calls the server's Decide
	// (Decider) with Ticket, and Outcome is not used. A model needs it when
	// its decision depends on requests that arrive later but are decided
	// earlier (a contention server).
	Pending bool
	// Ticket identifies a pending request to its server's Decide; the
	// server chooses it, and may reuse it once the request is decided.
	Ticket int32
	// Stream, for a stream fault (nil otherwise), is how the stream
	// unfolds from the arrival; Outcome and At are then what the client
	// sees at the cut, unless the policy's stream watchdog ends it sooner
	// (the engine applies it). Times are relative to the arrival. A
	// pointer, so that the answers of healthy requests stay small.
	Stream *machine.StreamTimeline
	// Events, if > 0, says a successful answer is a healthy stream of that
	// many content events, the j-th j·(At−arrival)/(Events+1) after the
	// arrival (as StreamFault's schedule): the engine's stream watchdog
	// may end it, as Do's would, when its timeouts are below that gap.
	// With Stream set, it is the events the whole answer would have had
	// (the schedule's), for a model that bills the part sent.
	Events int32
}

// Decider is an optional interface of a Server that leaves some requests
// pending (Response.Pending); the engine checks for it once per run. At the
// pending response's At, the engine calls Decide and then treats its answer
// as it treats an answer of Arrive: the attempt timeout and budget cut it,
// it counts as admitted or rejected, and Observer.OnDecision is told of it
// at the decision time. Decisions due at the same time are made in the order
// the requests arrived. When the client stops waiting (Request.GiveUpAt)
// before the decision, its attempt ends then, and the server still decides
// at the time it named (other requests may depend on it): such a decision
// comes before any other event due at the same time.
type Decider interface {
	// Decide decides the pending request with the given ticket at now, the
	// time its pending response named, and returns what the client
	// receives and when (At >= now). It may leave the request pending
	// again (Pending, At > now): the engine then asks again at At, as it
	// would after Arrive (an adaptive-LIFO queue does, until a worker
	// takes the request).
	Decide(now time.Duration, ticket int32) Response
}

// DecidesLater reports whether a model's servers decide some requests after
// they arrive (their state is a Decider).
func DecidesLater(m ServerModel) bool {
	_, ok := m.NewServer(ServerRand(1)).(Decider)
	return ok
}

// MidStreamer is an optional interface of a ServerModel some of whose
// failures come inside a streamed 200 response (Outcome.MidStream): HTTP
// 200, part of the answer, then an error event (found through wrappers:
// ModelAs).
type MidStreamer interface {
	MidStreamFailures() bool
}

// FailsMidStream reports whether m says some of its failures come
// mid-stream.
func FailsMidStream(m ServerModel) bool {
	ms, ok := ModelAs[MidStreamer](m)
	return ok && ms.MidStreamFailures()
}

// Workload creates a run's operations. Operation i (0 <= i < Operations())
// starts at Start(i, rng), where rng is operation i's own start stream.
type Workload interface {
	Validate() error
	// Operations returns the number of operations in a run.
	Operations() int
	// Start returns when operation i starts, drawing from rng if it needs
	// randomness.
	Start(i int, rng *rand.Rand) time.Duration
}

// StartDrawer is an optional interface of a Workload whose operations are
// drawn afresh for each run, such as an open loop's Poisson arrivals. The
// engine checks for it once per run. When a workload implements it, the
// run has exactly the operations DrawStarts returns, operation i starting
// at starts[i]; Operations and Start are not used by the engine.
type StartDrawer interface {
	// DrawStarts appends the start time of every operation of one run to
	// buf (which it may reuse) and returns it. rng is the run's workload
	// stream, its only source of randomness. At most MaxOperations.
	DrawStarts(rng *rand.Rand, buf []time.Duration) []time.Duration
}

// Chained is an optional interface of a Workload some of whose operations
// start only when another ends: the next operation of a closed-loop worker,
// the next turn of an agent session. The engine checks for it once per
// run. Operations() is then the most operations a run may start.
type Chained interface {
	// NewChain returns the chaining state of one run.
	NewChain() Chain
}

// Chain is a Chained workload's state during one run. The engine calls it
// from one goroutine, in event order.
type Chain interface {
	// Leaders returns how many operations start on their own: operations
	// 0 … Leaders()-1, each at Start(i, rng) as for any workload. The
	// others start only when Next names them.
	Leaders() int
	// Next is told that operation ended has ended at time at, completed or
	// not (it gave up), and returns the operation to start next, if any,
	// and when (>= at). next must be the lowest operation not started yet
	// (operations start in index order); the engine fails the run
	// otherwise. rng is the run's workload stream.
	Next(ended int, at time.Duration, completed bool, rng *rand.Rand) (next int, start time.Duration, ok bool)
}

// ProcessSplit is an optional interface of a Workload whose operations
// belong to several client processes, each with its own retry layer: its
// own gate, throttle, limiter, retry budgets, breaker and adaptive
// throttle, built by Policy.Plan for each process. Operation i belongs to
// process i mod ClientProcesses(). Without it every operation of a run
// shares one.
type ProcessSplit interface {
	// ClientProcesses returns the number of client processes, >= 1.
	ClientProcesses() int
}

// MaxProcesses bounds ProcessSplit.ClientProcesses: each process has its
// own coordinators.
const MaxProcesses = 1_000_000

// TokenSizer is an optional interface of a Workload, or of its Chain
// (asked first), that sizes requests: the engine sets Request.InputTokens
// and OutputTokens from it on every attempt of operation i.
type TokenSizer interface {
	Tokens(i int) (input, output int)
}

// ParsePriority reads a priority: critical, default, sheddable, or a
// whole number within ±MaxPriority.
func ParsePriority(s string) (Priority, error) {
	for _, p := range []Priority{PriorityCritical, PriorityDefault, PrioritySheddable} {
		if s == p.String() {
			return p, nil
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < -MaxPriority || n > MaxPriority {
		return 0, fmt.Errorf("%q is not a priority: want critical, default, sheddable or a whole number within ±%d", s, MaxPriority)
	}
	return Priority(n), nil
}

// Prioritizer is an optional interface of a Workload, or of its Chain
// (asked first), that gives operations priorities: the engine sets
// Request.Priority from it on every attempt of operation i. Without one,
// Config.Priorities does.
type Prioritizer interface {
	Priority(i int) Priority
}

// PriorityShare is a share of a run's operations (0 < Share <= 1) that
// has a priority.
type PriorityShare struct {
	Priority Priority
	Share    float64
}

// PriorityShares give operations priorities by share, the rest the
// default, interleaved by operation index without a draw: the first
// listed takes floor(n × Share) of the first n operations, each next one
// as many of those the ones before left (Share over what they left), so
// that the k-th listed has within k of n × Share.
type PriorityShares []PriorityShare

// Validate checks each share and that they sum to at most 1.
func (ps PriorityShares) Validate() error {
	sum := 0.0
	for i, p := range ps {
		for _, q := range ps[:i] {
			if q.Priority == p.Priority {
				return fmt.Errorf("priority %v is given twice", p.Priority)
			}
		}
		if !(p.Share > 0 && p.Share <= 1) {
			return fmt.Errorf("priority %v: share %g, want one in (0, 1]", p.Priority, p.Share)
		}
		if p.Priority < -MaxPriority || p.Priority > MaxPriority {
			return fmt.Errorf("priority %d: want one within ±%d", p.Priority, MaxPriority)
		}
		sum += p.Share
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("priority shares sum to %g, more than 1", sum)
	}
	return nil
}

// Priority returns operation i's priority: the first share whose
// Beatty sequence takes i among the operations the shares before it left.
func (ps PriorityShares) Priority(i int) Priority {
	rest := 1.0 // the share of all operations the shares before left
	j := int64(i)
	for _, p := range ps {
		if rest-p.Share <= 1e-9 {
			return p.Priority // the last share takes all that is left
		}
		s := p.Share / rest
		taken := func(n int64) int64 { return int64(math.Floor(float64(n) * s)) }
		if taken(j+1) > taken(j) {
			return p.Priority
		}
		j -= taken(j)
		rest -= p.Share
	}
	return PriorityDefault
}

// Package sim is retrysim's discrete-event simulator: virtual time, a seeded
// burst of clients, a server model with changing capacity, and the client side
// of every operation driven by the policies package.
//
// A run is single-threaded and deterministic: the same Config gives the same
// Result on any machine. Time is a time.Duration since the run's origin;
// randomness comes only from math/rand/v2 PCG streams derived from the seed.
package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// Burst is a workload of Clients operations, one per client, starting at
// t = 0, or spread uniformly over [0, Spread) when Spread > 0.
type Burst struct {
	Clients int
	Spread  time.Duration
}

// Throttle configures a shared start-rate throttle: Count starts per Per.
type Throttle struct {
	Count    int
	Per      time.Duration
	MaxQueue int // 0 means unbounded
}

// Policy is one retry policy as the simulator runs it: the decision code from
// the policies package plus the shared coordination its clients use.
type Policy struct {
	Name   string
	Decide policies.Policy
	// Gate makes every client wait out any server-given retry-after.
	Gate bool
	// Throttle, if set, spaces every start of every client.
	Throttle *Throttle
}

func (p *Policy) coordinated() bool { return p.Gate || p.Throttle != nil }

// Config is everything one run needs.
type Config struct {
	Seed     uint64
	Server   *CapacityWindows
	Workload Burst
	Policy   Policy
	// OnRequest, if set, is told of every request as the server decides it:
	// its arrival time and whether it was admitted. It must not keep state
	// that depends on goroutine scheduling; runs call it from one goroutine.
	OnRequest func(at time.Duration, admitted bool)
	// Hooks, if set, are told of every retry scheduled and every give-up, as
	// policies.Do tells them in production. Their Err and Last fields are
	// nil (a simulated rejection is not a Go error), Elapsed is virtual time
	// since the client's start, and OnFallback is never called. Runs call
	// them from one goroutine, in event order.
	Hooks policies.Hooks
}

// Result is what one run measured.
type Result struct {
	Policy    string
	Clients   int
	Completed int
	// Attempts counts requests sent; Retries those that were not an
	// operation's first.
	Attempts int
	Retries  int
	GaveUp   int
	// GaveUpBy counts give-ups by policies.StopReason.
	GaveUpBy [policies.NumStopReasons]int
	// Latencies holds, sorted, the time from each completed operation's
	// start to its successful response.
	Latencies []time.Duration
	// LastCompletion is the time of the last successful response; 0 if none.
	LastCompletion time.Duration
	// Admitted and Rejected count the server's decisions.
	Admitted, Rejected int
	// Events is the number of events the engine processed.
	Events int
}

// Amplification is attempts per client.
func (r *Result) Amplification() float64 {
	if r.Clients == 0 {
		return 0
	}
	return float64(r.Attempts) / float64(r.Clients)
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of the
// completion latencies, and false when nothing completed.
func (r *Result) Percentile(p float64) (time.Duration, bool) {
	n := len(r.Latencies)
	if n == 0 {
		return 0, false
	}
	// Nearest rank: the smallest value with at least p% of values <= it.
	rank := int(float64(n) * p / 100)
	if float64(rank) < float64(n)*p/100 {
		rank++
	}
	rank = min(max(rank, 1), n)
	return r.Latencies[rank-1], true
}

// Validate checks a Config before it runs.
func (c *Config) Validate() error {
	if c.Server == nil {
		return errors.New("no server model")
	}
	if err := c.Server.Validate(); err != nil {
		return err
	}
	if c.Workload.Clients <= 0 {
		return fmt.Errorf("workload needs at least one client (got %d)", c.Workload.Clients)
	}
	if c.Workload.Clients > maxClients {
		return fmt.Errorf("workload has %d clients; at most %d are supported", c.Workload.Clients, maxClients)
	}
	if c.Workload.Spread < 0 {
		return fmt.Errorf("workload spread is negative (%v)", c.Workload.Spread)
	}
	d := c.Policy.Decide
	if d.Backoff == nil {
		return fmt.Errorf("policy %q has no backoff", c.Policy.Name)
	}
	if d.MaxAttempts <= 0 && d.Deadline <= 0 {
		// Against a server that never admits, the run would never end.
		return fmt.Errorf("policy %q needs max attempts or a deadline", c.Policy.Name)
	}
	if d.MaxAttempts <= 0 && c.Server.ResponseTime == Fixed(0) && d.Backoff == (policies.Constant{}) && !c.Policy.coordinated() {
		// Virtual time would never advance, so no deadline would ever pass.
		return fmt.Errorf("policy %q retries with no wait against a server that answers in no time: it needs max attempts", c.Policy.Name)
	}
	if t := c.Policy.Throttle; t != nil && (t.Count <= 0 || t.Per <= 0 || t.MaxQueue < 0) {
		return fmt.Errorf("policy %q: throttle needs count > 0, per > 0, max queue >= 0", c.Policy.Name)
	}
	return nil
}

const maxClients = 1<<31 - 1

// Random streams are derived from (seed, kind, id) so that adding a client or
// a policy leaves every other stream as it was.
const (
	streamPolicy uint64 = iota + 1 // one per client: the policy's draws
	streamStart                    // one per client: its start time
	streamServer                   // one per run: the server's draws
)

// newStream returns the PCG stream for (seed, kind, id).
func newStream(seed, kind, id uint64) rand.PCG {
	return *rand.NewPCG(splitmix(seed^splitmix(kind)), splitmix(id^splitmix(kind<<32)))
}

// splitmix is the SplitMix64 finaliser: it spreads nearby ids far apart.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// clientSource lets one rand.Rand draw from whichever client's PCG is current,
// so clients keep separate streams without a rand.Rand each.
type clientSource struct{ pcg *rand.PCG }

func (s *clientSource) Uint64() uint64 { return s.pcg.Uint64() }

// startTime returns client i's start: 0, or a draw from its own stream
// uniform over [0, spread) when spread > 0.
func startTime(seed, i uint64, spread time.Duration) time.Duration {
	if spread <= 0 {
		return 0
	}
	pcg := newStream(seed, streamStart, i)
	return time.Duration(rand.New(&pcg).Int64N(int64(spread)))
}

// client is one operation's state.
type client struct {
	pcg       rand.PCG
	start     time.Duration
	prevDelay time.Duration
	attempts  int32
	rejPhase  int32     // phase whose rejection the pending response carries
	next      eventKind // what the client's pending event does
}

// epoch maps virtual time onto time.Time for the shared coordinators.
var epoch = time.Unix(0, 0).UTC()

// Run simulates one policy against the server and workload of cfg.
func Run(cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	var r runner
	return r.run(&cfg)
}

// A Runner runs simulations one after another and reuses its working memory
// (client state and event queue) from run to run, which saves allocation
// and garbage collection when one goroutine runs many seeds. Each Result is
// the run's own. The zero Runner is ready to use; it is not safe for
// concurrent use.
type Runner struct{ r runner }

// Run simulates one policy against the server and workload of cfg, exactly
// as the function Run does.
func (x *Runner) Run(cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	res, err := x.r.run(&cfg)
	// Keep the buffers; drop everything that belongs to this run.
	x.r = runner{clients: x.r.clients[:0], q: queue{items: x.r.q.items[:0], buf: x.r.q.buf, fifo: x.r.q.fifo}}
	return res, err
}

type runner struct {
	cfg     *Config
	pol     *Policy
	clients []client
	q       queue
	server  *serverState
	src     clientSource
	rng     *rand.Rand
	gate    *policies.Gate
	thr     *policies.Throttle
	res     Result
	err     error // set when the run must stop, e.g. past the horizon
	// trace, if set (by tests only), is told of every event before it is
	// processed.
	trace func(at time.Duration, i int32, kind eventKind)
}

// Horizon bounds virtual time: a run that would schedule an event later
// than this fails instead of letting time.Duration overflow. About 11 years;
// it also bounds every sum of a time and a scenario duration (<= 1000 h).
const Horizon = 100_000 * time.Hour

func (r *runner) run(cfg *Config) (Result, error) {
	r.cfg, r.pol = cfg, &cfg.Policy
	n := r.cfg.Workload.Clients
	if cap(r.clients) >= n {
		r.clients = r.clients[:n]
		clear(r.clients)
	} else {
		r.clients = make([]client, n)
	}
	r.q.init(n, n)
	serverPCG := newStream(r.cfg.Seed, streamServer, 0)
	r.server = newServerState(r.cfg.Server, rand.New(&serverPCG))
	r.rng = rand.New(&r.src)
	if r.pol.Gate {
		r.gate = &policies.Gate{}
	}
	if t := r.pol.Throttle; t != nil {
		thr, err := policies.NewThrottle(t.Count, t.Per, t.MaxQueue)
		if err != nil {
			return Result{}, err
		}
		r.thr = thr
	}
	r.res = Result{Policy: r.pol.Name, Clients: n, Latencies: make([]time.Duration, 0, n)}

	first := evSend
	if r.pol.coordinated() {
		first = evReady
	}
	spread := r.cfg.Workload.Spread
	for i := range r.clients {
		c := &r.clients[i]
		c.pcg = newStream(r.cfg.Seed, streamPolicy, uint64(i))
		c.start = startTime(r.cfg.Seed, uint64(i), spread)
		// Start times are in order for a burst; pushInOrder takes any order.
		c.next = first
		r.q.pushInOrder(c.start, int32(i))
	}

	for r.q.len() > 0 && r.err == nil {
		at, i := r.q.pop()
		r.res.Events++
		if r.trace != nil {
			r.trace(at, i, r.clients[i].next)
		}
		switch r.clients[i].next {
		case evReady:
			r.ready(i, at)
		case evSend:
			if r.gate != nil && r.gate.Ready(epoch.Add(at)).Sub(epoch) > at {
				// A retry-after closed the gate since the slot was booked.
				r.ready(i, at)
				continue
			}
			r.send(i, at)
		case evResponse:
			r.respond(i, at)
		}
	}
	if r.err != nil {
		return Result{}, r.err
	}
	slices.Sort(r.res.Latencies)
	r.res.Retries = r.res.Attempts - r.firstAttempts()
	return r.res, nil
}

// schedule makes kind the pending event of client i, at time at. A client
// has at most one pending event.
func (r *runner) schedule(at time.Duration, i int32, kind eventKind) {
	if at > Horizon {
		r.err = fmt.Errorf("policy %q: virtual time would pass the simulator's horizon of %v (client %d, attempt %d); set a deadline or fewer attempts",
			r.pol.Name, Horizon, i, r.clients[i].attempts+1)
		return
	}
	r.clients[i].next = kind
	if kind == evResponse {
		// Sends happen in time order, so with a fixed response time the
		// responses are scheduled in time order too.
		r.q.pushInOrder(at, i)
		return
	}
	r.q.push(at, i)
}

func (r *runner) firstAttempts() int {
	n := 0
	for i := range r.clients {
		if r.clients[i].attempts > 0 {
			n++
		}
	}
	return n
}

// ready runs when a client of a coordinated policy wants to start an attempt:
// it waits for the gate, then books a throttle slot.
func (r *runner) ready(i int32, now time.Duration) {
	c := &r.clients[i]
	if r.gate != nil {
		if open := r.gate.Ready(epoch.Add(now)).Sub(epoch); open > now {
			if !r.pol.Decide.StartsInTime(open - c.start) {
				r.giveUp(i, now, policies.StopDeadline)
				return
			}
			r.schedule(open, i, evReady)
			return
		}
	}
	if r.thr != nil {
		var latest time.Time
		if d := r.pol.Decide.Deadline; d > 0 {
			latest = epoch.Add(c.start + d)
		}
		slot, err := r.thr.Reserve(epoch.Add(now), latest)
		switch {
		case errors.Is(err, policies.ErrQueueFull):
			r.giveUp(i, now, policies.StopQueueFull)
			return
		case err != nil:
			r.giveUp(i, now, policies.StopDeadline)
			return
		}
		if at := slot.Sub(epoch); at > now {
			r.schedule(at, i, evSend)
			return
		}
	}
	r.send(i, now)
}

// send delivers a client's attempt to the server.
func (r *runner) send(i int32, now time.Duration) {
	c := &r.clients[i]
	c.attempts++
	r.res.Attempts++
	admitted, _, at := r.server.arrive(now)
	if r.cfg.OnRequest != nil {
		r.cfg.OnRequest(now, admitted)
	}
	if admitted {
		r.res.Admitted++
		c.rejPhase = -1
	} else {
		r.res.Rejected++
		c.rejPhase = int32(r.server.phase)
	}
	r.schedule(at, i, evResponse)
}

// respond handles the response to a client's attempt.
func (r *runner) respond(i int32, now time.Duration) {
	c := &r.clients[i]
	if c.rejPhase < 0 {
		r.res.Completed++
		r.res.Latencies = append(r.res.Latencies, now-c.start)
		r.res.LastCompletion = max(r.res.LastCompletion, now)
		return
	}
	out := r.cfg.Server.Phases[c.rejPhase].Reject.Outcome()
	if r.gate != nil && out.Class == policies.RetryAfter && out.ServerWait > 0 {
		r.gate.Push(epoch.Add(now), out.ServerWait)
	}
	r.src.pcg = &c.pcg
	d := r.pol.Decide.Next(int(c.attempts), c.prevDelay, now-c.start, out, r.rng)
	if d.Stop != policies.NotStopped {
		r.giveUp(i, now, d.Stop)
		return
	}
	c.prevDelay = d.Delay
	if h := r.cfg.Hooks.OnRetryScheduled; h != nil {
		h(policies.RetryEvent{Attempt: int(c.attempts), Outcome: out, Delay: d.Delay})
	}
	kind := evSend
	if r.pol.coordinated() {
		kind = evReady
	}
	r.schedule(now+d.Delay, i, kind)
}

func (r *runner) giveUp(i int32, now time.Duration, reason policies.StopReason) {
	r.res.GaveUp++
	r.res.GaveUpBy[reason]++
	if h := r.cfg.Hooks.OnGiveUp; h != nil {
		c := &r.clients[i]
		e := &policies.Error{Reason: reason, Attempts: int(c.attempts), Elapsed: now - c.start}
		if c.attempts > 0 && c.rejPhase >= 0 {
			e.LastOutcome = r.cfg.Server.Phases[c.rejPhase].Reject.Outcome()
		}
		h(e)
	}
}

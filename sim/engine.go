package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
	"unsafe"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// operation is one operation's state in a run: 64 bytes, one cache line.
type operation struct {
	pcg   rand.PCG      // the policy's random stream
	start time.Duration // when the operation started
	op    machine.Op    // the retry state machine
	// The pending or last response's outcome, kept compact.
	wait   time.Duration
	status int32
	class  policies.Class
	next   eventKind // what the operation's pending event does
	cut    bool      // the pending response comes after the budget: the attempt is cut there
}

// newOperations returns n zeroed operations starting on a 64-byte boundary,
// so that each one fills exactly one cache line: an event then touches one
// line of operation state, not two. (Large allocations are page-aligned in
// today's runtime anyway; this makes it a guarantee.) It allocates one
// operation of slack and starts the slice up to 56 bytes into it, which is
// sound only because an operation holds no pointers (TestOperationLayout).
func newOperations(n int) []operation {
	buf := make([]operation, n+1)
	base := unsafe.Pointer(&buf[0])
	pad := (cacheLine - uintptr(base)%cacheLine) % cacheLine
	return unsafe.Slice((*operation)(unsafe.Add(base, pad)), n)
}

const cacheLine = 64

func (o *operation) outcome() policies.Outcome {
	return policies.Outcome{Class: o.class, Status: int(o.status), ServerWait: o.wait}
}

// epoch maps virtual time onto time.Time for the coordinators.
var epoch = time.Unix(0, 0).UTC()

// Horizon bounds virtual time: a run that would schedule an event later
// than this fails instead of letting time.Duration overflow. About 11 years;
// it also bounds every sum of a time and a scenario duration (<= 1000 h).
const Horizon = 100_000 * time.Hour

// Stall guard: a run fails once it has processed more than
// stallPerOp·operations + stallBase events without virtual time advancing
// (zero waits against a server that answers in no time would never end).
const (
	stallPerOp = 1000
	stallBase  = 1_000_000
)

// pollEvery is how many events pass between looks at the run's context.
const pollEvery = 1 << 14

type runner struct {
	cfg  *Config
	plan machine.Plan
	// plans, with a ProcessSplit workload, has the plans of the processes
	// that have an operation: operation i uses plans[i % procs], so with
	// fewer operations than processes only the first get one. nil otherwise:
	// every operation uses plan.
	plans []machine.Plan
	procs int
	// fixed, with a workload some of whose operations run a policy of
	// their own (client groups), holds those policies' plans, and choose
	// says which operation runs which (-1: the run's).
	fixed   []machine.Plan
	choose  policyChooser
	ops     []operation
	waiters []waiter // only for policies with a blocking coordinator
	q       queue
	server  Server
	decider Decider // the server, if it decides some requests later
	// limits is the server, if it reports rate limits and a coordinator of
	// the policy reads them; lim holds what it reported for the response
	// being handled.
	limits LimitReporter
	lim    policies.RateLimits
	src    pcgSource
	rng    *rand.Rand
	res    Result
	err    error // set when the run must stop, e.g. past the horizon
	// Optional workload parts (nil for a burst): drawn start times, the
	// chain that starts operations when others end, request sizes, and the
	// workload stream they draw from.
	starts  []time.Duration
	chain   Chain
	sizer   TokenSizer
	prio    Prioritizer
	lv      *levels // the counts by priority, with a prio
	wrng    *rand.Rand
	started int // operations started so far, with a chain
	// rec counts what the recovery metrics need, when the run has an
	// incident (Config.Incident); nil otherwise.
	rec *recoveryRecorder
	// relayed: the server sends requests of its own (Relay), and the run
	// counts those (meter) instead of what it sends.
	relayed bool
	// trace, if set (by tests only), is told of every event before it is
	// processed.
	trace func(at time.Duration, i int32, kind eventKind)
	// hedges holds each operation's copies, for a policy that hedges;
	// nil otherwise (hedge.go).
	hedges      []hedgeState
	hedgeCopies []hedgeCopy // the copies of every hedges[i]
	// faults counts the faulted streams the run met, stalled those the
	// watchdog ended, faultEvents the content they sent (streamfaults.go).
	faults, stalled, faultEvents int64
	// watchdog is the policy's stream watchdog, read once per run: a
	// healthy stream is watched only when it is on.
	watchdog machine.Watchdog
}

// waiter wakes operation i of a run when a coordinator (the in-flight
// limiter) lets it go: it schedules the operation's next Before.
type waiter struct {
	r *runner
	i int32
}

func (w *waiter) Wake(now time.Time, granted bool) {
	o := &w.r.ops[w.i]
	o.op.Woken(granted)
	w.r.schedule(now.Sub(epoch), w.i, evReady)
}

func (r *runner) run(ctx context.Context, cfg *Config) (Result, error) {
	r.cfg = cfg
	plan, err := cfg.Policy.Plan(cfg.Hooks)
	if err != nil {
		return Result{}, err
	}
	r.plan = plan
	r.watchdog = plan.Policy.Watchdog()
	r.plans, r.procs = nil, 1
	if split, ok := cfg.Workload.(ProcessSplit); ok && split.ClientProcesses() > 1 {
		if r.procs = split.ClientProcesses(); r.procs > MaxProcesses {
			return Result{}, fmt.Errorf("workload splits operations over %d client processes; at most %d are supported", r.procs, MaxProcesses)
		}
	}
	n := cfg.Workload.Operations()
	r.chain, r.sizer, r.wrng = nil, nil, nil
	drawer, drawn := cfg.Workload.(StartDrawer)
	chained, isChained := cfg.Workload.(Chained)
	if drawn || isChained {
		workloadPCG := newStream(cfg.Seed, streamWorkload, 0)
		r.wrng = rand.New(&workloadPCG)
	}
	if drawn {
		r.starts = drawer.DrawStarts(r.wrng, r.starts[:0])
		if n = len(r.starts); n > MaxOperations {
			return Result{}, fmt.Errorf("workload drew %d operations; at most %d are supported", n, MaxOperations)
		}
	}
	leaders := n
	if isChained {
		r.chain = chained.NewChain()
		leaders = min(r.chain.Leaders(), n)
		r.started = leaders
	}
	if s, ok := r.chain.(TokenSizer); ok {
		r.sizer = s
	} else if s, ok := cfg.Workload.(TokenSizer); ok {
		r.sizer = s
	}
	if p, ok := r.chain.(Prioritizer); ok {
		r.prio = p
	} else if p, ok := cfg.Workload.(Prioritizer); ok {
		r.prio = p
	} else if len(cfg.Priorities) > 0 {
		r.prio = cfg.Priorities
	}
	r.lv = newLevels(r.prio)
	if err := r.planFixed(cfg); err != nil {
		return Result{}, err
	}
	if r.procs > 1 {
		// A plan holds no randomness: building only those of processes
		// with an operation changes nothing else in the run.
		r.plans = make([]machine.Plan, min(r.procs, n))
		for c := range r.plans {
			if r.plans[c], err = cfg.Policy.Plan(cfg.Hooks); err != nil {
				return Result{}, err
			}
		}
	}
	if cap(r.ops) >= n {
		r.ops = r.ops[:n]
		clear(r.ops)
	} else {
		r.ops = newOperations(n)
	}
	r.waiters = nil
	if cfg.Policy.Queues() || r.fixedAny(cfg, func(p *Policy, _ *machine.Plan) bool { return p.Queues() }) {
		r.waiters = make([]waiter, n)
		for i := range r.waiters {
			r.waiters[i] = waiter{r: r, i: int32(i)}
		}
	}
	r.q.init(n, n)
	if cfg.maxSeq > 0 {
		r.q.maxSeq = min(r.q.maxSeq, cfg.maxSeq)
	}
	serverPCG := newStream(cfg.Seed, streamServer, 0)
	r.server = cfg.Server.NewServer(rand.New(&serverPCG))
	r.decider, _ = r.server.(Decider)
	r.relayed = false
	if rl, ok := r.server.(Relay); ok {
		rl.Relay(meter{r})
		r.relayed = true
	}
	if err := r.initHedges(n); err != nil {
		return Result{}, err
	}
	r.limits = nil
	if lr, ok := ServerAs[LimitReporter](r.server); ok && (r.plan.ObservesLimits() || r.fixedAny(cfg, func(_ *Policy, p *machine.Plan) bool { return p.ObservesLimits() })) {
		r.limits = lr // worked out only for a policy that reads them
	}
	r.rng = rand.New(&r.src)
	r.rec = nil
	r.faults, r.stalled, r.faultEvents = 0, 0, 0
	if cfg.Incident != (Incident{}) {
		r.rec = newRecoveryRecorder(cfg.Incident, cfg.Server)
	}
	r.res = Result{Policy: cfg.Policy.Name, Clients: n, Latencies: make([]time.Duration, 0, n)}

	var startPCG rand.PCG
	startRng := rand.New(&pcgSource{&startPCG})
	for i := range r.ops {
		o := &r.ops[i]
		o.pcg = newStream(cfg.Seed, streamPolicy, uint64(i))
		o.op.Start(r.planOf(int32(i)))
		o.next = evReady
		if i >= leaders {
			continue // started by the chain
		}
		if drawn {
			o.start = r.starts[i]
		} else {
			startPCG = newStream(cfg.Seed, streamStart, uint64(i))
			o.start = cfg.Workload.Start(i, startRng)
		}
		// Start times are in order for a burst; pushInOrder takes any order.
		r.q.pushInOrder(o.start, int32(i))
	}

	stallLimit := stallPerOp*n + stallBase
	var stallAt time.Duration
	stalled := 0
	for (r.q.len() > 0 || len(r.q.detached) > 0) && r.err == nil {
		var at time.Duration
		var i, ticket int32
		detached := len(r.q.detached) > 0 && r.q.detachedFirst()
		if detached {
			at, i, ticket = r.q.popDetached()
		} else {
			at, i = r.q.pop()
			// With many operations, the state of the next event's operation
			// is usually not in the cache: ask for it now, so that it arrives
			// while this event is processed instead of stalling the next one.
			if j, ok := r.q.peek(); ok {
				prefetch(unsafe.Pointer(&r.ops[j]))
			}
		}
		r.res.Events++
		if at != stallAt {
			stallAt, stalled = at, 0
		} else if stalled++; stalled > stallLimit {
			return Result{}, fmt.Errorf("policy %q: virtual time stopped at %v for %d events: the policy retries with no wait against a server that answers in no time; give it max attempts or a wait", cfg.Policy.Name, at, stalled)
		}
		if r.res.Events%pollEvery == 0 {
			if err := ctx.Err(); err != nil {
				return Result{}, err
			}
			if r.cfg.OnProgress != nil {
				r.cfg.OnProgress(r.res.Events)
			}
		}
		if detached {
			if r.trace != nil {
				r.trace(at, i, evDetached)
			}
			r.decideDetached(at, i, ticket)
			continue
		}
		if r.trace != nil {
			r.trace(at, i, r.ops[i].next)
		}
		switch r.ops[i].next {
		case evReady:
			r.ready(i, at)
		case evResponse:
			r.respond(i, at)
		case evDecide:
			r.decide(i, at)
		case evHedge:
			r.hedgeEvent(i, at)
		}
	}
	if r.err != nil {
		return Result{}, r.err
	}
	slices.Sort(r.res.Latencies)
	slices.Sort(r.res.GiveUps)
	r.res.Retries = r.res.Attempts - r.firstAttempts()
	reportCounters(r.server, &r.res.Counters)
	r.reportHedges()
	r.reportStreams()
	if r.chain != nil {
		r.res.Clients = r.started
		if s, ok := r.chain.(CounterReporter); ok {
			s.ReportCounters(&r.res.Counters)
		}
	}
	r.res.ByPriority = r.lv.finish(r.ops, r.res.Clients, cfg.Policy.Name)
	if r.rec != nil {
		// Operations start in index order: the first Clients have started.
		if drawn {
			for _, at := range r.starts { // 8 bytes each, not an operation's 64
				r.rec.start(at)
			}
		} else {
			for i := range r.res.Clients {
				r.rec.start(r.ops[i].start)
			}
		}
		r.res.Recovery = r.rec.result()
	}
	return r.res, nil
}

// schedule makes kind the pending event of operation i, at time at. An
// operation has at most one pending event.
func (r *runner) schedule(at time.Duration, i int32, kind eventKind) {
	if at > Horizon {
		r.err = fmt.Errorf("policy %q: virtual time would pass the simulator's horizon of %v (client %d, attempt %d); set a deadline or fewer attempts",
			r.cfg.Policy.Name, Horizon, i, r.ops[i].op.Attempts()+1)
		return
	}
	r.ops[i].next = kind
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
	for i := range r.ops {
		if r.ops[i].op.Attempts() > 0 {
			n++
		}
	}
	return n
}

// planOf returns the plan of operation i: its process's, with a
// ProcessSplit workload.
func (r *runner) planOf(i int32) *machine.Plan {
	if r.choose != nil {
		if k := r.choose.PolicyOf(int(i)); k >= 0 {
			return &r.fixed[k]
		}
	}
	if r.plans == nil {
		return &r.plan
	}
	return &r.plans[int(i)%r.procs]
}

// moment is the Op's view of time for operation o at virtual time now.
func moment(o *operation, now time.Duration) machine.Moment {
	return machine.Moment{Now: epoch.Add(now), Since: now - o.start}
}

// momentOf is operation i's moment, with the hedges it sent.
func (r *runner) momentOf(i int32, now time.Duration) machine.Moment {
	m := moment(&r.ops[i], now)
	if r.hedges != nil {
		m.Hedges = int(r.hedges[i].hedges)
	}
	return m
}

func (r *runner) waiter(i int32) machine.Waiter {
	if r.waiters == nil {
		return nil
	}
	return &r.waiters[i]
}

// ready asks operation i's state machine whether it may send now.
func (r *runner) ready(i int32, now time.Duration) {
	o := &r.ops[i]
	r.src.pcg = &o.pcg
	m := moment(o, now)
	if r.sizer != nil {
		m.InputTokens, m.OutputTokens = r.sizer.Tokens(int(i))
	}
	st := o.op.Before(r.planOf(i), m, r.waiter(i), r.rng)
	switch st.Kind {
	case machine.StepSend:
		r.send(i, now)
	case machine.StepWait:
		r.res.Waited += st.Delay
		r.schedule(now+st.Delay, i, evReady)
	case machine.StepStop:
		r.giveUp(i, now, st)
	case machine.StepBlock:
		// The coordinator wakes it (waiter.Wake).
	}
}

// send delivers operation i's attempt to the server.
func (r *runner) send(i int32, now time.Duration) {
	if r.hedges != nil {
		r.sendHedged(i, now)
		return
	}
	r.sendTo(i, now, r.attemptEnd(i, now))
}

// attemptEnd is when operation i's attempt sent at now times out; 0 for
// never.
func (r *runner) attemptEnd(i int32, now time.Duration) time.Duration {
	if t := r.planOf(i).Policy.AttemptTimeout; t > 0 {
		return now + t
	}
	return 0
}

// sendTo delivers operation i's attempt to the server; its client stops
// waiting at giveUp (0: never) or at the end of its budget, whichever
// comes first.
func (r *runner) sendTo(i int32, now, giveUp time.Duration) {
	req := r.requestUntil(i, giveUp)
	if !r.relayed {
		meter{r}.Sent(now, int(i), req.Retry)
	}
	giveUp = req.GiveUpAt
	resp := r.server.Arrive(now, req)
	if resp.Stream != nil || resp.Events > 0 && r.watchdog.On() {
		r.watch(now, giveUp, &resp)
	}
	if resp.Pending {
		r.pend(i, resp, giveUp)
		return
	}
	r.deliver(i, now, resp, giveUp)
}

// pend waits for the server's decision on operation i's pending request
// (resp, from Arrive or Decide), whose client stops waiting at giveUp.
func (r *runner) pend(i int32, resp Response, giveUp time.Duration) {
	o := &r.ops[i]
	if giveUp > 0 && resp.At > giveUp {
		// The client stops waiting before the server decides: its attempt
		// ends at giveUp; the server decides anyway, at resp.At.
		if resp.At > Horizon {
			r.schedule(resp.At, i, evDecide) // fails the run, as any event past the horizon
			return
		}
		r.q.pushDetached(resp.At, i, resp.Ticket)
		r.await(i, policies.Outcome{Class: policies.Transient}, resp.At, giveUp)
		return
	}
	// The server decides at resp.At (see Decider). Until then the
	// operation's outcome fields, unused while a request is out, hold
	// the request's ticket and when its client stops waiting.
	o.status, o.wait = resp.Ticket, giveUp
	r.schedule(resp.At, i, evDecide)
}

// request is operation i's attempt sent at now, as the server sees it.
func (r *runner) request(i int32, now time.Duration) Request {
	return r.requestUntil(i, r.attemptEnd(i, now))
}

// requestUntil is operation i's attempt whose client stops waiting at
// timeout (0: never) or at the end of its budget, whichever comes first.
func (r *runner) requestUntil(i int32, timeout time.Duration) Request {
	o := &r.ops[i]
	giveUp, budgetEnd := timeout, r.budgetEnd(i)
	if budgetEnd > 0 && (giveUp == 0 || budgetEnd < giveUp) {
		giveUp = budgetEnd
	}
	req := Request{Fallback: o.op.OnFallback(), GiveUpAt: giveUp, Op: int(i), Retry: o.op.Attempts() > 1, RetryOf: o.class}
	if r.sizer != nil {
		req.InputTokens, req.OutputTokens = r.sizer.Tokens(int(i))
	}
	if r.prio != nil {
		req.Priority = r.prio.Priority(int(i))
	}
	return req
}

// budgetEnd is when operation i's budget (deadline) ends; 0 for none.
func (r *runner) budgetEnd(i int32) time.Duration {
	if d := r.planOf(i).Policy.Deadline; d > 0 {
		return r.ops[i].start + d
	}
	return 0
}

// decide asks the server for its decision on operation i's pending
// request, at the time it named.
func (r *runner) decide(i int32, now time.Duration) {
	o := &r.ops[i]
	if r.decider == nil {
		r.err = r.cannotDecide()
		return
	}
	resp := r.decider.Decide(now, o.status)
	if resp.Pending {
		r.pend(i, resp, o.wait)
		return
	}
	r.deliver(i, now, resp, o.wait)
}

// deliver schedules the server's response resp, decided at now, to
// operation i's attempt, whose client stops waiting at giveUp (0: never).
func (r *runner) deliver(i int32, now time.Duration, resp Response, giveUp time.Duration) {
	r.decided(now, i, resp.Outcome.Class, giveUp > 0 && resp.At > giveUp)
	r.await(i, resp.Outcome, resp.At, giveUp)
}

// decideDetached makes the decision the server owes operation i's request
// ticket, whose client has stopped waiting: it counts, and reaches no
// client.
func (r *runner) decideDetached(at time.Duration, i, ticket int32) {
	if r.decider == nil {
		r.err = r.cannotDecide()
		return
	}
	resp := r.decider.Decide(at, ticket)
	if resp.Pending {
		if resp.At > Horizon {
			r.err = fmt.Errorf("server model %T: a decision would pass the simulator's horizon of %v", r.cfg.Server, Horizon)
			return
		}
		r.q.pushDetached(resp.At, i, resp.Ticket)
		return
	}
	r.decided(at, i, resp.Outcome.Class, true)
}

// cannotDecide is the error of a run whose server left a request pending
// without a way to decide it.
func (r *runner) cannotDecide() error {
	return fmt.Errorf("server model %T left a request pending but cannot decide it (no Decide method)", r.cfg.Server)
}

// await schedules the outcome out, reaching operation i's client at at,
// unless the client stops waiting first (at giveUp; 0: never).
func (r *runner) await(i int32, out policies.Outcome, at, giveUp time.Duration) {
	o := &r.ops[i]
	switch {
	case giveUp > 0 && at > giveUp && giveUp == r.budgetEnd(i):
		// The budget ends first: the client stops waiting there (as
		// policies.Do's attempt context ends), though the server did the work.
		at, o.cut = giveUp, true
	case giveUp > 0 && at > giveUp:
		// The attempt times out: a transient failure, retried as any other.
		at, out = giveUp, policies.Outcome{Class: policies.Transient}
	}
	o.class, o.status, o.wait = out.Class, int32(out.Status), out.ServerWait
	r.schedule(at, i, evResponse)
}

// decided counts the server's decision on operation i's attempt and tells
// the hooks; late says the client stops waiting before the answer.
func (r *runner) decided(now time.Duration, i int32, class policies.Class, late bool) {
	if !r.relayed {
		meter{r}.Decided(now, int(i), class, late)
	}
}

// meter counts the requests that reach the server: the run's own, or
// those of a server that relays them (Relay).
type meter struct{ r *runner }

func (m meter) Sent(now time.Duration, op int, retry bool) {
	m.r.countSent(op)
	if f := m.r.cfg.Observer.OnSend; f != nil {
		f(now, op, retry)
	}
}

func (m meter) Decided(now time.Duration, op int, class policies.Class, late bool) {
	r := m.r
	r.res.decided(class)
	if l := r.lv.of(op); l != nil {
		l.decided(class)
	}
	if f := r.cfg.Observer.OnDecision; f != nil {
		f(now, op, class)
	}
	if f := r.cfg.Observer.OnWasted; f != nil && late && class == policies.Success {
		f(now, op)
	}
}

// countSent counts an attempt of operation op.
func (r *runner) countSent(op int) {
	r.res.sent()
	if l := r.lv.of(op); l != nil {
		l.sent()
	}
}

func (m meter) Later(at time.Duration, op int, ticket int32) {
	if at > Horizon {
		m.r.err = fmt.Errorf("server model %T: a decision would pass the simulator's horizon of %v", m.r.cfg.Server, Horizon)
		return
	}
	m.r.q.pushDetached(at, int32(op), ticket)
}

// respond handles the response to operation i's attempt.
func (r *runner) respond(i int32, now time.Duration) {
	o := &r.ops[i]
	r.src.pcg = &o.pcg
	if f := r.cfg.Observer.OnResponse; f != nil {
		class := o.class
		if o.cut {
			class = policies.Transient // the client stopped waiting
		}
		f(now, int(i), class)
	}
	if o.cut {
		o.cut = false
		o.class, o.status, o.wait = policies.Transient, 0, 0 // a timeout, as Do classifies it
		r.giveUp(i, now, o.op.Expire(r.planOf(i), r.momentOf(i, now)))
		return
	}
	r.conclude(i, now)
}

// conclude gives the outcome of operation i's attempt, in its outcome
// fields, to the operation's retry state machine, at now.
func (r *runner) conclude(i int32, now time.Duration) {
	o := &r.ops[i]
	if o.class == policies.Success {
		r.res.completed(now-o.start, now)
		if l := r.lv.of(int(i)); l != nil {
			l.completed(now-o.start, now)
		}
		if r.rec != nil {
			r.rec.complete(now)
		}
		if f := r.cfg.Observer.OnComplete; f != nil {
			f(now, int(i))
		}
		o.op.After(r.planOf(i), r.momentOf(i, now), r.withLimits(policies.Outcome{}, now), false, nil, r.rng)
		if r.chain != nil {
			r.follow(i, now, true)
		}
		return
	}
	was := o.op.OnFallback()
	st := o.op.After(r.planOf(i), r.momentOf(i, now), r.withLimits(o.outcome(), now), true, nil, r.rng)
	if !was && o.op.OnFallback() {
		r.res.Fallbacks++
		if l := r.lv.of(int(i)); l != nil {
			l.Fallbacks++
		}
	}
	if st.Kind == machine.StepStop {
		r.giveUp(i, now, st)
		return
	}
	r.res.Waited += st.Delay
	r.schedule(now+st.Delay, i, evReady)
}

// withLimits adds to out what the server's rate-limit headers say at now,
// if it reports them and out is a response (a success or a status: not a
// timeout, which gets no headers).
func (r *runner) withLimits(out policies.Outcome, now time.Duration) policies.Outcome {
	if r.limits == nil || out.Class != policies.Success && out.Status == 0 {
		return out
	}
	var ok bool
	if r.lim, ok = r.limits.RateLimits(now); ok {
		out.Limits = &r.lim
	}
	return out
}

func (r *runner) giveUp(i int32, now time.Duration, st machine.Step) {
	r.res.gaveUp(st.Reason, now-r.ops[i].start)
	if l := r.lv.of(int(i)); l != nil {
		l.gaveUp(st.Reason, now-r.ops[i].start)
	}
	if r.rec != nil {
		r.rec.end(now)
	}
	if f := r.cfg.Observer.OnGiveUp; f != nil {
		f(now, int(i), st.Reason)
	}
	if r.plan.Hooks.OnGiveUp != nil {
		o := &r.ops[i]
		var last policies.Outcome
		if o.op.Attempts() > 0 {
			last = o.outcome()
		}
		o.op.GiveUp(r.planOf(i), st, now-o.start, nil, last)
	}
	if r.chain != nil {
		r.follow(i, now, false)
	}
}

// follow tells the chain that operation i ended at now and starts the
// operation it names, if any.
func (r *runner) follow(i int32, now time.Duration, completed bool) {
	next, start, ok := r.chain.Next(int(i), now, completed, r.wrng)
	if !ok {
		return
	}
	if next != r.started || next >= len(r.ops) || start < now {
		r.err = fmt.Errorf("workload chain: after operation %d ended at %v it named operation %d at %v; want operation %d (of %d), at %v or later",
			i, now, next, start, r.started, len(r.ops), now)
		return
	}
	r.started++
	r.ops[next].start = start
	r.schedule(start, int32(next), evReady)
}

package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// MaxValidateClients bounds the clients of a validation: each is a
// goroutine making real HTTP requests.
const MaxValidateClients = 10_000

// Model names the validation's clients ask for; the fallback one is what
// the server model treats as the fallback (sim.Request.Fallback).
const (
	PrimaryModel  = "retrysim-primary"
	FallbackModel = "retrysim-fallback"
)

// Validation runs a scenario twice per policy, in the simulator and for
// real (a Handler serving the model on the real clock, the clients as
// goroutines making HTTP requests through policies.Do), and compares what
// each measured.
type Validation struct {
	Model    sim.ServerModel
	Workload sim.Workload
	Policies []sim.Policy
	// Priorities give the workload's operations priorities by share, as
	// in the simulation (sim.Config.Priorities); each real client sends
	// its operation's in PriorityHeader.
	Priorities sim.PriorityShares
	Seed       uint64
	// Speed runs the real run this many times faster than model time
	// (at most MaxSpeed): every duration of the model and the policies is
	// divided by it on the real clock, and what is measured is multiplied
	// back. 0 picks DefaultSpeed, or less so that the real run sends at
	// most MaxRealRate requests a second (see AutoSpeed).
	Speed float64
	// Connect, if set, serves a policy's handler and returns the base URL
	// and transport that reach it, and a function that stops serving. nil
	// serves each policy on a free loopback port (a Server), over HTTP/2
	// without TLS so that thousands of clients share a few connections.
	// InMemory serves it without a network, e.g. in a synctest bubble.
	Connect func(h *Handler) (baseURL string, rt http.RoundTripper, stop func(), err error)
	// OnPolicy, if set, is told before each policy's real run starts.
	OnPolicy func(i int, p sim.Policy)
	// Do, if set, is the production loop the real clients run in place
	// of policies.Do, such as an attempt log's (attemptlog.Log.Do).
	Do func(ctx context.Context, op policies.Operation, opts ...policies.Option) error

	stream bool // the clients stream, to get the model's mid-stream failures as it makes them
}

// Comparison is one policy's simulated and measured results.
type Comparison struct {
	Policy string
	// Randomised is true when the policy's waits draw random numbers; its
	// checks are looser (see Tolerances).
	Randomised bool
	Simulated  sim.Result
	Measured   sim.Result
	Checks     []Check
	// RealTime is how long the real run took on the real clock.
	RealTime time.Duration
	// Speed is the speed of the real run.
	Speed float64
	// Lateness holds, sorted, how late each client that sent a request ran
	// on the real clock, in real time: its start, plus what each of its
	// requests took beyond the model's answer time.
	Lateness []time.Duration
}

// Agree reports whether every check agrees.
func (c *Comparison) Agree() bool {
	for _, ch := range c.Checks {
		if !ch.Agree {
			return false
		}
	}
	return true
}

// RanLate reports whether the median client ran later on the real clock
// than LatencyFloor allows for its attempts: the machine was too busy for
// a fair comparison.
func (c *Comparison) RanLate() bool {
	if c.Simulated.Clients == 0 {
		return false
	}
	k := math.Ceil(float64(c.Simulated.Attempts) / float64(c.Simulated.Clients))
	return float64(lateQuantile(c.Lateness, 50)) > float64(LatencyFloor.Late)*k
}

// Check compares one metric.
type Check struct {
	Metric string
	// Simulated and Measured are the metric's values: counts, or
	// milliseconds of model time for latencies.
	Simulated, Measured float64
	// Tolerance is the largest difference that agrees, in the metric's unit.
	Tolerance float64
	Agree     bool
}

// Tolerance is the floor of how far a measured metric may be from the
// simulated one: a count agrees within max(Abs, Rel·reference), the
// reference being the clients for completions and give-ups and the
// simulated attempts for attempts and retries; a latency within
// Rel·simulated plus Late·speed·k, k being the simulated attempts per
// client rounded up. On top of the floor come the metric's spread across
// seeds and, for latencies, the lateness measured (see compare).
type Tolerance struct {
	Abs, Rel float64
	// Late is the real time an attempt may run late, for latencies.
	Late time.Duration
}

// The floors of validation: real scheduling makes every real wait a
// little late (timers, goroutines, the loopback network: 2 to 5 ms per
// attempt on a loaded 2-core machine, 10 ms allowed), so a client can land
// in the next admission window, or a later throttle slot, and take another
// path from there.
var (
	// Completions and give-ups by reason: within 1 client.
	CountFloor = Tolerance{Abs: 1}
	// Attempts and retries: within 2% of the simulated attempts, at least 1.
	SendFloor = Tolerance{Abs: 1, Rel: 0.02}
	// Latencies: within 2% plus 10 ms of real time per attempt.
	LatencyFloor = Tolerance{Rel: 0.02, Late: 10 * time.Millisecond}
)

// The rest of the rule.
const (
	// SpreadSeeds is how many seeds (Seed, Seed+1, ...) the simulator runs
	// to measure how much each metric varies from seed to seed.
	SpreadSeeds = 20
	// SpreadZ is how many standard deviations of that spread a metric may
	// differ by, on top of its floor: a real run that took another path is
	// at worst like a run with another seed.
	SpreadZ = 4
	// DefaultSpeed is the speed of a validation that names none.
	DefaultSpeed = 3
	// MaxRealRate bounds the requests a second that a validation at the
	// default speed sends on the real clock: a 2-core machine serves it
	// with its goroutines, client and server, waking a few milliseconds
	// late at most.
	MaxRealRate = 500
)

// Validate runs every policy, first in the simulator (on SpreadSeeds
// seeds), then for real, one after another, and compares them. It fails
// for a workload of more than MaxValidateClients operations, a bad speed,
// or a simulation that fails; the comparisons say whether the runs agree.
func Validate(ctx context.Context, v Validation) ([]Comparison, error) {
	if v.Model == nil || v.Workload == nil {
		return nil, errors.New("validate: no server model or workload")
	}
	if !(v.Speed >= 0) || v.Speed > MaxSpeed {
		return nil, fmt.Errorf("validate: speed must be > 0 and at most %d, got %v", MaxSpeed, v.Speed)
	}
	if err := v.Workload.Validate(); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	if err := CanValidate(v.Model, v.Workload); err != nil {
		return nil, err
	}
	for _, p := range v.Policies {
		if c := control(p); c != "" {
			return nil, &UnsupportedError{Command: "validate", What: fmt.Sprintf(
				"the %s policy uses %s, which validate's real clients do not run yet (they run the gate, throttle, in-flight limit, pacer, reset gate and fallback)", p.Name, c)}
		}
	}
	starts := sim.StartTimes(v.Seed, v.Workload)
	if n := len(starts); n > MaxValidateClients {
		return nil, &TooManyClientsError{Clients: n}
	}
	seeds := make([][]sim.Result, len(v.Policies)) // [policy][seed]; seed 0 is v.Seed
	for i, p := range v.Policies {
		for k := range uint64(SpreadSeeds) {
			r, err := sim.RunContext(ctx, sim.Config{Seed: v.Seed + k, Server: v.Model, Workload: v.Workload, Policy: p, Priorities: v.Priorities})
			if err != nil {
				return nil, err
			}
			seeds[i] = append(seeds[i], r)
		}
	}
	speed := v.Speed
	if speed == 0 {
		speed = AutoSpeed(starts, seeds)
	}
	var out []Comparison
	for i, p := range v.Policies {
		if v.OnPolicy != nil {
			v.OnPolicy(i, p)
		}
		began := time.Now()
		measured, lateness, err := v.measure(ctx, p, starts, speed)
		if err != nil {
			return nil, fmt.Errorf("validate: policy %q: %w", p.Name, err)
		}
		c := Comparison{Policy: p.Name, Randomised: machine.Randomised(p.Rules), Simulated: seeds[i][0], Measured: measured,
			RealTime: time.Since(began), Speed: speed, Lateness: lateness}
		_, chained := v.Workload.(sim.Chained)
		c.Checks = compare(&c, seeds[i], p.Fallback != nil, chained)
		out = append(out, c)
	}
	return out, nil
}

// AutoSpeed is the default speed of a validation: DefaultSpeed, or less
// so that no policy's run sends more than MaxRealRate requests a second on
// the real clock, on average over its simulated span (from 0 to its last
// start or completion, at least a second).
func AutoSpeed(starts []time.Duration, seeds [][]sim.Result) float64 {
	speed := float64(DefaultSpeed)
	var lastStart time.Duration
	if len(starts) > 0 {
		lastStart = slices.Max(starts)
	}
	for _, rs := range seeds {
		if len(rs) == 0 {
			continue
		}
		r := rs[0]
		span := max(lastStart, r.LastCompletion, time.Second).Seconds()
		if rate := float64(r.Attempts) / span; rate*speed > MaxRealRate {
			speed = MaxRealRate / rate
		}
	}
	if speed < DefaultSpeed { // two significant digits, rounded down, for a readable heading
		tens := math.Pow(10, 1-math.Floor(math.Log10(speed)))
		speed = math.Floor(speed*tens) / tens
	}
	return speed
}

// CanValidate says whether validation can run a model and a workload for
// real: each operation is one client (goroutine) with its start time, all
// sharing one retry layer, against a server that answers each request as
// it arrives; an operation of a workload whose operations start when
// others end (sim.Chained: closed loops, agent sessions) starts when the
// real one before it ends; a request the workload sizes (sim.TokenSizer,
// its Chain's first) tells the served model its size. It refuses, with
// an *UnsupportedError, a workload dealt to several client processes
// (sim.ProcessSplit), a server model
// that decides requests later (sim.Decider), and one with stream faults
// (sim.HasStreamFaults): validate's clients do not read streams event by
// event.
func CanValidate(model sim.ServerModel, w sim.Workload) error {
	refuse := func(what string) error {
		return &UnsupportedError{Command: "validate", What: what +
			"; validate runs one client per operation, from its start time, against a server that answers each request as it arrives"}
	}
	if sim.HasStreamFaults(model) {
		return refuse("the " + kindName(model) + " server model has stream faults, which show only to clients that read a stream event by event")
	}
	if p, ok := w.(sim.ProcessSplit); ok && p.ClientProcesses() > 1 {
		return refuse(fmt.Sprintf("the workload deals operations to %d client processes, each with its own retry layer", p.ClientProcesses()))
	}
	if sim.DecidesLater(model) {
		return refuse("the " + kindName(model) + " server model decides requests after they arrive")
	}
	return nil
}

// control names the first control of a policy that validate's clients do
// not run; "" if none.
func control(p sim.Policy) string {
	if p.Rules.Watchdog().On() {
		return "a stream watchdog"
	}
	if _, hedges := p.MaxHedges(); hedges {
		return "hedging" // its clients count one request at a time
	}
	if len(p.Layers) > 0 {
		return "retry layers inside its own"
	}
	for _, s := range p.Coordinators {
		if _, ok := s.(machine.Rescaler); !ok {
			return kinds.CoordinatorNoun(s)
		}
	}
	return ""
}

// UnsupportedError refuses a model or workload that serve or validate
// cannot run for real.
type UnsupportedError struct{ Command, What string }

func (e *UnsupportedError) Error() string {
	return e.Command + ": " + e.What + " (simulate it with 'retrysim compare')"
}

// kindName names a model or workload as a scenario file does.
func kindName(v any) string { return kinds.KindName(v) }

// TooManyClientsError refuses a validation with more clients than
// MaxValidateClients.
type TooManyClientsError struct{ Clients int }

func (e *TooManyClientsError) Error() string {
	return fmt.Sprintf("validate: the workload has %d clients; a validation runs each as a goroutine making real requests, and takes at most %d (simulate bigger ones with 'retrysim compare')",
		e.Clients, MaxValidateClients)
}

// clientResult is what one real client saw.
type clientResult struct {
	attempts  int
	completed bool
	reason    policies.StopReason
	fell      bool          // switched to the fallback model
	latency   time.Duration // model time from its start to success, or to giving up
	end       time.Duration // model time of its success, from the clock's zero
	stop      time.Duration // model time of its success or give-up, from the clock's zero
	late      time.Duration // real time it ran late: its start, and its requests past the model's answer time
	started   bool
}

// tokensHeader carries, from a validation's client, its request's size
// as the workload sizes it ("INPUT OUTPUT" tokens), which the served
// model reads in place of its defaults (the body's size says nothing).
const tokensHeader = "retrysim-tokens"

// parseTokensHeader reads tokensHeader; 0 and 0 (the model's defaults)
// when it is absent or malformed.
func parseTokensHeader(v string) (input, output int) {
	in, out, ok := strings.Cut(v, " ")
	i, err1 := strconv.Atoi(in)
	o, err2 := strconv.Atoi(out)
	if !ok || err1 != nil || err2 != nil || i < 0 || o < 0 {
		return 0, 0
	}
	return i, o
}

// tookHeader carries, to a validation's client, the real time the model
// took to answer (from the request's arrival to its due time), in
// nanoseconds: what the client waited beyond it is how late it ran.
const tookHeader = "retrysim-took-ns"

// measure runs one policy's clients for real; it returns what they
// measured and, sorted, the lateness of those that sent a request.
func (v *Validation) measure(ctx context.Context, p sim.Policy, starts []time.Duration, speed float64) (sim.Result, []time.Duration, error) {
	n := len(starts)
	h, err := NewHandler(v.Model, WithSpeed(speed), WithSeed(v.Seed), WithFallbackModel(FallbackModel),
		WithMaxInFlight(max(DefaultMaxInFlight, n)))
	if err != nil {
		return sim.Result{}, nil, err
	}
	h.timing = true
	v.stream = sim.FailsMidStream(v.Model)
	connect := v.Connect
	if connect == nil {
		connect = connectLoopback
	}
	base, rt, stop, err := connect(h)
	if err != nil {
		return sim.Result{}, nil, err
	}
	defer stop()
	opts, observers, err := sharedOptions(p, speed)
	if err != nil {
		return sim.Result{}, nil, err
	}
	if len(observers) > 0 {
		rt = policies.ObservingTransport(rt, observers...) // a pacer reads every response's rate-limit headers
	}
	client := &http.Client{Transport: rt}

	results := make([]clientResult, n)
	h.Reset()
	zero := time.Now()
	sizer, _ := v.Workload.(sim.TokenSizer)
	run := func(i int, at time.Duration, tokens string) clientResult {
		r := v.runClient(ctx, client, base, zero, zero.Add(toReal(at, speed)), opts, i, speed, tokens)
		r.started = true
		return r
	}
	// size is operation i's tokensHeader; "" leaves the model's defaults.
	size := func(i int) string {
		if sizer == nil {
			return ""
		}
		in, out := sizer.Tokens(i)
		return strconv.Itoa(in) + " " + strconv.Itoa(out)
	}
	var counters sim.Counters
	var wg sync.WaitGroup
	if c, ok := v.Workload.(sim.Chained); ok {
		// The operations after the leaders start when the chain says,
		// told of each real end in the order they come.
		chain := c.NewChain()
		if s, ok := chain.(sim.TokenSizer); ok {
			sizer = s // it sizes by the chain's state (a session's turn), as the engine asks it first
		}
		wrng := sim.WorkloadRand(v.Seed)
		var mu sync.Mutex
		var launch func(i int, at time.Duration, tokens string)
		launch = func(i int, at time.Duration, tokens string) {
			wg.Go(func() {
				r := run(i, at, tokens)
				mu.Lock()
				results[i] = r
				next, start, ok := chain.Next(i, max(r.stop, at), r.completed, wrng)
				if ok && next < n {
					tokens = size(next)
				}
				mu.Unlock()
				if ok && next < n && ctx.Err() == nil {
					launch(next, start, tokens)
				}
			})
		}
		leaders := make([]string, min(chain.Leaders(), n))
		for i := range leaders {
			leaders[i] = size(i) // all before any call ends: Next changes the chain
		}
		for i, tokens := range leaders {
			launch(i, starts[i], tokens)
		}
		wg.Wait()
		if cr, ok := chain.(sim.CounterReporter); ok {
			cr.ReportCounters(&counters)
		}
	} else {
		for i := range n {
			wg.Go(func() { results[i] = run(i, starts[i], size(i)) })
		}
		wg.Wait()
	}
	if err := ctx.Err(); err != nil {
		return sim.Result{}, nil, err
	}
	var lateness []time.Duration

	st := h.Stats()
	res := sim.Result{Policy: p.Name, Admitted: int(st.Admitted), Rejected: int(st.Rejected),
		Latencies: make([]time.Duration, 0, n), Counters: counters}
	for _, r := range results {
		if !r.started {
			continue // a chain's operation that never started
		}
		res.Clients++
		if r.attempts > 0 {
			lateness = append(lateness, r.late)
		}
		res.Attempts += r.attempts
		if r.attempts > 0 {
			res.Retries += r.attempts - 1
		}
		if r.fell {
			res.Fallbacks++
		}
		if r.completed {
			res.Completed++
			res.Latencies = append(res.Latencies, r.latency)
			res.LastCompletion = max(res.LastCompletion, r.end)
			continue
		}
		res.GaveUp++
		res.GaveUpBy[r.reason]++
		res.GiveUps = append(res.GiveUps, r.latency)
	}
	slices.Sort(res.Latencies)
	slices.Sort(res.GiveUps)
	slices.Sort(lateness)
	return res, lateness, nil
}

// sharedOptions are the options every client of a policy shares: the
// policy with its durations in real time, and one of each coordinator
// (those whose durations can be put in real time, machine.Rescaler: the
// gate, throttle and limiter; validate refuses the others) and the
// fallback for them all; and the coordinators that read every response's
// headers (policies.HeaderObserver: a pacer), which the clients' HTTP
// client must tell.
func sharedOptions(p sim.Policy, speed float64) ([]policies.Option, []policies.HeaderObserver, error) {
	rules := p.Rules
	if rules.Backoff != nil {
		rules.Backoff = scaledBackoff{rules.Backoff, speed}
	}
	if rules.Deadline > 0 {
		rules.Deadline = toReal(rules.Deadline, speed)
	}
	rules.AttemptTimeout = toReal(rules.AttemptTimeout, speed)
	rules.IgnoreServerWaitAbove = toReal(rules.IgnoreServerWaitAbove, speed)
	rules.ClampServerWait = toReal(rules.ClampServerWait, speed)
	rules.FailServerWaitAbove = toReal(rules.FailServerWaitAbove, speed)
	rules.TotalServerWaitCap = toReal(rules.TotalServerWaitCap, speed)
	rules.ServerWaitJitter = toReal(rules.ServerWaitJitter, speed)
	opts := []policies.Option{policies.WithPolicy(rules)}
	var observers []policies.HeaderObserver
	for _, s := range p.Coordinators {
		r, ok := s.(machine.Rescaler)
		if !ok {
			continue
		}
		c, err := r.Rescale(func(d time.Duration) time.Duration { return toReal(d, speed) }).NewCoordinator()
		if err != nil {
			return nil, nil, err
		}
		if o, ok := c.(policies.HeaderObserver); ok {
			observers = append(observers, o)
		}
		opts = append(opts, policies.WithCoordinator(c))
	}
	if f := p.Fallback; f != nil {
		opts = append(opts, policies.WithFallback(&policies.ModelFallback{Primary: PrimaryModel, Fallback: FallbackModel, After: f.After, Sticky: f.Sticky}))
	}
	return opts, observers, nil
}

// scaledBackoff is a backoff of model time running on the real clock: the
// same draws, divided by the speed.
type scaledBackoff struct {
	b     policies.Backoff
	speed float64
}

func (s scaledBackoff) Delay(retry int, prev time.Duration, rng *rand.Rand) time.Duration {
	return toReal(s.b.Delay(retry, toModel(prev, s.speed), rng), s.speed)
}

// runClient is one client: it starts at start, runs its operation through
// policies.Do with its own random source (the simulator's, for the same
// client), and reports what happened.
func (v *Validation) runClient(ctx context.Context, client *http.Client, base string, zero, start time.Time, shared []policies.Option, i int, speed float64, tokens string) (r clientResult) {
	if !sleepUntil(ctx, start) {
		r.reason = policies.StopCancelled
		return r
	}
	r.late = time.Since(start)
	defer func() { r.stop = toModel(time.Since(zero), speed) }()
	priority := ""
	if len(v.Priorities) > 0 {
		priority = v.Priorities.Priority(i).String()
	}
	op := func(actx context.Context, a policies.Attempt) error {
		r.attempts++
		model := a.Model
		if model == "" {
			model = PrimaryModel
		}
		late, err := call(actx, client, base, model, v.stream, tokens, priority)
		r.late += late
		return err
	}
	hooks := policies.Hooks{OnFallback: func(policies.FallbackEvent) { r.fell = true }}
	opts := append(slices.Clone(shared), policies.WithRand(sim.PolicyRand(v.Seed, i)), policies.WithHooks(hooks))
	do := policies.Do
	if v.Do != nil {
		do = v.Do
	}
	err := do(ctx, op, opts...)
	now := time.Now()
	if err == nil {
		r.completed = true
		r.latency = toModel(now.Sub(start), speed)
		r.end = toModel(now.Sub(zero), speed)
		return r
	}
	r.latency = toModel(now.Sub(start), speed) // the time to give up
	r.reason = policies.StopTerminal
	if pe := (*policies.Error)(nil); errors.As(err, &pe) {
		r.reason = pe.Reason
	}
	return r
}

// call sends one message request and reads the whole answer; a failure
// status comes back as a *policies.HTTPError for Do to classify, and so
// does an error event in a streamed answer (stream), with status 200 and
// the event's data as the body. late is how much longer than the model's
// answer time (tookHeader) it took.
func call(ctx context.Context, client *http.Client, base, model string, stream bool, tokens, priority string) (late time.Duration, err error) {
	body := fmt.Appendf(nil, `{"model":%q,"max_tokens":16,"stream":%t,"messages":[{"role":"user","content":"validate"}]}`, model, stream)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("content-type", "application/json")
	if tokens != "" {
		req.Header.Set(tokensHeader, tokens)
	}
	if priority != "" {
		req.Header.Set(PriorityHeader, priority)
	}
	sent := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, policies.MaxErrorBody))
	if took, perr := strconv.ParseInt(resp.Header.Get(tookHeader), 10, 64); perr == nil {
		late = max(time.Since(sent)-time.Duration(took), 0)
	}
	if resp.StatusCode >= 400 {
		return late, &policies.HTTPError{StatusCode: resp.StatusCode, Header: resp.Header, Body: b}
	}
	if _, data, ok := bytes.Cut(b, []byte("event: error\ndata: ")); ok && stream {
		data, _, _ = bytes.Cut(data, []byte("\n"))
		return late, &policies.HTTPError{StatusCode: resp.StatusCode, Header: resp.Header, Body: data}
	}
	return late, err
}

// connectLoopback serves h on a free loopback port, reached over h2c.
func connectLoopback(h *Handler) (string, http.RoundTripper, func(), error) {
	s, err := serveHandler("127.0.0.1:0", h, true)
	if err != nil {
		return "", nil, nil, err
	}
	t := &http.Transport{Protocols: new(http.Protocols), HTTP2: &http.HTTP2Config{}}
	t.Protocols.SetUnencryptedHTTP2(true)
	return s.URL, t, func() {
		t.CloseIdleConnections() // first, so that the server finds no connection to wait for
		s.Close()
	}, nil
}

// compare builds the checks of a comparison, from the simulated runs of
// SpreadSeeds seeds (the first is the compared one). A metric agrees when
// it is within its floor (CountFloor, SendFloor, LatencyFloor) plus
// SpreadZ standard deviations of its values across the seeds; a latency
// percentile p also within the speed times the p-th percentile of the
// clients' lateness (the last completion: the most late). A
// count's tolerance is rounded down to a whole number.
func compare(c *Comparison, seeds []sim.Result, fallback, chained bool) []Check {
	s, m := &c.Simulated, &c.Measured
	clients := float64(s.Clients)
	// A count's spread is taken per client and scaled to this run's
	// clients: an open loop's seeds draw different numbers of operations,
	// and the real run has this seed's. A chained workload's operations
	// start as earlier ones end, so a real run that takes another path
	// starts other ones: its counts vary as they do across seeds, whole.
	spread := func(metric string, perClient bool) float64 {
		perClient = perClient && !chained
		var xs []float64
		for i := range seeds {
			if x, ok := metricValue(&seeds[i], metric); ok {
				if perClient && seeds[i].Clients > 0 {
					x *= clients / float64(seeds[i].Clients)
				}
				xs = append(xs, x)
			}
		}
		return SpreadZ * stddev(xs)
	}
	var checks []Check
	count := func(metric string, sv, mv int, tol Tolerance, of float64) {
		t := math.Floor(math.Max(tol.Abs, math.Floor(tol.Rel*of)) + spread(metric, true))
		checks = append(checks, Check{Metric: metric, Simulated: float64(sv), Measured: float64(mv), Tolerance: t,
			Agree: math.Abs(float64(sv-mv)) <= t})
	}
	count("completed", s.Completed, m.Completed, CountFloor, clients)
	count("attempts", s.Attempts, m.Attempts, SendFloor, float64(s.Attempts))
	count("retries", s.Retries, m.Retries, SendFloor, float64(s.Attempts))
	count("gave_up", s.GaveUp, m.GaveUp, CountFloor, clients)
	for r := range machine.NumStopReasons {
		if r == int(machine.NotStopped) || s.GaveUpBy[r] == 0 && m.GaveUpBy[r] == 0 {
			continue
		}
		count("gave_up."+policies.StopReason(r).String(), s.GaveUpBy[r], m.GaveUpBy[r], CountFloor, clients)
	}
	if fallback {
		count("fallbacks", s.Fallbacks, m.Fallbacks, CountFloor, clients)
	}
	// A chained workload's own counts (sessions.completed, ...), within a
	// unit plus their spread across seeds.
	for _, sc := range s.Counters {
		if !strings.HasPrefix(sc.Name, "sessions.") || sc.Name == "sessions.tokens_wasted" {
			continue
		}
		mv, _ := m.Counters.Get(sc.Name)
		t := math.Floor(CountFloor.Abs + spread(sc.Name, false))
		checks = append(checks, Check{Metric: sc.Name, Simulated: float64(sc.Value), Measured: float64(mv), Tolerance: t,
			Agree: math.Abs(float64(sc.Value-mv)) <= t})
	}
	if s.Completed == 0 || m.Completed == 0 {
		return checks // no latencies to compare; completed says it all
	}
	perClient := math.Ceil(float64(s.Attempts) / clients)
	ms := func(metric string, sv, mv time.Duration, p float64) {
		late := float64(lateQuantile(c.Lateness, p)) * c.Speed
		t := LatencyFloor.Rel*float64(sv) + float64(LatencyFloor.Late)*c.Speed*perClient + late +
			spread(metric, false)*float64(time.Millisecond)
		checks = append(checks, Check{Metric: metric, Simulated: millis(sv), Measured: millis(mv), Tolerance: millis(time.Duration(t)),
			Agree: math.Abs(float64(sv-mv)) <= t})
	}
	for _, p := range []float64{50, 95, 99} {
		sv, _ := s.Percentile(p)
		mv, _ := m.Percentile(p)
		ms(fmt.Sprintf("latency_ms.p%g", p), sv, mv, p)
	}
	ms("last_completion_ms", s.LastCompletion, m.LastCompletion, 100)
	return checks
}

// metricValue returns a metric of compare's from a result (latencies in
// milliseconds), and false for a latency of a run in which nothing
// completed.
func metricValue(r *sim.Result, metric string) (float64, bool) {
	switch metric {
	case "completed":
		return float64(r.Completed), true
	case "attempts":
		return float64(r.Attempts), true
	case "retries":
		return float64(r.Retries), true
	case "gave_up":
		return float64(r.GaveUp), true
	case "fallbacks":
		return float64(r.Fallbacks), true
	case "last_completion_ms":
		return millis(r.LastCompletion), r.Completed > 0
	}
	if v, ok := r.Counters.Get(metric); ok {
		return float64(v), true
	}
	if reason, ok := strings.CutPrefix(metric, "gave_up."); ok {
		for i := range machine.NumStopReasons {
			if policies.StopReason(i).String() == reason {
				return float64(r.GaveUpBy[i]), true
			}
		}
	}
	if p, ok := strings.CutPrefix(metric, "latency_ms.p"); ok {
		q, err := strconv.ParseFloat(p, 64)
		d, completed := r.Percentile(q)
		return millis(d), err == nil && completed
	}
	return 0, false
}

// stddev is the sample standard deviation; 0 for fewer than two values.
func stddev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// lateQuantile is the nearest-rank p-th percentile of sorted lateness; 0
// when there is none.
func lateQuantile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	r := sim.Result{Latencies: sorted}
	d, _ := r.Percentile(p)
	return d
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// ExecValidation runs a client program of any language against a served
// model and compares what the server saw with the simulation of the
// policy that claims to be that client (a preset).
type ExecValidation struct {
	Model sim.ServerModel
	// Clients is how many callers the program runs at once, each making
	// one call at the start; it is told in RETRYSIM_CLIENTS.
	Clients int
	// Policy is the preset. Its client-side durations (backoff, server-wait
	// bounds, attempt timeout) are of the real client, on the real clock:
	// the simulation runs them multiplied by Speed. It has no deadline (a
	// program has none of its own).
	Policy sim.Policy
	// Seed seeds the served model; the simulation runs seeds Seed to
	// Seed+Seeds-1.
	Seed  uint64
	Seeds int
	// Speed runs the model this many times faster than model time.
	Speed float64
	// CountsOnly leaves the give-up times out of the verdict (they are
	// still reported): for callers that act in step, whose real-clock
	// lateness adds up in one process.
	CountsOnly bool
	// Command is run with sh -c; its output goes to Output.
	Command string
	Output  io.Writer
}

// Environment variables the program gets.
const (
	EnvBaseURL          = "RETRYSIM_BASE_URL"  // http://127.0.0.1:PORT
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL" // the same
	EnvOpenAIBaseURL    = "OPENAI_BASE_URL"    // the same with /v1
	EnvClients          = "RETRYSIM_CLIENTS"   // callers to run at once
	EnvStream           = "RETRYSIM_STREAM"    // 1 when the model fails mid-stream: stream the calls
	EnvClientHeader     = "RETRYSIM_CLIENT_HEADER"
)

// ExecResult is what the program did, seen from the server, beside the
// simulation.
type ExecResult struct {
	Policy  string   `json:"policy"`
	Clients int      `json:"clients"`
	Seeds   int      `json:"seeds"`
	Speed   float64  `json:"speed"`
	Checks  []Range  `json:"checks"`
	GiveUps GiveUpKS `json:"give_up_ms"`
	// CountsOnly: the give-up times are not part of the verdict.
	CountsOnly bool `json:"counts_only,omitempty"`
	// RealTime is how long the program ran.
	RealTime time.Duration `json:"real_time_ns"`
}

// Range is one count: the simulation's mean and p5-p95 over seeds, the
// measured value, and whether it lies in the range widened by the floor
// of validate's counts (1, and 2% for attempts).
type Range struct {
	Metric    string  `json:"metric"`
	Simulated float64 `json:"simulated_mean"`
	P5        float64 `json:"simulated_p5"`
	P95       float64 `json:"simulated_p95"`
	Measured  float64 `json:"measured"`
	Agree     bool    `json:"agree"`
}

// GiveUpKS compares the give-up times (model milliseconds, from a caller's
// first request to the end of its last response): the means within
// MeanTolerance of the simulated one plus the real clock's floor plus
// MeanStdErrs standard errors of a mean of the measured count of draws
// (ToleranceMs), and a two-sample Kolmogorov-Smirnov
// test of the distributions' shapes at significance KSAlpha (the measured
// sample moved by the difference of the means).
type GiveUpKS struct {
	SimulatedMean float64 `json:"simulated_mean"`
	MeasuredMean  float64 `json:"measured_mean"`
	RelDiff       float64 `json:"relative_difference"`
	// ToleranceMs is MeanTolerance of the simulated mean plus the real
	// clock's floor, LatencyFloor.Late (in model time) per attempt of a
	// caller, as validate allows its latencies, plus SamplingMs.
	ToleranceMs float64 `json:"tolerance_ms"`
	// SamplingMs is MeanStdErrs standard errors of the mean of M give-ups
	// drawn as the simulation draws them (its standard deviation over
	// √M): ten callers' random waits average out only so far.
	SamplingMs float64 `json:"sampling_ms"`
	D          float64 `json:"ks_d"`
	P          float64 `json:"ks_p"`
	N          int     `json:"simulated_n"`
	M          int     `json:"measured_n"`
	// NoKS says the simulated times have no spread to test a shape
	// against (a standard deviation of at most KSMinSpread of the mean).
	NoKS  bool `json:"ks_not_applicable,omitempty"`
	Agree bool `json:"agree"`
}

// The give-up time rule.
const (
	MeanTolerance = 0.02
	// MeanStdErrs: at 3, an honest client's mean leaves the tolerance in
	// about 1 run in 370 (the normal tail), and CI runs it once more.
	MeanStdErrs = 3
	KSAlpha     = 0.01
	KSMinSpread = 0.005
)

// Agree reports whether every check agrees.
func (r *ExecResult) Agree() bool {
	for _, c := range r.Checks {
		if !c.Agree {
			return false
		}
	}
	return r.GiveUps.Agree || r.CountsOnly
}

// ExecError is a program that failed (exit status not 0, with the last
// MaxExecErrorOutput bytes of its output when Output is nil), that sent
// nothing for some callers, or that was stopped by the end of Exec's
// context (the error wraps the context's cause).
type ExecError struct{ Err error }

func (e *ExecError) Error() string { return "validate --exec: " + e.Err.Error() }
func (e *ExecError) Unwrap() error { return e.Err }

// MaxExecErrorOutput bounds the program's output that an ExecError keeps:
// its last bytes, after a line that says how many came before.
const MaxExecErrorOutput = 64 << 10

// execWaitDelay is how long Exec waits for the program's output to end
// after the program has ended or been killed.
const execWaitDelay = 500 * time.Millisecond

// Exec runs v: the simulation first, then the program against a server on
// a free loopback port. On unix the program runs in a process group of its
// own: the end of ctx kills the group (the shell and everything it
// started), and so does the program's end (whatever it left running).
func Exec(ctx context.Context, v ExecValidation) (*ExecResult, error) {
	switch {
	case v.Clients <= 0 || v.Clients > MaxValidateClients:
		return nil, fmt.Errorf("validate --exec: clients must be 1 to %d, got %d", MaxValidateClients, v.Clients)
	case !(v.Speed > 0) || v.Speed > MaxSpeed:
		return nil, fmt.Errorf("validate --exec: speed must be > 0 and at most %d, got %v", MaxSpeed, v.Speed)
	case v.Seeds < 2:
		return nil, fmt.Errorf("validate --exec: seeds must be at least 2, got %d", v.Seeds)
	}
	if c := control(v.Policy); c != "" {
		return nil, &UnsupportedError{Command: "validate --exec", What: "the policy has " + c + ", which no harness runs"}
	}
	pol := v.Policy
	pol.Rules = inModelTime(pol.Rules, v.Speed)
	// After control, only coordinators on a clock of their own are left
	// (a gate, throttle, in-flight limit, pacer): a program shares them
	// between its callers (retrysim show --for prints them), in real time.
	pol.Coordinators = nil
	for _, s := range v.Policy.Coordinators {
		pol.Coordinators = append(pol.Coordinators, s.(machine.Rescaler).Rescale(func(d time.Duration) time.Duration { return toModel(d, v.Speed) }))
	}
	simRuns := make([]sim.Result, v.Seeds)
	var simGiveUps []float64
	for k := range v.Seeds {
		seed := v.Seed + uint64(k)
		cfg := sim.Config{Seed: seed, Server: v.Model, Workload: kinds.AllAtOnce(v.Clients), Policy: pol,
			Hooks: policies.Hooks{OnGiveUp: func(e *policies.Error) { simGiveUps = append(simGiveUps, millis(e.Elapsed)) }}}
		r, err := sim.Run(cfg)
		if err != nil {
			return nil, err
		}
		simRuns[k] = r
	}

	var mu sync.Mutex
	var exchanges []Exchange
	srv, err := Listen("127.0.0.1:0", v.Model, WithSpeed(v.Speed), WithSeed(v.Seed), WithMaxInFlight(max(DefaultMaxInFlight, v.Clients)),
		WithExchanges(func(e Exchange) {
			mu.Lock()
			exchanges = append(exchanges, e)
			mu.Unlock()
		}))
	if err != nil {
		return nil, err
	}
	defer srv.Close() // the model's clock starts at the program's first request
	start := time.Now()
	cmd := exec.CommandContext(ctx, "sh", "-c", v.Command)
	stream := "0"
	if sim.FailsMidStream(v.Model) {
		stream = "1"
	}
	cmd.Env = append(os.Environ(), EnvBaseURL+"="+srv.URL, EnvAnthropicBaseURL+"="+srv.URL, EnvOpenAIBaseURL+"="+srv.URL+"/v1",
		EnvClients+"="+strconv.Itoa(v.Clients), EnvStream+"="+stream, EnvClientHeader+"="+ClientHeader)
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
		if os.Getenv(k) == "" {
			cmd.Env = append(cmd.Env, k+"=retrysim") // the SDKs want a key; serve reads none
		}
	}
	inOwnGroup(cmd)
	// A child that left the group (or any, where there are no groups)
	// may still hold the output: Wait stops waiting for it this long
	// after the program ends or is killed.
	cmd.WaitDelay = execWaitDelay
	out := tailBuffer{max: MaxExecErrorOutput}
	cmd.Stdout, cmd.Stderr = &out, &out
	if v.Output != nil {
		cmd.Stdout, cmd.Stderr = v.Output, v.Output
	}
	err = cmd.Run()
	_ = killGroup(cmd) // what the program left running
	if err != nil && ctx.Err() != nil {
		return nil, &ExecError{fmt.Errorf("%q stopped: %w", v.Command, context.Cause(ctx))}
	}
	if err != nil {
		return nil, &ExecError{fmt.Errorf("%q: %w\n%s", v.Command, err, out.text())}
	}
	real := time.Since(start)
	mu.Lock()
	measured, giveUps, err := perClient(exchanges, v.Clients)
	mu.Unlock()
	if err != nil {
		return nil, &ExecError{err}
	}
	res := &ExecResult{Policy: v.Policy.Name, Clients: v.Clients, Seeds: v.Seeds, Speed: v.Speed, RealTime: real, CountsOnly: v.CountsOnly}
	for _, m := range []struct {
		name  string
		value func(r *sim.Result) float64
		rel   float64
	}{
		{"attempts", func(r *sim.Result) float64 { return float64(r.Attempts) }, SendFloor.Rel},
		{"completed", func(r *sim.Result) float64 { return float64(r.Completed) }, 0},
		{"gave_up", func(r *sim.Result) float64 { return float64(r.GaveUp) }, 0},
	} {
		xs := make([]float64, len(simRuns))
		for i := range simRuns {
			xs[i] = m.value(&simRuns[i])
		}
		slices.Sort(xs)
		c := Range{Metric: m.name, Simulated: stats.Summarize(xs).Mean, P5: stats.Quantile(xs, 0.05), P95: stats.Quantile(xs, 0.95), Measured: m.value(&measured)}
		floor := max(1, m.rel*c.Simulated)
		c.Agree = c.Measured >= c.P5-floor && c.Measured <= c.P95+floor
		res.Checks = append(res.Checks, c)
	}
	perCaller := math.Ceil(float64(simRuns[0].Attempts) / float64(v.Clients))
	res.GiveUps = compareGiveUps(simGiveUps, giveUps, millis(toModel(LatencyFloor.Late, v.Speed))*perCaller)
	return res, nil
}

// compareGiveUps applies the give-up time rule; with no give-ups on either
// side it agrees, with give-ups on one side only it does not.
func compareGiveUps(simulated, measured []float64, lateMs float64) GiveUpKS {
	g := GiveUpKS{N: len(simulated), M: len(measured)}
	switch {
	case len(simulated) == 0 && len(measured) == 0:
		g.Agree, g.P = true, 1
		return g
	case len(simulated) == 0 || len(measured) == 0:
		return g
	}
	g.SimulatedMean = stats.Summarize(simulated).Mean
	g.MeasuredMean = stats.Summarize(measured).Mean
	if g.SimulatedMean > 0 {
		g.RelDiff = (g.MeasuredMean - g.SimulatedMean) / g.SimulatedMean
	}
	sd := stats.Summarize(simulated).StdDev
	g.SamplingMs = MeanStdErrs * sd / math.Sqrt(float64(g.M))
	g.ToleranceMs = MeanTolerance*g.SimulatedMean + lateMs + g.SamplingMs
	meanOK := math.Abs(g.MeasuredMean-g.SimulatedMean) <= g.ToleranceMs
	if sd <= KSMinSpread*g.SimulatedMean {
		// Every simulated give-up at one time (no random waits): the real
		// clock's few milliseconds are the only shape; the mean decides.
		g.P, g.NoKS = 1, true
		g.Agree = meanOK
		return g
	}
	// The KS test compares shapes: the measured sample is moved by the
	// difference of the means, which the mean rule bounds (the real clock
	// makes every attempt a few milliseconds late, a shift, not a shape).
	centred := make([]float64, len(measured))
	for i, x := range measured {
		centred[i] = x - (g.MeasuredMean - g.SimulatedMean)
	}
	g.D, g.P = stats.KolmogorovSmirnov(simulated, centred)
	g.Agree = meanOK && g.P >= KSAlpha
	return g
}

// perClient counts, per caller, what the server saw: attempts, whether it
// completed (any admitted request), and, if not, when it gave up (the end
// of its last response, from its first request). Every caller must have
// sent at least one request with ClientHeader.
func perClient(exchanges []Exchange, clients int) (sim.Result, []float64, error) {
	type client struct {
		first, last time.Duration
		attempts    int
		completed   bool
	}
	byClient := map[string]*client{}
	var order []string
	for _, e := range exchanges {
		c := byClient[e.Client]
		if c == nil {
			c = &client{first: e.Arrival}
			byClient[e.Client] = c
			order = append(order, e.Client)
		}
		c.attempts++
		c.last = max(c.last, e.End)
		c.completed = c.completed || !e.Failed
	}
	if _, ok := byClient[""]; ok {
		return sim.Result{}, nil, fmt.Errorf("requests without the %s header: the program must send it (its value is %s), one value per caller", ClientHeader, EnvClientHeader)
	}
	if len(byClient) != clients {
		return sim.Result{}, nil, fmt.Errorf("%d callers sent requests; %s asked for %d", len(byClient), EnvClients, clients)
	}
	slices.Sort(order)
	var r sim.Result
	var giveUps []float64
	r.Clients = clients
	for _, id := range order {
		c := byClient[id]
		r.Attempts += c.attempts
		if c.completed {
			r.Completed++
			continue
		}
		r.GaveUp++
		giveUps = append(giveUps, millis(c.last-c.first))
	}
	return r, giveUps, nil
}

// inModelTime returns the rules of a client on the real clock in model
// time at speed x: every client-side duration multiplied by x, and no
// deadline.
func inModelTime(r policies.Policy, x float64) policies.Policy {
	if r.Backoff != nil {
		r.Backoff = slowedBackoff{r.Backoff, x}
	}
	r.Deadline = 0
	r.AttemptTimeout = toModel(r.AttemptTimeout, x)
	r.IgnoreServerWaitAbove = toModel(r.IgnoreServerWaitAbove, x)
	r.ClampServerWait = toModel(r.ClampServerWait, x)
	r.FailServerWaitAbove = toModel(r.FailServerWaitAbove, x)
	r.TotalServerWaitCap = toModel(r.TotalServerWaitCap, x)
	r.ServerWaitJitter = toModel(r.ServerWaitJitter, x)
	return r
}

// slowedBackoff is a backoff of the real clock in model time: the same
// draws, multiplied by the speed.
type slowedBackoff struct {
	b     policies.Backoff
	speed float64
}

func (s slowedBackoff) Delay(retry int, prev time.Duration, rng *rand.Rand) time.Duration {
	return toModel(s.b.Delay(retry, toReal(prev, s.speed), rng), s.speed)
}

// WriteExecResult writes r as a table: the counts, then the give-up times.
func WriteExecResult(w io.Writer, r *ExecResult) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "preset %s: %d callers, speed %g, simulation over %d seeds; real run %.1fs\n", r.Policy, r.Clients, r.Speed, r.Seeds, r.RealTime.Seconds())
	fmt.Fprintf(&b, "%-12s %10s %10s %10s %10s  %s\n", "metric", "sim mean", "sim p5", "sim p95", "measured", "verdict")
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "%-12s %10.2f %10.0f %10.0f %10.0f  %s\n", c.Metric, c.Simulated, c.P5, c.P95, c.Measured, verdict(c.Agree))
	}
	g := r.GiveUps
	ks := fmt.Sprintf("KS D %.3f p %.3f (at least %g)", g.D, g.P, KSAlpha)
	if g.NoKS {
		ks = "KS not applicable (the simulated times do not vary)"
	}
	fmt.Fprintf(&b, "give-up time: simulated mean %.1f ms (n %d), measured %.1f ms (n %d), difference %+.2f%% (tolerance ±%.1f ms: %.0f%% plus %v a caller's attempt plus %.1f ms, %d standard errors of %d draws), %s  %s\n",
		g.SimulatedMean, g.N, g.MeasuredMean, g.M, 100*g.RelDiff, g.ToleranceMs, 100*MeanTolerance, LatencyFloor.Late, g.SamplingMs, MeanStdErrs, g.M, ks, timeVerdict(g.Agree, r.CountsOnly))
	_, err := w.Write(b.Bytes())
	return err
}

func timeVerdict(ok, countsOnly bool) string {
	if countsOnly {
		return "(not checked: --counts-only)"
	}
	return verdict(ok)
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "DIFFERS"
}

// tailBuffer keeps the last max bytes written to it and counts the ones
// before them. Exec's command writes to it from one goroutine at a time.
type tailBuffer struct {
	buf     []byte
	max     int
	dropped int64
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > b.max {
		b.dropped += int64(len(p) - b.max)
		p = p[len(p)-b.max:]
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.dropped += int64(over)
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

// text is what was kept, after a line that counts what was not.
func (b *tailBuffer) text() []byte {
	if b.dropped == 0 {
		return b.buf
	}
	return append(fmt.Appendf(nil, "[the first %d bytes of the output are left out; the last %d follow]\n", b.dropped, len(b.buf)), b.buf...)
}

package runs

import (
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// Work estimates and the limits the CLI applies to them. The figures are
// upper bounds from the scenario's own limits (clients, max attempts,
// deadline), not predictions: a run usually does far less; a pilot run
// (predict.go) predicts the events and the time shown. docs/scenarios.md
// ("How much work a run does") explains them.
const (
	// EventsPerAttempt bounds the engine events one attempt costs: its
	// send, its response and the wake-up before the next attempt.
	EventsPerAttempt = 3
	// NsPerEvent is the engine's cost per event on one core in a run of
	// 300,000 operations or more, rounded up from docs/performance.md
	// (377 ns/event at 1,000,000 clients on the development machine; 405
	// of CPU at 100,000,000 arrivals, docs/scale.md); SmallNsPerEvent in a
	// run of up to 10,000, whose state fits in the caches (130–350 ns of
	// CPU by model, BenchmarkEstimate). They only turn events into a rough
	// time (NsPerEventAt).
	NsPerEvent      = 400
	SmallNsPerEvent = 220
	// RefuseEvents and RefuseMemory are the limits above which a command
	// refuses to start without --force.
	RefuseEvents = 1e11
	RefuseMemory = 64 << 30
	// WarnEvents is the bound above which a command warns that the run
	// will be long.
	WarnEvents = 1e9
)

// Estimate bounds the work of running every policy of a scenario on a
// number of seeds.
type Estimate struct {
	// Runs is seeds × policies.
	Runs int64
	// Events bounds the engine events of all runs together.
	Events float64
	// Memory bounds the bytes the runs in flight at once take, about
	// bytesPerClient per client per run (more when a policy queues), plus
	// the retry layers of the client processes that have an operation
	// (processBytes) and the orphans of retry layers that go on after
	// their caller gave up (orphanBytes).
	Memory float64
	// Kept is what the caller keeps of the runs (metrics, latencies), in
	// bytes; Estimate leaves it 0 for the caller to fill in.
	Kept float64
	// Workers is how many runs go in parallel (see ParallelWorkers).
	Workers int
	// Predicted is the events of all runs that pilot runs predict
	// (Plan.Predict); 0 when there is no prediction, and then NoPilot may
	// say why. PilotFactor is the smallest share of a scenario's
	// operations a pilot ran (1: at full size).
	Predicted, PilotFactor float64
	NoPilot                string
	// Cost and PredictedCost are Events and Predicted with each run's
	// events weighed by NsPerEventAt its size: nanoseconds on one core.
	Cost, PredictedCost float64
}

// NsPerEventAt is the engine's cost per event on one core in a run of ops
// operations: SmallNsPerEvent up to 10,000, NsPerEvent from 300,000, and
// between them growing with the logarithm of ops, as the runs' state leaves
// the caches (fitted to BenchmarkEstimate's large runs, docs/scale.md).
func NsPerEventAt(ops int) float64 {
	const lo, hi = 1e4, 3e5
	switch x := float64(ops); {
	case x <= lo:
		return SmallNsPerEvent
	case x >= hi:
		return NsPerEvent
	default:
		return SmallNsPerEvent * math.Pow(NsPerEvent/SmallNsPerEvent, math.Log(x/lo)/math.Log(hi/lo))
	}
}

// Time is a rough wall time for the predicted events, or else the bound's,
// spread over the workers: their Cost (NsPerEvent per event when the
// estimate has none).
func (e Estimate) Time() time.Duration {
	cost := e.Cost
	if e.Predicted > 0 {
		cost = e.PredictedCost
	}
	if cost == 0 {
		cost = e.Events * NsPerEvent
	}
	ns := cost / float64(max(e.Workers, 1))
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}

// Add returns the estimate of running e and then o: events, runs and what
// is kept add up; the memory of runs in flight is the larger of the two.
// (The prediction is Plan.Predict's, of the sum: not added.)
func (e Estimate) Add(o Estimate) Estimate {
	return Estimate{
		Runs:    e.Runs + o.Runs,
		Events:  e.Events + o.Events,
		Cost:    e.Cost + o.Cost,
		Memory:  max(e.Memory, o.Memory),
		Kept:    e.Kept + o.Kept,
		Workers: max(e.Workers, o.Workers),
	}
}

// TotalMemory bounds the memory at the end of the runs: the runs in flight
// and what is kept.
func (e Estimate) TotalMemory() float64 { return e.Memory + e.Kept }

// Refusal says why the estimated work is too much to start without being
// asked explicitly, or returns "" when it is not.
func (e Estimate) Refusal() string {
	switch {
	case e.Events > RefuseEvents:
		return fmt.Sprintf("up to %s engine events, over the limit of %s", count(e.Events), count(RefuseEvents))
	case e.TotalMemory() > RefuseMemory:
		return fmt.Sprintf("up to %s of memory, over the limit of %s", bytesText(e.TotalMemory()), bytesText(RefuseMemory))
	}
	return ""
}

// Long reports whether the estimate is worth a warning.
func (e Estimate) Long() bool { return e.Events > WarnEvents }

// String summarises the estimate for a message: the bound, and the
// prediction and its time, or else the bound's time ("at most") and why
// there is no prediction.
func (e Estimate) String() string {
	cores := max(e.Workers, 1)
	var work string
	switch {
	case e.Predicted > 0 && e.PilotFactor >= 1:
		work = fmt.Sprintf("%s predicted by a pilot run, ~%s on %d core(s)", count(e.Predicted), roughTime(e.Time()), cores)
	case e.Predicted > 0:
		work = fmt.Sprintf("%s predicted by a pilot run at 1/%.0f scale, ~%s on %d core(s)", count(e.Predicted), 1/e.PilotFactor, roughTime(e.Time()), cores)
	case e.NoPilot != "":
		work = fmt.Sprintf("at most ~%s on %d core(s) (from the bound: %s)", roughTime(e.Time()), cores, e.NoPilot)
	default:
		work = fmt.Sprintf("at most ~%s on %d core(s) (from the bound)", roughTime(e.Time()), cores)
	}
	return fmt.Sprintf("up to %s engine events in %d runs, %s, up to %s of memory",
		count(e.Events), e.Runs, work, bytesText(e.TotalMemory()))
}

// EstimateOf bounds the work of running every policy of s on seeds seeds.
func EstimateOf(s *scenarios.Scenario, seeds int) Estimate {
	clients := float64(s.Operations())
	perSeed := 0.0
	for i := range s.Policies {
		perSeed += clients * (1 + (EventsPerAttempt+kinds.ExtraEventsPerAttempt(s.Server))*attemptBound(s.Server, &s.Policies[i]))
	}
	perClient := bytesPerClient
	for i := range s.Policies {
		if s.Policies[i].Queues() {
			perClient += bytesPerQueuedClient
			break
		}
	}
	hedging := int64(0) // the most a hedging policy adds per client
	for i := range s.Policies {
		if h, ok := s.Policies[i].MaxHedges(); ok {
			hedging = max(hedging, sim.HedgeBytes(h))
		}
	}
	perClient += hedging
	layered := int64(0) // the most a policy's retry layers add per client
	for i := range s.Policies {
		p := &s.Policies[i]
		layered = max(layered, sim.LayerBytes(len(p.Layers)))
	}
	perClient += layered
	perRun := float64(bytesPerRun) + clients*float64(perClient)
	orphans := 0.0
	for i := range s.Policies {
		orphans = max(orphans, orphanBytes(s, &s.Policies[i], clients))
	}
	perRun += orphans
	if split, ok := s.Workload.(sim.ProcessSplit); ok && split.ClientProcesses() > 1 {
		// Only processes with an operation get a retry layer.
		processes := min(clients, float64(split.ClientProcesses()))
		most := 0.0
		for i := range s.Policies {
			most = max(most, processBytes(&s.Policies[i]))
		}
		perRun += processes * most
	}
	runs := int64(seeds) * int64(len(s.Policies))
	workers := int(min(int64(ParallelWorkers(runtime.GOMAXPROCS(0), s.Operations())), max(runs, 1)))
	return Estimate{
		Runs:    runs,
		Events:  perSeed * float64(seeds),
		Cost:    perSeed * float64(seeds) * NsPerEventAt(s.Operations()),
		Memory:  float64(workers) * perRun,
		Workers: workers,
	}
}

// processBytes bounds the memory of one client process's retry layer under
// p: its plan and each coordinator in it.
func processBytes(p *sim.Policy) float64 {
	coordinators := machine.MaxCoordinators // if the plan cannot be built
	if plan, err := p.Plan(policies.Hooks{}); err == nil {
		coordinators = len(plan.Coordinators)
	}
	return float64(bytesPerProcess + int64(coordinators)*bytesPerCoordinator)
}

// attemptBound is the most attempts one operation of p can make: its
// max_attempts, or, when only a deadline bounds it, one attempt at the start
// and one per shortest possible gap between attempts (the server's response
// time plus the smallest wait the backoff can draw) until the deadline,
// each with its hedges (copies count as attempts);
// times each inner layer's max attempts.
func attemptBound(server sim.ServerModel, p *sim.Policy) float64 {
	bound := math.Inf(1)
	if n := p.Rules.MaxAttempts; n > 0 {
		bound = float64(n)
	}
	if d := p.Rules.Deadline; d > 0 {
		gap := max(kinds.MinResponse(server)+kinds.MinWait(p.Rules.Backoff), time.Nanosecond)
		perAttempt := 1.0
		if h, ok := p.MaxHedges(); ok {
			perAttempt += float64(h) // hedges count against max_attempts, not the deadline
		}
		bound = min(bound, (1+float64(d/gap))*perAttempt)
	}
	if math.IsInf(bound, 1) {
		// Neither bound: the loader refuses such policies; count one
		// attempt per nanosecond of the longest allowed duration.
		bound = float64(scenarios.MaxDuration)
	}
	for _, l := range p.Layers {
		bound *= float64(max(l.Rules.MaxAttempts, 1)) // each attempt is an inner loop
	}
	return bound
}

// count writes a large number of events briefly: 3.2e+09.
func count(n float64) string {
	if n < 1e6 {
		return fmt.Sprintf("%.0f", n)
	}
	return fmt.Sprintf("%.2g", n)
}

// bytesText writes a size in binary units.
func bytesText(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.3g %s", b, units[i])
}

// roughTime writes a duration to about two significant figures.
func roughTime(d time.Duration) string {
	switch {
	case d >= 1000*time.Hour:
		return fmt.Sprintf("%.2g h", d.Hours())
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

package kinds

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The server and workload kinds. The first of each is the default, for a
// server or clients mapping without a type field.

func registerModels() {
	registerServers()
	registerWorkloads()
}

func registerServers() {
	registerServer(&Kind{Name: "capacity-windows", Fields: []string{"response_time", "phases", "fallback_phases", "trace", "window", "reject", "retry_after"},
		About: "phases of capacity: admit N per window, reject the rest; every response after response_time"},
		serverFuncs[*sim.CapacityWindows]{
			decode: func(d *schema.Decoder, m *schema.Mapping, path string) *sim.CapacityWindows {
				return decodeCapacityWindows(d, m, path)
			},
			describe:    describeCapacityWindows,
			minResponse: func(s *sim.CapacityWindows) time.Duration { return minDistribution(s.ResponseTime) },
			instant: func(s *sim.CapacityWindows) bool {
				return s.ResponseTime == sim.Fixed(0) && noServerWait(s.Phases) && noServerWait(s.FallbackPhases)
			},
			clone: func(s *sim.CapacityWindows) *sim.CapacityWindows {
				c := *s
				c.Phases = slices.Clone(s.Phases)
				c.FallbackPhases = slices.Clone(s.FallbackPhases)
				return &c
			},
		},
		serverParam[*sim.CapacityWindows]{paramCapacity, func(s *sim.CapacityWindows, v int64) error {
			last := &s.Phases[len(s.Phases)-1]
			last.Admit = int(v)
			if last.Window <= 0 {
				last.Window = time.Second
			}
			return nil
		}},
		serverParam[*sim.CapacityWindows]{paramOutage, func(s *sim.CapacityWindows, v int64) error {
			if len(s.Phases) < 2 {
				return errors.New("the server has one phase; an outage needs a first phase followed by another")
			}
			if v == 0 {
				s.Phases = s.Phases[1:]
				return nil
			}
			s.Phases[0].Duration = time.Duration(v)
			return nil
		}},
		serverParam[*sim.CapacityWindows]{paramResponseTime, func(s *sim.CapacityWindows, v int64) error {
			s.ResponseTime = sim.Fixed(time.Duration(v))
			return nil
		}})

	registerServer(&Kind{Name: "queue", Fields: []string{"concurrency", "phases", "trace", "service", "queue_limit", "reject", "retry_after", "reject_after", "drop_abandoned"},
		About: "workers serving requests first come, first served: latency grows with load"},
		serverFuncs[*sim.Queue]{
			decode:   func(d *schema.Decoder, m *schema.Mapping, path string) *sim.Queue { return decodeQueue(d, m, path) },
			describe: describeQueue,
			minResponse: func(q *sim.Queue) time.Duration {
				switch {
				case q.DropAbandoned:
					return 0
				case q.QueueLimit > 0:
					return min(q.RejectAfter, minDistribution(q.Service))
				}
				return minDistribution(q.Service)
			},
			metrics: func(q *sim.Queue) []string {
				names := []string{metrics.ServerWasted.Name, metrics.ServerWastedMs.Name}
				if q.DropAbandoned {
					names = append(names, metrics.ServerDropped.Name)
				}
				if q.QueueLimit > 0 {
					names = append(names, metrics.ServerQueueFull.Name)
				}
				return names
			},
			clone: func(q *sim.Queue) *sim.Queue {
				c := *q
				c.Phases = slices.Clone(q.Phases)
				return &c
			},
		},
		serverParam[*sim.Queue]{paramConcurrency, func(q *sim.Queue, v int64) error {
			if len(q.Phases) == 0 {
				q.Concurrency = int(v)
			} else {
				q.Phases[len(q.Phases)-1].Concurrency = int(v)
			}
			return nil
		}},
		serverParam[*sim.Queue]{paramServiceTime, func(q *sim.Queue, v int64) error {
			q.Service = sim.Fixed(time.Duration(v))
			return nil
		}})

	registerServer(&Kind{Name: "error-mix", Fields: []string{"response_time", "fail_response_time", "failures", "phases", "stream", "stream_share", "output_tokens"},
		About: "every request fails at random with the given probabilities, whatever the load"},
		serverFuncs[*sim.ErrorMix]{
			decode: func(d *schema.Decoder, m *schema.Mapping, path string) *sim.ErrorMix {
				return decodeErrorMix(d, m, path)
			},
			describe: describeErrorMix,
			minResponse: func(e *sim.ErrorMix) time.Duration {
				least := minDistribution(e.Latency)
				if e.FailLatency != nil {
					least = min(least, minDistribution(e.FailLatency))
				}
				if e.Stream {
					least = time.Duration(float64(least) * e.StreamShare) // share 0: drawn, from 0
				}
				return least
			},
			instant: func(e *sim.ErrorMix) bool {
				if e.Latency != sim.Fixed(0) || (e.FailLatency != nil && e.FailLatency != sim.Fixed(0)) {
					return false
				}
				// Only a phase that fails every request, never asking for a
				// wait, holds retries at one instant for ever: where some
				// requests succeed, every operation ends with probability 1.
				for _, ph := range e.Phases {
					fail, waits := 0.0, false
					for _, o := range ph.Outcomes {
						fail += o.P
						waits = waits || o.Reject.RetryAfter > 0
					}
					if fail >= 1 && !waits {
						return true
					}
				}
				return false
			},
			metrics: func(e *sim.ErrorMix) []string {
				if !e.Stream {
					return nil
				}
				return []string{metrics.ServerWasted.Name, metrics.ServerWastedMs.Name, metrics.ServerWastedOutputTokens.Name}
			},
			clone: func(e *sim.ErrorMix) *sim.ErrorMix {
				c := *e
				c.Phases = slices.Clone(e.Phases)
				for i := range c.Phases {
					c.Phases[i].Outcomes = slices.Clone(c.Phases[i].Outcomes)
				}
				return &c
			},
		},
		serverParam[*sim.ErrorMix]{paramResponseTime, func(e *sim.ErrorMix, v int64) error {
			e.Latency = sim.Fixed(time.Duration(v))
			return nil
		}})

	registerServer(&Kind{Name: "rate-limit", Fields: []string{"requests_per_minute", "input_tokens_per_minute", "output_tokens_per_minute",
		"input_tokens", "output_tokens", "reject_after", "retry_after_unit", "inner"},
		About: "an API key's requests and tokens per minute (429 with retry-after) in front of an inner server"},
		serverFuncs[*sim.RateLimit]{
			decode: func(d *schema.Decoder, m *schema.Mapping, path string) *sim.RateLimit {
				return decodeRateLimit(d, m, path)
			},
			describe: describeRateLimit,
			minResponse: func(r *sim.RateLimit) time.Duration {
				return min(r.RejectAfter, MinResponse(r.Inner))
			},
			metrics: func(r *sim.RateLimit) []string {
				names := []string{metrics.ServerRateLimited.Name}
				if r.InputTokensPerMinute > 0 || r.OutputTokensPerMinute > 0 {
					names = append(names, metrics.ServerTooLarge.Name)
				}
				return names
			},
			inner: func(r *sim.RateLimit) []sim.ServerModel { return []sim.ServerModel{r.Inner} },
			clone: func(r *sim.RateLimit) *sim.RateLimit {
				c := *r
				c.Inner = cloneServer(r.Inner)
				return &c
			},
		},
		serverParam[*sim.RateLimit]{paramRequestsPerMinute, func(r *sim.RateLimit, v int64) error {
			r.RequestsPerMinute = v
			return nil
		}})

	registerServer(&Kind{Name: "contention", Fields: []string{"network"},
		About: "one row under optimistic concurrency: read, then write; a write fails (409) if another committed since the read"},
		serverFuncs[*sim.Contention]{
			decode: func(d *schema.Decoder, m *schema.Mapping, path string) *sim.Contention {
				return &sim.Contention{Network: distribution(m, "network", sim.FoldedNormal{Mean: DefaultNetwork, StdDev: DefaultNetworkStdDev})}
			},
			describe:    describeContention,
			minResponse: func(c *sim.Contention) time.Duration { return 4 * minDistribution(c.Network) },
			metrics: func(*sim.Contention) []string {
				return []string{metrics.ServerReads.Name, metrics.ServerWrites.Name, metrics.ServerConflicts.Name}
			},
			clone: func(c *sim.Contention) *sim.Contention { x := *c; return &x },
		},
		serverParam[*sim.Contention]{paramNetwork, func(c *sim.Contention, v int64) error {
			if n, ok := c.Network.(sim.FoldedNormal); ok && n.Mean > 0 {
				scale := float64(v) / float64(n.Mean)
				c.Network = sim.FoldedNormal{Mean: time.Duration(v), StdDev: time.Duration(float64(n.StdDev) * scale)}
				return nil
			}
			c.Network = sim.Fixed(time.Duration(v))
			return nil
		}})
}

func registerWorkloads() {
	registerWorkload(&Kind{Name: "burst", Fields: []string{"count", "spread"},
		About: "count clients, one operation each, starting at once or uniformly over spread"},
		workloadFuncs[sim.Burst]{
			decode: func(d *schema.Decoder, m *schema.Mapping, path string) sim.Burst {
				if m.Node() != nil && !m.Has("count") {
					m.Errorf("count", "missing: how many clients start an operation")
				}
				return sim.Burst{Clients: int(m.Integer("count", 0, 1, MaxClients)), Spread: m.Duration("spread", 0)}
			},
			describe: func(w sim.Burst) string {
				if w.Spread > 0 {
					return fmt.Sprintf("%d clients, one operation each, starting uniformly over %v", w.Clients, w.Spread)
				}
				return fmt.Sprintf("%d clients, one operation each, starting at t = 0", w.Clients)
			},
			clone: func(w sim.Burst) sim.Burst { return w },
		},
		workloadParam[sim.Burst]{paramClients, func(w sim.Burst, v int64) (sim.Burst, error) {
			w.Clients = int(v)
			return w, nil
		}})

	registerWorkload(&Kind{Name: "open-loop", Fields: []string{"rate", "rates", "until", "regular", "processes", "input_tokens", "output_tokens"},
		About: "requests arrive at a rate (Poisson) whatever the server does, until a time; each is one operation"},
		workloadFuncs[*sim.OpenLoop]{
			decode: func(d *schema.Decoder, m *schema.Mapping, path string) *sim.OpenLoop {
				return decodeOpenLoop(d, m, path)
			},
			describe: describeOpenLoop,
			clone: func(w *sim.OpenLoop) *sim.OpenLoop {
				c := *w
				c.Rates = slices.Clone(w.Rates)
				return &c
			},
		},
		workloadParam[*sim.OpenLoop]{paramRate, func(w *sim.OpenLoop, v int64) (*sim.OpenLoop, error) {
			if len(w.Rates) != 1 {
				return w, errors.New("the open loop's rate changes over time (rates); only a constant rate can be set")
			}
			w.Rates = sim.ConstantRate(float64(v))
			return w, nil
		}})

	registerWorkload(&Kind{Name: "closed-loop", Fields: []string{"workers", "per_worker", "think", "spread", "until", "input_tokens", "output_tokens"},
		About: "workers each run operations back to back, a think time apart: load follows the server's speed"},
		workloadFuncs[*sim.ClosedLoop]{
			decode: func(d *schema.Decoder, m *schema.Mapping, path string) *sim.ClosedLoop {
				return decodeClosedLoop(d, m, path)
			},
			describe: func(w *sim.ClosedLoop) string {
				s := fmt.Sprintf("%d workers, up to %d operations each, back to back", w.Workers, w.PerWorker)
				if w.Think != nil {
					s += ", think " + describeDistribution(w.Think)
				}
				if w.Until > 0 {
					s += fmt.Sprintf(", none started after %v", w.Until)
				}
				return s
			},
			clone: func(w *sim.ClosedLoop) *sim.ClosedLoop { c := *w; return &c },
		},
		workloadParam[*sim.ClosedLoop]{paramClients, func(w *sim.ClosedLoop, v int64) (*sim.ClosedLoop, error) {
			w.Workers = int(v)
			return w, nil
		}})

	registerWorkload(&Kind{Name: "agent-sessions", Fields: []string{"sessions", "turns", "think", "spread", "resume", "pause", "max_repeats",
		"input_tokens", "input_growth", "output_tokens"},
		About: "agent sessions, each a chain of model calls; a failed call repeats its turn or restarts the session"},
		workloadFuncs[*sim.AgentSessions]{
			decode: func(d *schema.Decoder, m *schema.Mapping, path string) *sim.AgentSessions {
				return decodeAgentSessions(d, m, path)
			},
			describe: describeSessions,
			metrics: func(w *sim.AgentSessions) []string {
				names := []string{metrics.SessionsCompleted.Name, metrics.SessionsFailed.Name, metrics.SessionsResumed.Name, metrics.SessionsTurnsRepeated.Name}
				if w.InputTokens > 0 || w.InputGrowth > 0 || w.OutputTokens > 0 {
					names = append(names, metrics.SessionsTokensWasted.Name)
				}
				return names
			},
			clone: func(w *sim.AgentSessions) *sim.AgentSessions { c := *w; return &c },
		},
		workloadParam[*sim.AgentSessions]{paramClients, func(w *sim.AgentSessions, v int64) (*sim.AgentSessions, error) {
			w.Sessions = int(v)
			return w, nil
		}})
}

// noServerWait reports whether no phase's rejection carries a server wait.
func noServerWait(phases []sim.Phase) bool {
	for _, ph := range phases {
		if ph.Reject.RetryAfter > 0 {
			return false
		}
	}
	return true
}

// cloneServer copies a server model as its kind does; a model of no kind
// is returned as it is.
func cloneServer(s sim.ServerModel) sim.ServerModel {
	if k := serverKindOf(s); k != nil {
		return k.clone(s)
	}
	return s
}

// cloneWorkload copies a workload as its kind does.
func cloneWorkload(w sim.Workload) sim.Workload {
	if k := workloadKindOf(w); k != nil {
		return k.clone(w)
	}
	return w
}

// MinResponse is the shortest time a server model takes to answer, as its
// kind knows it; 0 when it does not.
func MinResponse(s sim.ServerModel) time.Duration {
	if k := serverKindOf(s); k != nil {
		return k.minResponse(s)
	}
	return 0
}

// kindNames lists the names of a category's kinds.
func kindNames(c Category) string {
	var names []string
	for _, k := range Kinds(c) {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

// Describers.

// describeCapacityWindows is the table of a capacity-windows server's
// phases.
func describeCapacityWindows(s *sim.CapacityWindows) Table {
	rt := "a random time"
	if f, ok := s.ResponseTime.(sim.Fixed); ok {
		rt = time.Duration(f).String()
	}
	t := Table{
		Caption: fmt.Sprintf("Server (every response arrives %s after its request)", rt),
		Header:  []string{"phase", "from", "until", "admits", "rejects with"},
		Numeric: []bool{true, true, true, false, false},
	}
	start := time.Duration(0)
	for i, p := range s.Phases {
		admits := "nothing"
		if p.Admit > 0 {
			admits = fmt.Sprintf("%d per %v window", p.Admit, p.Window)
		}
		t.Rows = append(t.Rows, append(phaseRow(i, len(s.Phases), start, p.Duration), admits, describeRejection(p.Reject)))
		start += p.Duration
	}
	return t
}

// phaseRow begins the row of phase i of n, which starts at start and lasts
// d: its number, from and until.
func phaseRow(i, n int, start, d time.Duration) []string {
	until := "forever"
	if i < n-1 {
		until = (start + d).String()
	}
	return []string{strconv.Itoa(i + 1), start.String(), until}
}

func describeRejection(r sim.Rejection) string {
	s := fmt.Sprintf("%d (%v)", r.Status, r.Class)
	if r.RetryAfter > 0 {
		s += fmt.Sprintf(", retry-after %v", r.RetryAfter)
	}
	return s
}

func describeQueue(q *sim.Queue) Table {
	var notes []string
	notes = append(notes, "service time "+describeDistribution(q.Service))
	reject := q.Reject
	if reject == (sim.Rejection{}) {
		reject = rejections["overloaded"]
	}
	if q.QueueLimit > 0 {
		notes = append(notes, fmt.Sprintf("at most %d waiting, more rejected with %s", q.QueueLimit, describeRejection(reject)))
	} else {
		notes = append(notes, "the queue has no bound")
	}
	if q.DropAbandoned {
		notes = append(notes, "requests whose client has gone are skipped")
	}
	t := Table{
		Caption: "Server: a queue of workers, first come, first served (" + strings.Join(notes, "; ") + ")",
		Header:  []string{"phase", "from", "until", "workers"},
		Numeric: []bool{true, true, true, true},
	}
	if len(q.Phases) == 0 {
		t.Rows = [][]string{{"1", "0s", "forever", strconv.Itoa(q.Concurrency)}}
		return t
	}
	start := time.Duration(0)
	for i, p := range q.Phases {
		t.Rows = append(t.Rows, append(phaseRow(i, len(q.Phases), start, p.Duration), strconv.Itoa(p.Concurrency)))
		start += p.Duration
	}
	return t
}

func describeErrorMix(e *sim.ErrorMix) Table {
	notes := []string{"responses after " + describeDistribution(e.Latency)}
	if e.FailLatency != nil {
		notes = append(notes, "failures after "+describeDistribution(e.FailLatency))
	}
	if e.Stream {
		notes = append(notes, "capacity failures come mid-stream (HTTP 200, then an overloaded_error event)")
	}
	t := Table{
		Caption: "Server: random failures whatever the load (" + strings.Join(notes, "; ") + ")",
		Header:  []string{"phase", "from", "until", "fails with"},
		Numeric: []bool{true, true, true, false},
	}
	start := time.Duration(0)
	for i, p := range e.Phases {
		var fails []string
		for _, o := range p.Outcomes {
			fails = append(fails, fmt.Sprintf("%s%%: %s", strconv.FormatFloat(100*o.P, 'g', 4, 64), describeRejection(o.Reject)))
		}
		if len(fails) == 0 {
			fails = []string{"nothing"}
		}
		t.Rows = append(t.Rows, append(phaseRow(i, len(e.Phases), start, p.Duration), strings.Join(fails, "; ")))
		start += p.Duration
	}
	return t
}

func describeRateLimit(r *sim.RateLimit) Table {
	var limits []string
	for _, l := range []struct {
		n    int64
		what string
	}{{r.RequestsPerMinute, "requests"}, {r.InputTokensPerMinute, "input tokens"}, {r.OutputTokensPerMinute, "output tokens"}} {
		if l.n > 0 {
			limits = append(limits, fmt.Sprintf("%d %s", l.n, l.what))
		}
	}
	inner := DescribeServer(r.Inner)
	about := strings.TrimPrefix(inner.Caption, "Server")
	if k := serverKindOf(r.Inner); k != nil {
		about = k.Name + about
	}
	inner.Caption = fmt.Sprintf("Server: one API key limited to %s per minute (429 with retry-after), in front of %s",
		strings.Join(limits, ", "), about)
	return inner
}

func describeContention(c *sim.Contention) Table {
	t := Table{
		Caption: "Server: one row under optimistic concurrency (an attempt reads the row's version, then writes with it; " +
			"the write commits only if no write committed since the read, otherwise it fails with " + describeRejection(sim.Conflict) + ")",
		Header:  []string{"message", "one-way network delay"},
		Numeric: []bool{false, false},
	}
	for _, msg := range []string{"read request", "read response", "write request", "write response"} {
		t.Rows = append(t.Rows, []string{msg, describeDistribution(c.Network)})
	}
	return t
}

func describeOpenLoop(w *sim.OpenLoop) string {
	kind := "Poisson"
	if w.Regular {
		kind = "evenly spaced"
	}
	rate := fmt.Sprintf("%s per second", strconv.FormatFloat(w.Rates[0].PerSecond, 'g', -1, 64))
	if len(w.Rates) > 1 {
		rate = fmt.Sprintf("a rate that changes %d times", len(w.Rates)-1)
	}
	out := fmt.Sprintf("%s arrivals at %s until %v (about %d operations), one operation each", kind, rate, w.Until, w.Operations())
	if w.Processes > 1 {
		out += fmt.Sprintf(", dealt in turn to %d client processes with a retry layer each", w.Processes)
	}
	return out
}

func describeSessions(w *sim.AgentSessions) string {
	s := fmt.Sprintf("%d agent sessions of %d model calls", w.Sessions, w.Turns)
	if w.Think != nil {
		s += ", think " + describeDistribution(w.Think)
	}
	if w.MaxRepeats == 0 {
		return s + "; a call that gives up fails its session"
	}
	how := "repeats the turn"
	if w.Resume == sim.ResumeRestart {
		how = "restarts the session"
	}
	return s + fmt.Sprintf("; after a call gives up, the session %s %v later, at most %d times", how, w.Pause, w.MaxRepeats)
}

package scenarios

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/sim"
)

// The decoders of the server models and workloads other than the default
// ones, and what they share: distributions and capacity traces.
// kinds_models.go registers them.

// distribution reads a distribution at key: a duration (always that
// duration) or a mapping with one key, the name of a distribution kind
// (kinds_dists.go): {fixed: 100ms}, {exponential: 100ms} (the mean),
// {lognormal: {median: 1s, p99: 10s}}, {normal: {mean: 10ms, stddev: 2ms}}
// (folded: |N(mean, stddev)|) or {uniform: [50ms, 150ms]}. It returns def
// when key is absent or wrong.
func (m *mapping) distribution(key string, def sim.Distribution) sim.Distribution {
	v := m.get(key)
	if v == nil {
		return def
	}
	if v.Kind == yaml.ScalarNode {
		if d := m.duration(key, -1); d >= 0 {
			return sim.Fixed(d)
		}
		return def
	}
	if v.Kind != yaml.MappingNode {
		m.errorf(key, "want a duration or a distribution such as {exponential: 100ms}, got %s", describe(v))
		return def
	}
	dm := m.d.mapping(v, m.field(key))
	if len(dm.order) != 1 {
		for _, k := range dm.order {
			dm.get(k)
		}
		m.d.errorf(v, dm.path, "want one distribution: a mapping with one of %s, such as {exponential: 100ms}", strings.Join(distributionNames(), ", "))
		return def
	}
	before := m.d.problems
	var out sim.Distribution
	if k := lookupDistribution(dm.order[0]); k != nil {
		out = k.decode(dm)
	}
	dm.finish(distributionNames()...)
	if m.d.problems > before || out == nil {
		return def
	}
	return out
}

// distParams opens the mapping of the parameters of the distribution
// name; nil (after an error) when it is null, which has no position of
// its own.
func distParams(dm *mapping, name, want string) *mapping {
	if dm.get(name) == nil {
		dm.errorf(name, "want %s", want)
		return nil
	}
	return dm.d.mapping(dm.get(name), dm.field(name))
}

// durationItem reads a list item as a duration; 0 after an error.
func (d *decoder) durationItem(n *yaml.Node, field string) time.Duration {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		got := "nothing"
		if n != nil {
			got = describe(n)
		}
		d.errorf(n, field, "want a duration, got %s", got)
		return 0
	}
	return d.durationOf(n, field, 0)
}

// traceLine is the prefix of the errors of sim's trace readers.
var traceLine = regexp.MustCompile(`^capacity trace: line (\d+): `)

// traceRows reads the CSV file named by m's trace field, relative to the
// scenario file's folder, with parse. Errors name the CSV file and line.
func traceRows[T any](d *decoder, m *mapping, parse func(io.Reader) ([]T, error)) []T {
	name := m.str("trace", "")
	switch {
	case name == "" && m.has("trace"):
		m.errorf("trace", "want the path of a CSV file")
		return nil
	case d.dir == "":
		m.errorf("trace", "cannot read %q: traces are read next to a scenario file loaded from disk (--file PATH), and this one was not", name)
		return nil
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.dir, name)
	}
	read := d.read
	if read == nil {
		read = readFile
	}
	data, err := read(path)
	if err != nil {
		m.errorf("trace", "%v", err)
		return nil
	}
	rows, err := parse(bytes.NewReader(data))
	if err != nil {
		msg := err.Error()
		if loc := traceLine.FindStringSubmatchIndex(msg); loc != nil {
			msg = fmt.Sprintf("%s:%s: %s", name, msg[loc[2]:loc[3]], msg[loc[1]:])
		} else {
			msg = name + ": " + strings.TrimPrefix(msg, "capacity trace: ")
		}
		m.errorf("trace", "%s", msg)
		return nil
	}
	return rows
}

// oneOf reports a problem unless at most one of keys is set, and returns
// the one set ("" for none).
func oneOf(m *mapping, keys ...string) string {
	set := ""
	for _, k := range keys {
		if !m.has(k) {
			continue
		}
		if set != "" {
			m.errorf(k, "set one of %s, not both %s and %s", strings.Join(keys, ", "), set, k)
			continue
		}
		set = k
	}
	return set
}

// phaseDurations checks the duration of each phase but the last (> 0) and
// returns it.
func phaseDuration(pm *mapping, last bool) time.Duration {
	d := pm.duration("duration", 0)
	if !last && d == 0 {
		pm.errorf("duration", "must be > 0: only the last phase may run on forever")
	}
	return d
}

// Servers.

// queue reads a queue server: workers (concurrency, phases or trace), the
// service time, and the bounded queue's rejection.
func (d *decoder) queue(m *mapping, path string) *sim.Queue {
	q := &sim.Queue{}
	switch oneOf(m, "concurrency", "phases", "trace") {
	case "trace":
		q.Phases = traceRows(d, m, sim.WorkerPhasesFromCSV)
	case "phases":
		items := m.sequence("phases")
		if len(items) == 0 {
			m.errorf("phases", "the list is empty")
		}
		for i, item := range items {
			pm := d.mapping(item, fmt.Sprintf("%s.phases[%d]", path, i))
			last := i == len(items)-1
			p := sim.WorkerPhase{Duration: phaseDuration(pm, last)}
			if !pm.has("concurrency") && item != nil {
				pm.errorf("concurrency", "missing: the workers during the phase")
			}
			lo := int64(0)
			if last {
				lo = 1 // requests would wait for ever
			}
			p.Concurrency = int(pm.integer("concurrency", lo, lo, sim.MaxConcurrency))
			pm.finish("duration", "concurrency")
			q.Phases = append(q.Phases, p)
		}
	case "concurrency":
		q.Concurrency = int(m.integer("concurrency", 1, 1, sim.MaxConcurrency))
	default:
		if m.node != nil {
			m.errorf("concurrency", "missing: how many workers serve requests (or phases of workers, or a trace)")
		}
	}
	if !m.has("service") && m.node != nil {
		m.errorf("service", "missing: a worker's time per request, such as {exponential: 100ms}")
	}
	q.Service = m.distribution("service", sim.Fixed(DefaultResponseTime))
	q.QueueLimit = int(m.integer("queue_limit", 0, 0, 1<<31-1))
	q.DropAbandoned = m.boolean("drop_abandoned", false)
	q.Reject = rejection(m, "overloaded")
	q.RejectAfter = m.duration("reject_after", 0)
	if q.QueueLimit == 0 {
		for _, f := range []string{"reject_after", "reject", "retry_after"} {
			if m.has(f) && (f == "reject_after" || !q.DropAbandoned) {
				m.errorf(f, "has no effect: the queue rejects only when it is full (set queue_limit)")
			}
		}
	}
	return q
}

// errorMix reads an error-mix server: failures and their probabilities
// (one set, or per phase) and response times.
func (d *decoder) errorMix(m *mapping, path string) *sim.ErrorMix {
	e := &sim.ErrorMix{Latency: m.distribution("response_time", sim.Fixed(DefaultResponseTime))}
	if m.has("fail_response_time") {
		e.FailLatency = m.distribution("fail_response_time", nil)
	}
	switch oneOf(m, "failures", "phases") {
	case "failures":
		e.Phases = []sim.MixPhase{{Outcomes: d.failures(m, m.field("failures"))}}
	case "phases":
		items := m.sequence("phases")
		if len(items) == 0 {
			m.errorf("phases", "the list is empty")
		}
		for i, item := range items {
			field := fmt.Sprintf("%s.phases[%d]", path, i)
			pm := d.mapping(item, field)
			p := sim.MixPhase{Duration: phaseDuration(pm, i == len(items)-1)}
			p.Outcomes = d.failures(pm, pm.field("failures"))
			pm.finish("duration", "failures")
			e.Phases = append(e.Phases, p)
		}
	default:
		if m.node != nil {
			m.errorf("failures", "missing: the failures and their probabilities, such as [{probability: 0.1, reject: server-error}] (or phases of them)")
		}
	}
	e.Stream = m.boolean("stream", false)
	if m.has("stream_share") && !e.Stream {
		m.errorf("stream_share", "has no effect without stream: true")
	}
	e.StreamShare = m.number("stream_share", 0, 0, 1)
	e.OutputTokens = int(m.integer("output_tokens", 0, 0, 1<<31-1))
	return e
}

// failures reads the failures list of m (at field): probability, reject
// and retry_after each. A missing list is no failures.
func (d *decoder) failures(m *mapping, field string) []sim.MixOutcome {
	var out []sim.MixOutcome
	sum := 0.0
	before := d.problems
	for i, item := range m.sequence("failures") {
		fm := d.mapping(item, fmt.Sprintf("%s[%d]", field, i))
		if !fm.has("probability") && item != nil {
			fm.errorf("probability", "missing: the chance, from 0 to 1, that a request fails so")
		}
		o := sim.MixOutcome{P: fm.number("probability", 0, 0, 1), Reject: rejection(fm, "overloaded")}
		fm.finish("probability", "reject", "retry_after")
		sum += o.P
		out = append(out, o)
	}
	if sum > 1+1e-9 && d.problems == before {
		m.errorf("failures", "the probabilities add up to %g, more than 1", sum)
	}
	return out
}

// rateLimit reads a rate-limit server and the inner server it guards.
func (d *decoder) rateLimit(m *mapping, path string) *sim.RateLimit {
	r := &sim.RateLimit{
		RequestsPerMinute:     m.integer("requests_per_minute", 0, 0, sim.MaxPerMinute),
		InputTokensPerMinute:  m.integer("input_tokens_per_minute", 0, 0, sim.MaxPerMinute),
		OutputTokensPerMinute: m.integer("output_tokens_per_minute", 0, 0, sim.MaxPerMinute),
		InputTokens:           int(m.integer("input_tokens", 0, 0, 1<<31-1)),
		OutputTokens:          int(m.integer("output_tokens", 0, 0, 1<<31-1)),
		RejectAfter:           m.duration("reject_after", 0),
		RetryAfterUnit:        m.duration("retry_after_unit", 0),
	}
	if m.node != nil && !m.has("requests_per_minute") && !m.has("input_tokens_per_minute") && !m.has("output_tokens_per_minute") {
		m.errorf("requests_per_minute", "missing: set at least one limit (requests_per_minute, input_tokens_per_minute, output_tokens_per_minute)")
	}
	if !m.has("inner") {
		if m.node != nil {
			m.errorf("inner", "missing: the server behind the key's limits, such as {type: error-mix, failures: [...]}")
		}
		return r
	}
	r.Inner = d.server(m.get("inner"), m.field("inner"))
	return r
}

// Workloads.

// openLoop reads an open-loop workload: a constant rate or steps of
// rates, and when arrivals stop.
func (d *decoder) openLoop(m *mapping, path string) *sim.OpenLoop {
	w := &sim.OpenLoop{}
	switch oneOf(m, "rate", "rates") {
	case "rate":
		w.Rates = sim.ConstantRate(m.number("rate", 0, 0, MaxClients))
	case "rates":
		items := m.sequence("rates")
		if len(items) == 0 {
			m.errorf("rates", "the list is empty")
		}
		for i, item := range items {
			rm := d.mapping(item, fmt.Sprintf("%s.rates[%d]", path, i))
			st := sim.RateStep{At: rm.duration("at", 0), PerSecond: rm.number("per_second", 0, 0, MaxClients), Ramp: rm.boolean("ramp", false)}
			switch {
			case !rm.has("per_second") && item != nil:
				rm.errorf("per_second", "missing: arrivals per second from at on")
			case i == 0 && st.At != 0:
				rm.errorf("at", "the first rate starts at 0, got %v", st.At)
			case i > 0 && st.At <= w.Rates[i-1].At:
				rm.errorf("at", "must be after the previous rate's (%v), got %v", w.Rates[i-1].At, st.At)
			case st.Ramp && i == len(items)-1:
				rm.errorf("ramp", "the last rate holds for ever; it cannot ramp")
			}
			rm.finish("at", "per_second", "ramp")
			w.Rates = append(w.Rates, st)
		}
	default:
		if m.node != nil {
			m.errorf("rate", "missing: arrivals per second (or rates, steps of them)")
		}
	}
	if !m.has("until") && m.node != nil {
		m.errorf("until", "missing: when arrivals stop")
	}
	w.Until = m.duration("until", time.Second)
	if m.has("until") && w.Until == 0 {
		m.errorf("until", "must be > 0")
	}
	w.Regular = m.boolean("regular", false)
	w.Processes = int(m.integer("processes", 0, 1, sim.MaxProcesses))
	w.InputTokens = int(m.integer("input_tokens", 0, 0, 1<<31-1))
	w.OutputTokens = int(m.integer("output_tokens", 0, 0, 1<<31-1))
	return w
}

// closedLoop reads a closed-loop workload: workers running operations
// back to back.
func (d *decoder) closedLoop(m *mapping, path string) *sim.ClosedLoop {
	for _, f := range []string{"workers", "per_worker"} {
		if !m.has(f) && m.node != nil {
			m.errorf(f, "missing: %s", map[string]string{"workers": "how many workers run operations", "per_worker": "the most operations each worker runs"}[f])
		}
	}
	return &sim.ClosedLoop{
		Workers:      int(m.integer("workers", 1, 1, MaxClients)),
		PerWorker:    int(m.integer("per_worker", 1, 1, MaxClients)),
		Think:        m.distribution("think", nil),
		Spread:       m.duration("spread", 0),
		Until:        m.duration("until", 0),
		InputTokens:  int(m.integer("input_tokens", 0, 0, 1<<31-1)),
		OutputTokens: int(m.integer("output_tokens", 0, 0, 1<<31-1)),
	}
}

// MaxTurns and MaxRepeats bound an agent session's turns and repeats.
const (
	MaxTurns   = 10_000
	MaxRepeats = 1_000
)

// agentSessions reads an agent-sessions workload.
func (d *decoder) agentSessions(m *mapping, path string) *sim.AgentSessions {
	for _, f := range []string{"sessions", "turns"} {
		if !m.has(f) && m.node != nil {
			m.errorf(f, "missing: %s", map[string]string{"sessions": "how many agent sessions run", "turns": "model calls per session"}[f])
		}
	}
	w := &sim.AgentSessions{
		Sessions:     int(m.integer("sessions", 1, 1, MaxClients)),
		Turns:        int(m.integer("turns", 1, 1, MaxTurns)),
		Think:        m.distribution("think", nil),
		Spread:       m.duration("spread", 0),
		Pause:        m.duration("pause", 0),
		MaxRepeats:   int(m.integer("max_repeats", 0, 0, MaxRepeats)),
		InputTokens:  int(m.integer("input_tokens", 0, 0, 1<<31-1)),
		InputGrowth:  int(m.integer("input_growth", 0, 0, 1<<31-1)),
		OutputTokens: int(m.integer("output_tokens", 0, 0, 1<<31-1)),
	}
	switch r := m.str("resume", "turn"); r {
	case "turn":
		w.Resume = sim.ResumeTurn
	case "restart":
		w.Resume = sim.ResumeRestart
	default:
		m.errorf("resume", "want turn (repeat the failed call) or restart (start the session again), got %q", r)
	}
	if w.MaxRepeats == 0 {
		for _, f := range []string{"resume", "pause"} {
			if m.has(f) {
				m.errorf(f, "has no effect: a session that fails a call stops unless max_repeats > 0")
			}
		}
	}
	return w
}

package kinds

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The decoders of the server models and workloads other than the default
// ones, and what they share: distributions and capacity traces.
// models.go registers them.

// distribution reads a distribution at key: a duration (always that
// duration) or a mapping with one key, the name of a distribution kind
// (distributions.go): {fixed: 100ms}, {exponential: 100ms} (the mean),
// {lognormal: {median: 1s, p99: 10s}}, {normal: {mean: 10ms, stddev: 2ms}}
// (folded: |N(mean, stddev)|) or {uniform: [50ms, 150ms]}. It returns def
// when key is absent or wrong.
func distribution(m *schema.Mapping, key string, def sim.Distribution) sim.Distribution {
	v := m.Get(key)
	if v == nil {
		return def
	}
	if v.Kind == yaml.ScalarNode {
		if d := m.Duration(key, -1); d >= 0 {
			return sim.Fixed(d)
		}
		return def
	}
	if v.Kind != yaml.MappingNode {
		m.Errorf(key, "want a duration or a distribution such as {exponential: 100ms}, got %s", schema.Describe(v))
		return def
	}
	dm := m.Decoder().Mapping(v, m.Field(key))
	if len(dm.Keys()) != 1 {
		for _, k := range dm.Keys() {
			dm.Get(k)
		}
		m.Decoder().Errorf(v, dm.Path(), "want one distribution: a mapping with one of %s, such as {exponential: 100ms}", strings.Join(distributionNames(), ", "))
		return def
	}
	before := m.Decoder().Problems()
	var out sim.Distribution
	if k := lookupDistribution(dm.Keys()[0]); k != nil {
		out = k.decode(dm)
	}
	dm.Finish(distributionNames()...)
	if m.Decoder().Problems() > before || out == nil {
		return def
	}
	return out
}

// distParams opens the mapping of the parameters of the distribution
// name; nil (after an error) when it is null, which has no position of
// its own.
func distParams(dm *schema.Mapping, name, want string) *schema.Mapping {
	if dm.Get(name) == nil {
		dm.Errorf(name, "want %s", want)
		return nil
	}
	return dm.Decoder().Mapping(dm.Get(name), dm.Field(name))
}

// traceLine is the prefix of the errors of sim's trace readers.
var traceLine = regexp.MustCompile(`^capacity trace: line (\d+): `)

// traceRows reads the CSV file named by m's trace field, relative to the
// scenario file's folder, with parse. Errors name the CSV file and line.
func traceRows[T any](d *schema.Decoder, m *schema.Mapping, parse func(io.Reader) ([]T, error)) []T {
	name := m.Str("trace", "")
	switch {
	case name == "" && m.Has("trace"):
		m.Errorf("trace", "want the path of a CSV file")
		return nil
	case d.Dir == "":
		m.Errorf("trace", "cannot read %q: traces are read next to a scenario file loaded from disk (--file PATH), and this one was not", name)
		return nil
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.Dir, name)
	}
	read := d.Read
	if read == nil {
		read = schema.ReadFile
	}
	data, err := read(path)
	if err != nil {
		m.Errorf("trace", "%v", err)
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
		m.Errorf("trace", "%s", msg)
		return nil
	}
	return rows
}

// oneOf reports a problem unless at most one of keys is set, and returns
// the one set ("" for none).
func oneOf(m *schema.Mapping, keys ...string) string {
	set := ""
	for _, k := range keys {
		if !m.Has(k) {
			continue
		}
		if set != "" {
			m.Errorf(k, "set one of %s, not both %s and %s", strings.Join(keys, ", "), set, k)
			continue
		}
		set = k
	}
	return set
}

// phaseDurations checks the duration of each phase but the last (> 0) and
// returns it.
func phaseDuration(pm *schema.Mapping, last bool) time.Duration {
	d := pm.Duration("duration", 0)
	if !last && d == 0 {
		pm.Errorf("duration", "must be > 0: only the last phase may run on forever")
	}
	return d
}

// Servers.

// queue reads a queue server: workers (concurrency, phases or trace), the
// service time, and the bounded queue's rejection.
func decodeQueue(d *schema.Decoder, m *schema.Mapping, path string) *sim.Queue {
	q := &sim.Queue{}
	switch oneOf(m, "concurrency", "phases", "trace") {
	case "trace":
		q.Phases = traceRows(d, m, sim.WorkerPhasesFromCSV)
	case "phases":
		items := m.Sequence("phases")
		if len(items) == 0 {
			m.Errorf("phases", "the list is empty")
		}
		for i, item := range items {
			pm := d.Mapping(item, fmt.Sprintf("%s.phases[%d]", path, i))
			last := i == len(items)-1
			p := sim.WorkerPhase{Duration: phaseDuration(pm, last)}
			if !pm.Has("concurrency") && item != nil {
				pm.Errorf("concurrency", "missing: the workers during the phase")
			}
			lo := int64(0)
			if last {
				lo = 1 // requests would wait for ever
			}
			p.Concurrency = int(pm.Integer("concurrency", lo, lo, sim.MaxConcurrency))
			pm.Finish()
			q.Phases = append(q.Phases, p)
		}
	case "concurrency":
		q.Concurrency = int(m.Integer("concurrency", 1, 1, sim.MaxConcurrency))
	default:
		if m.Node() != nil {
			m.Errorf("concurrency", "missing: how many workers serve requests (or phases of workers, or a trace)")
		}
	}
	if !m.Has("service") && m.Node() != nil {
		m.Errorf("service", "missing: a worker's time per request, such as {exponential: 100ms}")
	}
	q.Service = distribution(m, "service", sim.Fixed(DefaultResponseTime))
	q.QueueLimit = int(m.Integer("queue_limit", 0, 0, 1<<31-1))
	q.DropAbandoned = m.Boolean("drop_abandoned", false)
	q.Reject = rejection(m, "overloaded")
	q.RejectAfter = m.Duration("reject_after", 0)
	if q.QueueLimit == 0 {
		for _, f := range []string{"reject_after", "reject", "retry_after"} {
			if m.Has(f) && (f == "reject_after" || !q.DropAbandoned) {
				m.Errorf(f, "has no effect: the queue rejects only when it is full (set queue_limit)")
			}
		}
	}
	return q
}

// errorMix reads an error-mix server: failures and their probabilities
// (one set, or per phase) and response times.
func decodeErrorMix(d *schema.Decoder, m *schema.Mapping, path string) *sim.ErrorMix {
	e := &sim.ErrorMix{Latency: distribution(m, "response_time", sim.Fixed(DefaultResponseTime))}
	if m.Has("fail_response_time") {
		e.FailLatency = distribution(m, "fail_response_time", nil)
	}
	switch oneOf(m, "failures", "phases") {
	case "failures":
		e.Phases = []sim.MixPhase{{Outcomes: decodeFailures(d, m, m.Field("failures"))}}
	case "phases":
		items := m.Sequence("phases")
		if len(items) == 0 {
			m.Errorf("phases", "the list is empty")
		}
		for i, item := range items {
			field := fmt.Sprintf("%s.phases[%d]", path, i)
			pm := d.Mapping(item, field)
			p := sim.MixPhase{Duration: phaseDuration(pm, i == len(items)-1)}
			p.Outcomes = decodeFailures(d, pm, pm.Field("failures"))
			pm.Finish()
			e.Phases = append(e.Phases, p)
		}
	default:
		if m.Node() != nil {
			m.Errorf("failures", "missing: the failures and their probabilities, such as [{probability: 0.1, reject: server-error}] (or phases of them)")
		}
	}
	e.Stream = m.Boolean("stream", false)
	if m.Has("stream_share") && !e.Stream {
		m.Errorf("stream_share", "has no effect without stream: true")
	}
	e.StreamShare = m.Number("stream_share", 0, 0, 1)
	e.OutputTokens = int(m.Integer("output_tokens", 0, 0, 1<<31-1))
	return e
}

// failures reads the failures list of m (at field): probability, reject
// and retry_after each. A missing list is no failures.
func decodeFailures(d *schema.Decoder, m *schema.Mapping, field string) []sim.MixOutcome {
	var out []sim.MixOutcome
	sum := 0.0
	before := d.Problems()
	for i, item := range m.Sequence("failures") {
		fm := d.Mapping(item, fmt.Sprintf("%s[%d]", field, i))
		if !fm.Has("probability") && item != nil {
			fm.Errorf("probability", "missing: the chance, from 0 to 1, that a request fails so")
		}
		o := sim.MixOutcome{P: fm.Number("probability", 0, 0, 1), Reject: rejection(fm, "overloaded")}
		fm.Finish()
		sum += o.P
		out = append(out, o)
	}
	if sum > 1+1e-9 && d.Problems() == before {
		m.Errorf("failures", "the probabilities add up to %g, more than 1", sum)
	}
	return out
}

// rateLimit reads a rate-limit server and the inner server it guards.
func decodeRateLimit(d *schema.Decoder, m *schema.Mapping, path string) *sim.RateLimit {
	r := &sim.RateLimit{
		RequestsPerMinute:     m.Integer("requests_per_minute", 0, 0, sim.MaxPerMinute),
		InputTokensPerMinute:  m.Integer("input_tokens_per_minute", 0, 0, sim.MaxPerMinute),
		OutputTokensPerMinute: m.Integer("output_tokens_per_minute", 0, 0, sim.MaxPerMinute),
		InputTokens:           int(m.Integer("input_tokens", 0, 0, 1<<31-1)),
		OutputTokens:          int(m.Integer("output_tokens", 0, 0, 1<<31-1)),
		RejectAfter:           m.Duration("reject_after", 0),
		RetryAfterUnit:        m.Duration("retry_after_unit", 0),
	}
	if m.Node() != nil && !m.Has("requests_per_minute") && !m.Has("input_tokens_per_minute") && !m.Has("output_tokens_per_minute") {
		m.Errorf("requests_per_minute", "missing: set at least one limit (requests_per_minute, input_tokens_per_minute, output_tokens_per_minute)")
	}
	if !m.Has("inner") {
		if m.Node() != nil {
			m.Errorf("inner", "missing: the server behind the key's limits, such as {type: error-mix, failures: [...]}")
		}
		return r
	}
	r.Inner = DecodeServer(d, m.Get("inner"), m.Field("inner"))
	return r
}

// Workloads.

// openLoop reads an open-loop workload: a constant rate or steps of
// rates, and when arrivals stop.
func decodeOpenLoop(d *schema.Decoder, m *schema.Mapping, path string) *sim.OpenLoop {
	w := &sim.OpenLoop{}
	switch oneOf(m, "rate", "rates") {
	case "rate":
		w.Rates = sim.ConstantRate(m.Number("rate", 0, 0, MaxClients))
	case "rates":
		items := m.Sequence("rates")
		if len(items) == 0 {
			m.Errorf("rates", "the list is empty")
		}
		for i, item := range items {
			rm := d.Mapping(item, fmt.Sprintf("%s.rates[%d]", path, i))
			st := sim.RateStep{At: rm.Duration("at", 0), PerSecond: rm.Number("per_second", 0, 0, MaxClients), Ramp: rm.Boolean("ramp", false)}
			switch {
			case !rm.Has("per_second") && item != nil:
				rm.Errorf("per_second", "missing: arrivals per second from at on")
			case i == 0 && st.At != 0:
				rm.Errorf("at", "the first rate starts at 0, got %v", st.At)
			case i > 0 && st.At <= w.Rates[i-1].At:
				rm.Errorf("at", "must be after the previous rate's (%v), got %v", w.Rates[i-1].At, st.At)
			case st.Ramp && i == len(items)-1:
				rm.Errorf("ramp", "the last rate holds for ever; it cannot ramp")
			}
			rm.Finish()
			w.Rates = append(w.Rates, st)
		}
	default:
		if m.Node() != nil {
			m.Errorf("rate", "missing: arrivals per second (or rates, steps of them)")
		}
	}
	if !m.Has("until") && m.Node() != nil {
		m.Errorf("until", "missing: when arrivals stop")
	}
	w.Until = m.Duration("until", time.Second)
	if m.Has("until") && w.Until == 0 {
		m.Errorf("until", "must be > 0")
	}
	w.Regular = m.Boolean("regular", false)
	w.Processes = int(m.Integer("processes", 0, 1, sim.MaxProcesses))
	w.InputTokens = int(m.Integer("input_tokens", 0, 0, 1<<31-1))
	w.OutputTokens = int(m.Integer("output_tokens", 0, 0, 1<<31-1))
	return w
}

// closedLoop reads a closed-loop workload: workers running operations
// back to back.
func decodeClosedLoop(d *schema.Decoder, m *schema.Mapping, path string) *sim.ClosedLoop {
	for _, f := range []string{"workers", "per_worker"} {
		if !m.Has(f) && m.Node() != nil {
			m.Errorf(f, "missing: %s", map[string]string{"workers": "how many workers run operations", "per_worker": "the most operations each worker runs"}[f])
		}
	}
	return &sim.ClosedLoop{
		Workers:      int(m.Integer("workers", 1, 1, MaxClients)),
		PerWorker:    int(m.Integer("per_worker", 1, 1, MaxClients)),
		Think:        distribution(m, "think", nil),
		Spread:       m.Duration("spread", 0),
		Until:        m.Duration("until", 0),
		InputTokens:  int(m.Integer("input_tokens", 0, 0, 1<<31-1)),
		OutputTokens: int(m.Integer("output_tokens", 0, 0, 1<<31-1)),
	}
}

// MaxTurns and MaxRepeats bound an agent session's turns and repeats.
const (
	MaxTurns   = 10_000
	MaxRepeats = 1_000
)

// agentSessions reads an agent-sessions workload.
func decodeAgentSessions(d *schema.Decoder, m *schema.Mapping, path string) *sim.AgentSessions {
	for _, f := range []string{"sessions", "turns"} {
		if !m.Has(f) && m.Node() != nil {
			m.Errorf(f, "missing: %s", map[string]string{"sessions": "how many agent sessions run", "turns": "model calls per session"}[f])
		}
	}
	w := &sim.AgentSessions{
		Sessions:     int(m.Integer("sessions", 1, 1, MaxClients)),
		Turns:        int(m.Integer("turns", 1, 1, MaxTurns)),
		Think:        distribution(m, "think", nil),
		Spread:       m.Duration("spread", 0),
		Pause:        m.Duration("pause", 0),
		MaxRepeats:   int(m.Integer("max_repeats", 0, 0, MaxRepeats)),
		InputTokens:  int(m.Integer("input_tokens", 0, 0, 1<<31-1)),
		InputGrowth:  int(m.Integer("input_growth", 0, 0, 1<<31-1)),
		OutputTokens: int(m.Integer("output_tokens", 0, 0, 1<<31-1)),
	}
	switch r := m.Str("resume", "turn"); r {
	case "turn":
		w.Resume = sim.ResumeTurn
	case "restart":
		w.Resume = sim.ResumeRestart
	default:
		m.Errorf("resume", "want turn (repeat the failed call) or restart (start the session again), got %q", r)
	}
	if w.MaxRepeats == 0 {
		for _, f := range []string{"resume", "pause"} {
			if m.Has(f) {
				m.Errorf(f, "has no effect: a session that fails a call stops unless max_repeats > 0")
			}
		}
	}
	return w
}

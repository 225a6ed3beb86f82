package kinds

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The error-mix server (sim.ErrorMix): requests fail at random, whatever the load.
func registerErrorMix() {
	registerServer(&Kind{Name: "error-mix", Fields: []string{"response_time", "fail_response_time", "failures", "phases", "stream", "stream_share", "output_tokens", "stream_events", "inner"},
		About: "every request fails at random with the given probabilities, whatever the load; with inner, the rest go on to that server"},
		serverFuncs[*sim.ErrorMix]{
			decode:   decodeErrorMix,
			describe: describeErrorMix,
			minResponse: func(e *sim.ErrorMix) time.Duration {
				least := minDistribution(e.Latency)
				if e.FailLatency != nil {
					least = min(least, minDistribution(e.FailLatency))
				}
				if e.Stream {
					least = time.Duration(float64(least) * e.StreamShare) // share 0: drawn, from 0
				}
				if e.Inner != nil {
					least = min(least, MinResponse(e.Inner))
				}
				return least
			},
			instant: func(e *sim.ErrorMix) bool {
				if e.Inner != nil {
					return false // not known
				}
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
					return streamFaultMetrics(e)
				}
				return append([]string{serverWasted.Name, serverWastedMs.Name, serverWastedOutputTokens.Name}, streamFaultMetrics(e)...)
			},
			inner: func(e *sim.ErrorMix) []sim.ServerModel {
				if e.Inner == nil {
					return nil
				}
				return []sim.ServerModel{e.Inner}
			},
			clone: func(e *sim.ErrorMix) *sim.ErrorMix {
				c := *e
				c.Phases = slices.Clone(e.Phases)
				for i := range c.Phases {
					c.Phases[i].Outcomes = slices.Clone(c.Phases[i].Outcomes)
				}
				if e.Inner != nil {
					c.Inner = cloneServer(e.Inner)
				}
				return &c
			},
			// Failures at random whatever the load: only an inner server scales.
			scale: func(e *sim.ErrorMix, f float64) (*sim.ErrorMix, error) {
				if e.Inner == nil {
					return e, nil
				}
				var err error
				e.Inner, err = scaleServer(e.Inner, f)
				return e, err
			},
		},
		serverParam[*sim.ErrorMix]{paramResponseTime, func(e *sim.ErrorMix, v int64) error {
			e.Latency = sim.Fixed(time.Duration(v))
			return nil
		}})
}

// decodeErrorMix reads an error-mix server: failures and their probabilities
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
	e.StreamEvents = int(m.Integer("stream_events", 0, 0, 10_000))
	if m.Has("inner") {
		e.Inner = decodeInner(d, m, "")
	}
	return e
}

// decodeFailures reads the failures list of m (at field): probability, reject
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
		o := sim.MixOutcome{P: fm.Number("probability", 0, 0, 1)}
		if f, ok := decodeStreamFault(d, fm); ok {
			o.Fault = f
		} else {
			o.Reject = rejection(fm, "overloaded")
		}
		fm.Finish()
		sum += o.P
		out = append(out, o)
	}
	if sum > 1+1e-9 && d.Problems() == before {
		m.Errorf("failures", "the probabilities add up to %g, more than 1", sum)
	}
	return out
}

func describeErrorMix(e *sim.ErrorMix) Table {
	notes := []string{"responses after " + describeDistribution(e.Latency)}
	if e.FailLatency != nil {
		notes = append(notes, "failures after "+describeDistribution(e.FailLatency))
	}
	if e.Stream {
		notes = append(notes, "capacity failures come mid-stream (HTTP 200, then an overloaded_error event)")
	}
	caption := "Server: random failures whatever the load (" + strings.Join(notes, "; ") + ")"
	if e.Inner != nil {
		_, about := describeInner(e.Inner)
		notes[0] = "failures after " + describeDistribution(e.Latency)
		if e.FailLatency != nil {
			notes = notes[1:]
		}
		caption = "Server: random failures whatever the load (" + strings.Join(notes, "; ") + "), in front of " + about
	}
	t := Table{
		Caption: caption,
		Header:  []string{"phase", "from", "until", "fails with"},
		Numeric: []bool{true, true, true, false},
	}
	start := time.Duration(0)
	for i, p := range e.Phases {
		var fails []string
		for _, o := range p.Outcomes {
			what := describeRejection(o.Reject)
			if o.Fault.Kind != sim.NoFault {
				what = describeStreamFault(o.Fault)
			}
			fails = append(fails, fmt.Sprintf("%s%%: %s", strconv.FormatFloat(100*o.P, 'g', 4, 64), what))
		}
		if len(fails) == 0 {
			fails = []string{"nothing"}
		}
		t.Rows = append(t.Rows, append(phaseRow(i, len(e.Phases), start, p.Duration), strings.Join(fails, "; ")))
		start += p.Duration
	}
	return t
}

// streamFaultMetrics are the metrics of a model with stream faults.
func streamFaultMetrics(e *sim.ErrorMix) []string {
	if e.StreamFaults() {
		return []string{streamFaults.Name, streamWatchdog.Name, streamWasted.Name}
	}
	return nil
}

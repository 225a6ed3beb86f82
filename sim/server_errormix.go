package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// ErrorMix is a server whose every attempt independently gets an outcome
// drawn from the current phase's probabilities (for example 529 with 3 %,
// 500 with 1 %, 429 with a retry-after with 2 %, success otherwise) and a
// response time: a server that fails at random whatever the load. One
// phase with one outcome of probability P is the classic "each call fails
// with probability P" model.
//
// With Stream, capacity failures happen inside a streamed response: the
// client receives HTTP 200, part of the answer, then an overloaded_error
// event, a Share of the way through the response time. Such a failure is
// what policies.ClassifyEvent makes of that event: Class Capacity, Status
// 200, no server wait. The output already streamed is wasted
// (the counter server.wasted_output_tokens).
//
// With Inner, the mix is a wrapper: a request it does not fail goes on to
// Inner (a capacity trace behind random failures), which answers it.
type ErrorMix struct {
	// Phases are stretches of the outcome mix, one after the other from
	// t = 0; the last lasts forever.
	Phases []MixPhase
	// Latency is the time from a request's arrival to its whole response.
	Latency Distribution
	// FailLatency, if set, is the response time of a failure that is not
	// streamed (an error status comes back sooner than a whole answer).
	FailLatency Distribution
	// Stream makes capacity failures arrive mid-stream (see ErrorMix).
	Stream bool
	// StreamShare is how far through the drawn Latency a mid-stream
	// failure comes, in (0, 1]; 0 draws it uniformly in [0, 1) per failure.
	StreamShare float64
	// OutputTokens is the size of a response for requests that give none
	// (Request.OutputTokens 0), used to count wasted tokens.
	OutputTokens int
	// StreamEvents is the content events of a streamed answer, for the
	// schedule of stream faults (StreamFault); 0 means 10.
	StreamEvents int
	// Inner, if set, answers the requests the mix does not fail, with its
	// own response time (Latency then times the failures only).
	Inner ServerModel
}

// Unwrap returns Inner (ModelWrapper); nil without one.
func (m *ErrorMix) Unwrap() ServerModel { return m.Inner }

// streamEvents returns StreamEvents or its default.
func (m *ErrorMix) streamEvents() int {
	if m.StreamEvents > 0 {
		return m.StreamEvents
	}
	return 10
}

// MixPhase is one stretch of an ErrorMix.
type MixPhase struct {
	// Duration is the phase's length; 0 in the last phase means "forever".
	Duration time.Duration
	// Outcomes are the failures and their probabilities; the rest of the
	// probability is success. Their P add up to at most 1.
	Outcomes []MixOutcome
}

// MixOutcome is one failure of an ErrorMix and its probability.
type MixOutcome struct {
	P      float64 // in [0, 1]
	Reject Rejection
	// Fault, if its Kind is not NoFault, makes the failure a stream fault
	// instead of Reject: the latency is drawn as for a success, and the
	// stream unfolds as the fault says (StreamFault.Timeline).
	Fault StreamFault
}

// FailWithProbability is the ErrorMix in which every attempt fails with
// probability p with reject, and every response takes latency.
func FailWithProbability(p float64, reject Rejection, latency Distribution) *ErrorMix {
	return &ErrorMix{Phases: []MixPhase{{Outcomes: []MixOutcome{{P: p, Reject: reject}}}}, Latency: latency}
}

// Validate reports the first problem that would make the model meaningless.
func (m *ErrorMix) Validate() error {
	if len(m.Phases) == 0 {
		return fmt.Errorf("error mix: needs at least one phase")
	}
	if err := validateDistribution("error mix: latency", m.Latency); err != nil {
		return err
	}
	if m.FailLatency != nil {
		if err := validateDistribution("error mix: fail latency", m.FailLatency); err != nil {
			return err
		}
	}
	if !(m.StreamShare >= 0 && m.StreamShare <= 1) {
		return fmt.Errorf("error mix: stream share must be in [0, 1] (got %v)", m.StreamShare)
	}
	if m.OutputTokens < 0 {
		return fmt.Errorf("error mix: negative output tokens %d", m.OutputTokens)
	}
	if m.Inner != nil {
		if err := m.Inner.Validate(); err != nil {
			return err
		}
		if DecidesLater(m.Inner) {
			return fmt.Errorf("error mix: the inner %T model decides requests after they arrive; it cannot sit behind an error mix", m.Inner)
		}
	}
	if m.StreamEvents < 0 || m.StreamEvents > 10_000 {
		return fmt.Errorf("error mix: stream events must be between 0 and 10000 (got %d)", m.StreamEvents)
	}
	for i, p := range m.Phases {
		switch {
		case p.Duration < 0:
			return fmt.Errorf("error mix: phase %d: negative duration %v", i, p.Duration)
		case p.Duration == 0 && i != len(m.Phases)-1:
			return fmt.Errorf("error mix: phase %d: only the last phase may last forever (duration 0)", i)
		}
		sum := 0.0
		for j, o := range p.Outcomes {
			switch {
			case !(o.P >= 0 && o.P <= 1):
				return fmt.Errorf("error mix: phase %d, outcome %d: probability must be in [0, 1] (got %v)", i, j, o.P)
			case o.Fault.Kind != NoFault:
				if err := o.Fault.Validate(); err != nil {
					return fmt.Errorf("error mix: phase %d, outcome %d: %w", i, j, err)
				}
			case o.Reject.Class == policies.Success:
				return fmt.Errorf("error mix: phase %d, outcome %d: a failure cannot be a success", i, j)
			}
			sum += o.P
		}
		if sum > 1+1e-9 {
			return fmt.Errorf("error mix: phase %d: probabilities add up to %v, more than 1", i, sum)
		}
	}
	return nil
}

// NewServer returns the state of one run.
func (m *ErrorMix) NewServer(rng *rand.Rand) Server {
	s := &mixState{model: m, rng: rng, phaseEnd: m.Phases[0].Duration, latency: forRun(m.Latency), failLatency: forRun(m.Latency)}
	if m.FailLatency != nil {
		s.failLatency = forRun(m.FailLatency)
	}
	if m.Inner != nil {
		s.inner = m.Inner.NewServer(rng)
		return &mixWrapper{s}
	}
	return s
}

// mixWrapper is the state of a mix with an inner server (Wrapper).
type mixWrapper struct{ *mixState }

func (w *mixWrapper) Unwrap() Server { return w.inner }

type mixState struct {
	model *ErrorMix
	// latency and failLatency are the model's, forRun (failLatency is
	// Latency when FailLatency is nil).
	latency, failLatency Distribution
	rng                  *rand.Rand
	phase                int
	phaseEnd             time.Duration
	stats                mixStats
	inner                Server // nil without an inner model
}

// Arrive draws the request's outcome, then its latency (see ErrorMix for
// the rules and docs/scenarios.md for the order of draws).
func (s *mixState) Arrive(now time.Duration, req Request) Response {
	m := s.model
	last := len(m.Phases) - 1
	for s.phase < last && now >= s.phaseEnd {
		s.phase++
		s.phaseEnd += m.Phases[s.phase].Duration
	}
	u := s.rng.Float64()
	var failed *Rejection
	var fault *StreamFault
	cum := 0.0
	for i := range m.Phases[s.phase].Outcomes {
		o := &m.Phases[s.phase].Outcomes[i]
		if cum += o.P; u < cum {
			failed, fault = &o.Reject, &o.Fault
			break
		}
	}
	if failed == nil {
		if s.inner != nil {
			return s.inner.Arrive(now, req)
		}
		return Response{At: now + s.latency.Sample(s.rng), Events: int32(m.streamEvents())}
	}
	r := s.fail(now, req, failed, fault)
	if s.inner != nil {
		r.Ticket = ownTicket
	}
	return r
}

// fail is the mix's answer to a request it fails.
func (s *mixState) fail(now time.Duration, req Request, failed *Rejection, fault *StreamFault) Response {
	m := s.model
	if fault.Kind != NoFault {
		t := fault.Timeline(s.latency.Sample(s.rng), m.streamEvents())
		s.stats.Faults++
		return Response{Outcome: streamCut(t), At: now + t.End, Stream: &t, Events: int32(m.streamEvents())}
	}
	if m.Stream && failed.Class == policies.Capacity {
		full := s.latency.Sample(s.rng)
		share := m.StreamShare
		if share == 0 {
			share = s.rng.Float64()
		}
		part := time.Duration(float64(float64(full) * share))
		out := req.OutputTokens
		if out == 0 {
			out = m.OutputTokens
		}
		s.stats.Wasted++
		s.stats.WastedTime += part
		s.stats.WastedOutputTokens += int64(math.Floor(float64(float64(out) * share)))
		return Response{Outcome: policies.Outcome{Class: policies.Capacity, Status: http.StatusOK}, At: now + part}
	}
	return Response{Outcome: failed.Outcome(), At: now + s.failLatency.Sample(s.rng)}
}

// MidStreamFailures reports whether capacity failures come mid-stream.
func (m *ErrorMix) MidStreamFailures() bool { return m.Stream }

// mixStats is what a mix counts in a run: its mid-stream failures
// (Wasted), the streaming time they took and the output tokens streamed
// before them.
type mixStats struct {
	Wasted             int
	WastedTime         time.Duration
	WastedOutputTokens int64
	Faults             int64 // stream faults served
}

// ReportCounters reports the mid-stream failures: server.wasted,
// server.wasted_time and server.wasted_output_tokens.
func (s *mixState) ReportCounters(c *Counters) { s.stats.report(c) }

// report adds the counts to c.
func (st mixStats) report(c *Counters) {
	c.Add("server.wasted", int64(st.Wasted))
	c.Add("server.wasted_time", int64(st.WastedTime))
	c.Add("server.wasted_output_tokens", st.WastedOutputTokens)
	if st.Faults > 0 {
		c.Add("server.stream_faults", st.Faults)
	}
}

// StreamFaults reports whether some of the mix's failures are stream faults.
func (m *ErrorMix) StreamFaults() bool {
	for _, p := range m.Phases {
		for _, o := range p.Outcomes {
			if o.Fault.Kind != NoFault {
				return true
			}
		}
	}
	return false
}

package sim

import (
	"fmt"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// StreamFaultKind is how a faulted stream fails (see StreamFault).
type StreamFaultKind uint8

const (
	// NoFault: the outcome is not a stream fault.
	NoFault StreamFaultKind = iota
	// StallFirstByte: no byte at all (not even the headers) for For, then
	// the connection is cut.
	StallFirstByte
	// StallAfter: HTTP 200, the opening events, After content events,
	// then nothing for For, then the connection is cut.
	StallAfter
	// PingOnly: HTTP 200, the opening events, then only ping events, one
	// every PingEvery, for For, then the connection is cut.
	PingOnly
	// CutAfter: HTTP 200, the opening events, After content events, then
	// the connection is cut when the next event was due, without
	// message_stop.
	CutAfter
)

var faultNames = [...]string{"none", "stall_first_byte", "stall", "ping_only", "cut"}

func (k StreamFaultKind) String() string {
	if int(k) < len(faultNames) {
		return faultNames[k]
	}
	return fmt.Sprintf("fault(%d)", k)
}

// StreamFaultKinds lists the kinds by name, for decoders.
func StreamFaultKinds() map[string]StreamFaultKind {
	return map[string]StreamFaultKind{"stall_first_byte": StallFirstByte, "stall": StallAfter, "ping_only": PingOnly, "cut": CutAfter}
}

// StreamFaulter is an optional interface of a ServerModel some of whose
// failures are stream faults (found through wrappers: ModelAs).
type StreamFaulter interface {
	StreamFaults() bool
}

// HasStreamFaults reports whether m says some of its failures are stream
// faults.
func HasStreamFaults(m ServerModel) bool {
	f, ok := ModelAs[StreamFaulter](m)
	return ok && f.StreamFaults()
}

// PingEvery is how often a ping-only stream sends a ping, in model time.
const PingEvery = 5 * time.Second

// StreamFault is a failure of a streamed answer: it stalls, or it is cut
// without message_stop. A streamed answer that would take full has events
// content events, the j-th (from 1) j·full/(events+1) after the arrival;
// a fault keeps that schedule up to its stall or its cut (docs/scenarios.md).
type StreamFault struct {
	Kind StreamFaultKind
	// After is the content events sent before the stall or the cut
	// (StallAfter, CutAfter); at most the answer's events.
	After int
	// For is how long the stall lasts before the cut (StallFirstByte,
	// StallAfter, PingOnly); > 0.
	For time.Duration
}

// Validate reports a setting out of range for the kind.
func (f StreamFault) Validate() error {
	switch f.Kind {
	case StallFirstByte, PingOnly:
		if f.After != 0 {
			return fmt.Errorf("stream fault %v: after_events applies only to stall and cut", f.Kind)
		}
	case StallAfter, CutAfter:
		if f.After < 0 {
			return fmt.Errorf("stream fault %v: after_events must be >= 0 (got %d)", f.Kind, f.After)
		}
	default:
		return fmt.Errorf("unknown stream fault kind %d", f.Kind)
	}
	switch {
	case f.Kind == CutAfter && f.For != 0:
		return fmt.Errorf("stream fault cut: for applies only to stalls (a cut comes when the next event was due)")
	case f.Kind != CutAfter && (f.For <= 0 || f.For > Horizon/1000):
		return fmt.Errorf("stream fault %v: for must be > 0 and at most %v (got %v)", f.Kind, Horizon/1000, f.For)
	}
	return nil
}

// Timeline is the fault's stream from the arrival, for an answer that
// would take full with events content events (> 0).
func (f StreamFault) Timeline(full time.Duration, events int) machine.StreamTimeline {
	gap := full / time.Duration(events+1)
	k := min(f.After, events)
	t := machine.StreamTimeline{Faulted: true, Content: k, Gap: gap}
	if k > 0 {
		t.First = gap
	}
	switch f.Kind {
	case StallAfter:
		t.End = time.Duration(k)*gap + f.For
	case CutAfter:
		t.End = time.Duration(k+1) * gap
	case PingOnly:
		t.End, t.Pings = f.For, PingEvery
	default:
		t.End, t.Silent = f.For, true
	}
	return t
}

// Outcome is what the client sees when the faulted stream is cut: a
// transient failure, mid-stream (status 200) if content had come.
func streamCut(t machine.StreamTimeline) policies.Outcome {
	return (&policies.StreamError{Content: t.Content}).Outcome()
}

// watch applies the policy's stream watchdog to a faulted response sent
// at now whose client gives up at giveUp (0: never), and counts the
// content it wasted: the events that came before the attempt ended, at
// the cut, the watchdog or the give-up, whichever is first. The watchdog
// fires only before both the cut and the give-up.
func (r *runner) watch(now, giveUp time.Duration, resp *Response) {
	if resp.Stream == nil && resp.Events > 0 && !resp.Pending {
		r.watchHealthy(now, giveUp, resp)
		return
	}
	if resp.Stream == nil || !resp.Stream.Faulted || resp.Pending {
		return
	}
	r.faults++
	t := *resp.Stream
	end := resp.At
	if giveUp > 0 && giveUp < end {
		end = giveUp
	}
	n := t.Content
	at, c, fired := r.watchdog.Fires(t)
	fired = fired && now+at < end
	if fired {
		resp.At = now + at
		resp.Outcome = (&policies.StreamError{Content: c, Stalled: true}).Outcome()
		n, end = c, now+at
		r.stalled++
	}
	if n > 0 && end-now <= t.Last() {
		// Ended before the last event: count those before the end.
		n = eventsBefore(t, end-now)
	}
	if fired {
		r.streamEnded(*resp, n)
	}
	r.faultEvents += int64(n)
}

// eventsBefore is the number of the timeline's content events that come
// before d after the send: all of them when d is after the last.
func eventsBefore(t machine.StreamTimeline, d time.Duration) int {
	if d > t.Last() {
		return t.Content
	}
	n := 0
	if d > t.First {
		n = 1
		if t.Gap > 0 {
			n += int((d - t.First - 1) / t.Gap)
		}
	}
	return min(n, t.Content)
}

// StreamEnder is an optional interface of a Server that wants to know when
// the policy's stream watchdog ends a stream sooner than its answer said
// (a billing server bills the events sent). The engine calls it right
// after the Arrive that gave resp, with the content events sent before the
// watchdog ended the attempt: every server from the outermost down to the
// one that gave resp is told (wrapper.go).
type StreamEnder interface {
	StreamEnded(resp Response, events int)
}

// streamEnded tells the server, if it asks, of a stream the watchdog ended.
func (r *runner) streamEnded(resp Response, events int) {
	answering(r.server, resp, func(s Server) {
		if e, ok := s.(StreamEnder); ok {
			e.StreamEnded(resp, events)
		}
	})
}

// watchHealthy applies the watchdog to a healthy stream (Response.Events)
// sent at now: it ends the attempt when a gap between its content events
// is longer than the timeouts, before the answer and the give-up. Such an
// attempt counts in stream.watchdog, and its events in
// stream.wasted_events.
func (r *runner) watchHealthy(now, giveUp time.Duration, resp *Response) {
	w := r.watchdog
	if !w.On() || resp.Outcome.Class != policies.Success {
		return
	}
	full, events := resp.At-now, int(resp.Events)
	gap := full / time.Duration(events+1)
	t := machine.StreamTimeline{Faulted: true, Content: events, First: gap, Gap: gap, End: full}
	at, c, ok := w.Fires(t)
	if !ok || now+at >= resp.At || (giveUp > 0 && now+at >= giveUp) {
		return
	}
	resp.At = now + at
	resp.Outcome = (&policies.StreamError{Content: c, Stalled: true}).Outcome()
	r.stalled++
	r.faultEvents += int64(c)
	r.streamEnded(*resp, c)
}

// reportStreams adds stream.faulted, stream.watchdog and
// stream.wasted_events to the counters of a run that met a fault.
func (r *runner) reportStreams() {
	if r.faults == 0 && r.stalled == 0 {
		return
	}
	r.res.Counters.Add("stream.faulted", r.faults)
	r.res.Counters.Add("stream.watchdog", r.stalled)
	r.res.Counters.Add("stream.wasted_events", r.faultEvents)
}

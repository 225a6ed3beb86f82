package serve

import (
	"context"
	"net/http"
	"time"

	"github.com/retrysim/retrysim/policies/machine"
)

// playFault serves a stream fault of the model (sim.StreamFault) on the
// real clock, as the model's timeline says (machine.StreamTimeline, here
// in real time from the arrival): no byte at all (Silent), or HTTP 200,
// the opening events, Content text deltas (the first First after the
// arrival, then Gap apart), pings every Pings after the last of them, and
// at End the connection is cut without message_stop (panic with
// http.ErrAbortHandler, which net/http turns into a closed connection). A
// request that does not stream gets no byte until the cut: only a stream
// can show a stall part-way. The deltas sent count as wasted output
// tokens.
func (h *Handler) playFault(w http.ResponseWriter, ctx context.Context, rc *http.ResponseController, d decision, r reply, stream bool) {
	t := d.fault
	end := d.arrival.Add(t.End)
	if t.Silent || !stream {
		if sleepUntil(ctx, end) {
			panic(http.ErrAbortHandler)
		}
		return
	}
	send, ok := openStream(w, rc, r)
	if !ok {
		return
	}
	for k := range t.Content {
		at := d.arrival.Add(t.First + time.Duration(k)*t.Gap)
		if !sleepUntil(ctx, at) || !send(r.deltaEvent(k%len(r.words))) {
			return
		}
		h.wastedTokens.Add(1) // the stream will not finish
	}
	if t.Pings > 0 {
		for at := d.arrival.Add(t.Last() + t.Pings); at.Before(end); at = at.Add(t.Pings) {
			if !sleepUntil(ctx, at) || !send(r.ping()) {
				return
			}
		}
	}
	if sleepUntil(ctx, end) {
		panic(http.ErrAbortHandler)
	}
}

// ping is a keep-alive: the Messages API's ping event, an SSE comment for
// OpenAI's APIs.
func (r reply) ping() event {
	if r.api == apiMessages {
		return event{"ping", []byte(`{"type":"ping"}`)}
	}
	return event{":", []byte("ping")}
}

// realTimeline maps a fault's model-time timeline onto the real clock.
func (h *Handler) realTimeline(t machine.StreamTimeline) machine.StreamTimeline {
	t.First, t.Gap, t.End, t.Pings = h.toReal(t.First), h.toReal(t.Gap), h.toReal(t.End), h.toReal(t.Pings)
	return t
}

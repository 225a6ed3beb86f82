package sim

import "time"

// Server wrappers. A wrapper model (RateLimit, Billing, Crash, Layered)
// holds the model it wraps and says so (ModelWrapper); its state holds the
// inner state and says so too (Wrapper). The engine, and every helper that
// asks a model for an optional interface, walks that chain and takes the
// first that has it, as errors.As walks errors.Unwrap: a wrapper writes no
// method that only forwards. A wrapper that answers some requests itself
// (a rate limit's 429, a crash's refusal, a layer's every answer) marks
// those answers with ownTicket: the engine then tells what befalls an
// answer (Canceller, StreamEnder) to the servers from the outermost down
// to the one that gave it, and no further. A pool has several servers
// inside, so it is no Wrapper: it routes those to the member that
// answered itself.

// ModelWrapper is a server model that wraps another.
type ModelWrapper interface {
	Unwrap() ServerModel
}

// Wrapper is a server state that wraps another.
type Wrapper interface {
	Unwrap() Server
}

// ModelAs returns the first model of m's chain (m, then what it wraps,
// and so on) that is a T.
func ModelAs[T any](m ServerModel) (T, bool) {
	for m != nil {
		if t, ok := m.(T); ok {
			return t, true
		}
		w, ok := m.(ModelWrapper)
		if !ok {
			break
		}
		m = w.Unwrap()
	}
	var zero T
	return zero, false
}

// ServerAs is ModelAs for a server's state (Wrapper).
func ServerAs[T any](s Server) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		w, ok := s.(Wrapper)
		if !ok {
			break
		}
		s = w.Unwrap()
	}
	var zero T
	return zero, false
}

// chain is s and the servers it wraps, outermost first.
func chain(s Server) []Server {
	out := []Server{s}
	for w, ok := s.(Wrapper); ok; w, ok = s.(Wrapper) {
		s = w.Unwrap()
		out = append(out, s)
	}
	return out
}

// answering calls f with s and each server inside it down to the one
// that gave resp (a wrapper's own answer stops there), outermost first.
func answering(s Server, resp Response, f func(Server)) {
	for {
		f(s)
		w, ok := s.(Wrapper)
		if !ok || resp.Ticket == ownTicket {
			return
		}
		s = w.Unwrap()
	}
}

// reportCounters asks every server of s's chain that counts
// (CounterReporter) for its counts, innermost first.
func reportCounters(s Server, c *Counters) {
	servers := chain(s)
	for k := len(servers) - 1; k >= 0; k-- {
		if r, ok := servers[k].(CounterReporter); ok {
			r.ReportCounters(c)
		}
	}
}

// cancel tells the servers that gave resp, and those around them, that
// its client cancelled it at now (Canceller).
func cancel(s Server, now time.Duration, resp Response) {
	answering(s, resp, func(x Server) {
		if c, ok := x.(Canceller); ok {
			c.Cancel(now, resp)
		}
	})
}

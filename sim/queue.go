package sim

import "time"

// eventKind says what an event does when it fires.
type eventKind uint8

const (
	evReady    eventKind = iota // a client wants to start an attempt
	evSend                      // a client's attempt reaches the server
	evResponse                  // the server's response reaches the client
)

// event is one scheduled happening. Events fire in order of (at, seq): equal
// times fire in the order they were scheduled.
type event struct {
	at     time.Duration // virtual time since the run's origin
	seq    uint64        // insertion sequence; breaks ties
	client int32
	kind   eventKind
}

func (e event) before(o event) bool {
	return e.at < o.at || (e.at == o.at && e.seq < o.seq)
}

// queue is a binary min-heap of events ordered by (at, seq). It holds values,
// not pointers, and allocates only when it grows.
type queue struct {
	items []event
	seq   uint64
}

func (q *queue) len() int { return len(q.items) }

// push schedules an event; it receives the next sequence number.
func (q *queue) push(at time.Duration, client int32, kind eventKind) {
	q.items = append(q.items, event{at: at, seq: q.seq, client: client, kind: kind})
	q.seq++
	// Sift up.
	h := q.items
	i := len(h) - 1
	e := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

// pop removes and returns the earliest event. The queue must not be empty.
func (q *queue) pop() event {
	h := q.items
	top := h[0]
	n := len(h) - 1
	last := h[n]
	q.items = h[:n]
	if n == 0 {
		return top
	}
	h = h[:n]
	// Sift down.
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r].before(h[c]) {
			c = r
		}
		if !h[c].before(last) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = last
	return top
}

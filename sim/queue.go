package sim

import (
	"math/bits"
	"slices"
	"time"
)

// eventKind says what an event does when it fires.
type eventKind uint8

const (
	evReady    eventKind = iota // an operation asks whether it may send (and sends if so)
	evResponse                  // the server's response reaches the operation
	evDecide                    // the server decides the operation's pending request (Decider)
	evDetached                  // the server decides a request whose client stopped waiting (traces only)
	evHedge                     // a hedged attempt's next happening: a copy's answer or a hedge due (hedge.go)
)

// event is one scheduled happening. Events fire in order of (at, seq): equal
// times fire in the order they were scheduled.
//
// Every client has at most one pending event, so the event's kind lives in
// the client's state and an event is only 16 bytes: its time and one word
// holding the insertion sequence in the high bits and the client in the low
// clientBits bits. Sequence numbers are unique, so comparing the whole word
// compares sequences.
type event struct {
	at  time.Duration // virtual time since the run's origin
	key uint64        // seq<<clientBits | client
}

func (e event) before(o event) bool {
	return e.at < o.at || (e.at == o.at && e.key < o.key)
}

// queue holds the pending events and gives them back in order of (at, seq).
//
// It is two ordered structures and pop takes the earlier of their heads:
//
//   - a FIFO for events scheduled in time order, such as responses that all
//     take the same time: appending keeps it sorted, at no cost;
//   - a radix heap for the rest (radix.go), which relies on virtual time
//     never going back: far fewer cache misses than a comparison heap of
//     millions of events.
//
// Both hold values, not pointers, and allocate only when they grow.
type queue struct {
	// fifo is a ring buffer (its length a power of two) holding fifoLen
	// events from fifoHead on, sorted by (at, seq).
	fifo     []event
	fifoHead int
	fifoLen  int

	heap radixHeap
	// detached holds the decisions servers owe requests whose client has
	// stopped waiting (pushDetached), a binary heap; usually empty.
	detached   []detached
	seq        uint64 // next sequence number
	clientBits uint   // low bits of key holding the client
	clientMask uint64
	// maxSeq is the largest sequence number that fits beside the client.
	// When seq passes it, pending events are renumbered by rank, which keeps
	// their order (see renumber); with 1,000,000 clients that happens every
	// 2^44 events, i.e. practically never.
	maxSeq uint64

	// log, if set (by benchmarks only), is told of every push once it is
	// done: the event and whether it went to the FIFO (else the heap).
	log func(e event, fifo bool)
}

// init prepares q for clients 0..n-1 with room for capacity events.
func (q *queue) init(n, capacity int) {
	q.clientBits = uint(bits.Len64(uint64(max(n, 1) - 1)))
	q.clientMask = 1<<q.clientBits - 1
	q.maxSeq = 1<<(64-q.clientBits) - 1
	// Reuse the buffers of an earlier run when they are big enough.
	q.heap.init(capacity)
	if size := 1 << bits.Len(uint(max(capacity, 16)-1)); len(q.fifo) < size {
		q.fifo = make([]event, size)
	}
	q.fifoHead, q.fifoLen = 0, 0
	q.detached = q.detached[:0]
	q.seq = 0
}

// buffers returns an empty queue holding q's buffers, for a later run to
// reuse (see init).
func (q *queue) buffers() queue {
	return queue{fifo: q.fifo, heap: radixHeap{run: q.heap.run[:0], store: q.heap.store, links: q.heap.links}, detached: q.detached[:0]}
}

func (q *queue) len() int { return q.heap.n + q.fifoLen }

// next returns a new event for client at time at, with the next sequence
// number.
func (q *queue) next(at time.Duration, client int32) event {
	if q.seq > q.maxSeq {
		q.renumber()
	}
	e := event{at: at, key: q.seq<<q.clientBits | uint64(client)}
	q.seq++
	return e
}

// pushInOrder schedules client's next event at time at, like push, for
// callers whose events usually come in time order (responses after a fixed
// response time). Those go to the FIFO; any that would break its order go to
// the heap, so the result is the same as push's.
func (q *queue) pushInOrder(at time.Duration, client int32) {
	e := q.next(at, client)
	mask := len(q.fifo) - 1
	if q.fifoLen > 0 && at < q.fifo[(q.fifoHead+q.fifoLen-1)&mask].at {
		q.pushHeap(e)
		return
	}
	if q.fifoLen == len(q.fifo) {
		q.growFIFO()
		mask = len(q.fifo) - 1
	}
	q.fifo[(q.fifoHead+q.fifoLen)&mask] = e
	q.fifoLen++
	if q.log != nil {
		q.log(e, true)
	}
}

// growFIFO doubles the ring buffer (or makes one of 16), keeping the order.
func (q *queue) growFIFO() {
	buf := make([]event, max(2*len(q.fifo), 16))
	mask := len(q.fifo) - 1
	for i := range q.fifoLen {
		buf[i] = q.fifo[(q.fifoHead+i)&mask]
	}
	q.fifo, q.fifoHead = buf, 0
}

// push schedules client's next event at time at; it receives the next
// sequence number.
func (q *queue) push(at time.Duration, client int32) {
	q.pushHeap(q.next(at, client))
}

func (q *queue) pushHeap(e event) {
	q.heap.push(e)
	if q.log != nil {
		q.log(e, false)
	}
}

// pop removes the earliest event and returns its time and client. The queue
// must not be empty.
func (q *queue) pop() (time.Duration, int32) {
	if q.fifoLen > 0 {
		f := q.fifo[q.fifoHead]
		if q.heap.n == 0 || f.before(q.heap.top()) {
			q.fifoHead = (q.fifoHead + 1) & (len(q.fifo) - 1)
			q.fifoLen--
			return f.at, int32(f.key & q.clientMask)
		}
	}
	top := q.heap.pop()
	return top.at, int32(top.key & q.clientMask)
}

// peek returns the client of the earliest pending event, as pop would
// return it, and false if the queue is empty.
func (q *queue) peek() (int32, bool) {
	if q.fifoLen > 0 {
		f := q.fifo[q.fifoHead]
		if q.heap.n == 0 || f.before(q.heap.top()) {
			return int32(f.key & q.clientMask), true
		}
	}
	if q.heap.n == 0 {
		return 0, false
	}
	return int32(q.heap.top().key & q.clientMask), true
}

// detached is a decision a server owes a request whose client has stopped
// waiting (see Decider): an event of its own, keyed as the client's events
// are (the operation in the low bits), so that it keeps its place among
// them; ticket names the request to the server.
type detached struct {
	e      event
	ticket int32
}

// pushDetached schedules the decision on operation op's request ticket at
// time at. It takes the next sequence number, as push does.
func (q *queue) pushDetached(at time.Duration, op, ticket int32) {
	d := detached{q.next(at, op), ticket}
	q.detached = append(q.detached, d)
	h := q.detached
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !d.e.before(h[p].e) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = d
}

// detachedFirst reports whether a detached decision is due before every
// other pending event; there must be one.
func (q *queue) detachedFirst() bool {
	d := q.detached[0].e
	if q.fifoLen > 0 && q.fifo[q.fifoHead].before(d) {
		return false
	}
	return q.heap.n == 0 || d.before(q.heap.top())
}

// popDetached removes the earliest detached decision and returns its time,
// operation and ticket; there must be one.
func (q *queue) popDetached() (time.Duration, int32, int32) {
	h := q.detached
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	q.detached = h
	i := 0
	for n > 0 {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].e.before(h[c].e) {
			c++
		}
		if !h[c].e.before(last.e) {
			break
		}
		h[i] = h[c]
		i = c
	}
	if n > 0 {
		h[i] = last
	}
	return top.e.at, int32(top.e.key & q.clientMask), top.ticket
}

// renumber gives the pending events the sequence numbers 0, 1, … in the
// order of their current ones. Every comparison between two events comes out
// as before, so the heap stays valid and the run's order is unchanged.
func (q *queue) renumber() {
	seqs := make([]uint64, 0, q.heap.n+q.fifoLen)
	q.heap.each(func(e *event) { seqs = append(seqs, e.key>>q.clientBits) }, false)
	mask := len(q.fifo) - 1
	for i := range q.fifoLen {
		seqs = append(seqs, q.fifo[(q.fifoHead+i)&mask].key>>q.clientBits)
	}
	for _, d := range q.detached {
		seqs = append(seqs, d.e.key>>q.clientBits)
	}
	slices.Sort(seqs)
	rerank := func(e *event) {
		rank, _ := slices.BinarySearch(seqs, e.key>>q.clientBits)
		e.key = uint64(rank)<<q.clientBits | e.key&q.clientMask
	}
	q.heap.each(rerank, true)
	for i := range q.fifoLen {
		rerank(&q.fifo[(q.fifoHead+i)&mask])
	}
	for i := range q.detached {
		rerank(&q.detached[i].e)
	}
	q.seq = uint64(q.heap.n + q.fifoLen + len(q.detached))
}

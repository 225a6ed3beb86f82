package sim

import (
	"math/bits"
	"slices"
	"time"
)

// radixHeap is the queue's priority queue for events that do not come in
// time order: a 16-ary radix heap, which relies on virtual time never going
// back.
//
// Times are compared as order-keeping unsigned keys (radixKey), in 16 digits
// of 4 bits. Every held event's key is at or after base, the key of an
// event taken earlier. An event whose key first differs from base in digit
// l (counting from the lowest) sits in bucket (l, d), d being its own digit
// l: every event of a bucket is earlier than every event of a later bucket
// in the order (l, d), so the flat index 16l+d orders the buckets.
//
// The earliest events are in run, sorted by (at, key): they are before
// every event in a bucket. When run is empty, the earliest bucket is taken
// out: if it holds at most sortMax events they are sorted into run;
// otherwise its earliest event becomes base and its events move to lower
// buckets (the later buckets stay where they are: their digits above l
// agree with the new base), those at base itself into run. An event so
// moves at most once per digit, and each bucket holds a sixteenth of the one
// it came from: a few sequential moves per event, where a comparison heap of
// millions of events touches a cache line per level.
//
// Equal times come out in key (sequence) order, exactly as from an ordinary
// heap. The buckets are chains of blockSize-event blocks from one shared
// store, so the heap needs about as much memory as its events and allocates
// only when it holds more than ever before.
type radixHeap struct {
	base uint64 // see radixHeap; ≤ the key of every held event
	n    int    // events held

	// run holds the earliest events from runHead on, sorted by (at, key).
	run     []event
	runHead int

	full    [radixBuckets / 64]uint64 // bit i set when bucket i holds events
	buckets [radixBuckets]radixBucket
	mins    [radixBuckets]event // each non-empty bucket's earliest event
	store   []event             // blocks of blockSize events
	links   []int32             // links[k]: the block after block k in its chain, or in the free list
	free    int32               // first free block, or -1
}

// radixBucket is a chain of blocks holding count events: full blocks from
// head, the last (tail) holding the rest.
type radixBucket struct {
	head, tail int32
	count      int32
}

const (
	radixDigitBits = 4
	radixBuckets   = 64 / radixDigitBits << radixDigitBits // 16 digits × 16 values
	blockBits      = 4
	blockSize      = 1 << blockBits // events per block: 256 bytes
	// sortMax is the most events a bucket may hold to be sorted into run
	// rather than spread over lower buckets.
	sortMax = 32
)

// radixKey maps a time to an unsigned key in the same order (negative times
// included).
func radixKey(at time.Duration) uint64 { return uint64(at) ^ 1<<63 }

// bucketOf returns the bucket of key k, which must differ from base.
func bucketOf(k, base uint64) int {
	l := (bits.Len64(k^base) - 1) / radixDigitBits
	return l<<radixDigitBits | int(k>>(l*radixDigitBits))&(1<<radixDigitBits-1)
}

// init empties h and makes room for about capacity events.
func (h *radixHeap) init(capacity int) {
	h.base = radixKey(0)
	h.n = 0
	h.run, h.runHead = h.run[:0], 0
	if cap(h.run) < 2*sortMax {
		h.run = make([]event, 0, 2*sortMax)
	}
	h.full = [len(h.full)]uint64{}
	h.buckets = [radixBuckets]radixBucket{}
	// Each non-empty bucket has at most one block that is not full.
	blocks := capacity>>blockBits + min(capacity, radixBuckets) + 1
	if len(h.links) < blocks {
		h.store = make([]event, blocks<<blockBits)
		h.links = make([]int32, blocks)
	}
	for k := range h.links {
		h.links[k] = int32(k + 1)
	}
	h.links[len(h.links)-1] = -1
	h.free = 0
}

// newBlock takes a block from the free list, growing the store if there is
// none.
func (h *radixHeap) newBlock() int32 {
	if h.free < 0 {
		old := len(h.links)
		blocks := max(2*old, 16)
		store := make([]event, blocks<<blockBits)
		copy(store, h.store)
		h.store = store
		h.links = slices.Grow(h.links, blocks-old)[:blocks]
		for k := old; k < blocks; k++ {
			h.links[k] = int32(k + 1)
		}
		h.links[blocks-1] = -1
		h.free = int32(old)
	}
	k := h.free
	h.free = h.links[k]
	return k
}

// add puts e in bucket b.
func (h *radixHeap) add(e event, b int) {
	bk := &h.buckets[b]
	pos := bk.count & (blockSize - 1)
	if bk.count == 0 {
		k := h.newBlock()
		bk.head, bk.tail = k, k
		h.mins[b] = e
		h.full[b/64] |= 1 << (b % 64)
	} else {
		if pos == 0 {
			k := h.newBlock()
			h.links[bk.tail] = k
			bk.tail = k
		}
		if e.before(h.mins[b]) {
			h.mins[b] = e
		}
	}
	h.store[int(bk.tail)<<blockBits+int(pos)] = e
	bk.count++
}

// insert puts e in run at its place; a new event is usually the latest.
func (h *radixHeap) insert(e event) {
	h.run = append(h.run, e)
	for i := len(h.run) - 1; i > h.runHead && e.before(h.run[i-1]); i-- {
		h.run[i], h.run[i-1] = h.run[i-1], e
	}
}

// push adds e. If e is before base (virtual time going back: no run in the
// tests of sim and runs does it), every held event is moved around e first.
func (h *radixHeap) push(e event) {
	k := radixKey(e.at)
	if k < h.base {
		h.rebase(k)
	}
	h.n++
	if k == h.base || h.runHead < len(h.run) && e.at <= h.run[len(h.run)-1].at {
		h.insert(e)
		return
	}
	h.add(e, bucketOf(k, h.base))
}

// first returns the index of the earliest non-empty bucket, or -1.
func (h *radixHeap) first() int {
	for w, f := range h.full {
		if f != 0 {
			return w*64 + bits.TrailingZeros64(f)
		}
	}
	return -1
}

// top returns the earliest event; h must not be empty.
func (h *radixHeap) top() event {
	if h.runHead < len(h.run) {
		return h.run[h.runHead]
	}
	return h.mins[h.first()]
}

// pop removes and returns the earliest event; h must not be empty.
func (h *radixHeap) pop() event {
	if h.runHead == len(h.run) {
		h.run, h.runHead = h.run[:0], 0
		h.spill(h.first())
	}
	e := h.run[h.runHead]
	h.runHead++
	h.n--
	return e
}

// spill empties bucket b, the earliest, into run or lower buckets (see
// radixHeap); run must be empty.
func (h *radixHeap) spill(b int) {
	bk := h.buckets[b]
	h.buckets[b].count = 0
	h.full[b/64] &^= 1 << (b % 64)
	h.base = radixKey(h.mins[b].at)
	small := bk.count <= sortMax
	k := bk.head
	for left := bk.count; left > 0; {
		blk := h.store[int(k)<<blockBits:][:min(left, blockSize)]
		next := h.links[k]
		if small {
			h.run = append(h.run, blk...)
		} else {
			for _, e := range blk {
				if x := radixKey(e.at); x == h.base {
					h.run = append(h.run, e)
				} else {
					h.add(e, bucketOf(x, h.base))
				}
			}
		}
		left -= int32(len(blk))
		h.links[k] = h.free
		h.free = k
		k = next
	}
	sortEvents(h.run)
}

// sortEvents sorts s by (at, key).
func sortEvents(s []event) {
	if len(s) <= 12 {
		for i := 1; i < len(s); i++ {
			for j := i; j > 0 && s[j].before(s[j-1]); j-- {
				s[j], s[j-1] = s[j-1], s[j]
			}
		}
		return
	}
	slices.SortFunc(s, func(x, y event) int {
		if x.before(y) {
			return -1
		}
		return 1 // keys are unique
	})
}

// rebase moves every held event around base k, which is below h.base.
func (h *radixHeap) rebase(k uint64) {
	held := make([]event, 0, h.n)
	h.each(func(e *event) { held = append(held, *e) }, false)
	h.init(len(held))
	h.base = k
	for _, e := range held {
		if x := radixKey(e.at); x == k {
			h.run = append(h.run, e)
		} else {
			h.add(e, bucketOf(x, k))
		}
	}
	sortEvents(h.run)
	h.n = len(held)
}

// each calls f on every held event, in no particular order, and with mins
// also on every bucket's copy of its earliest (for renumber, which changes
// keys but not their order).
func (h *radixHeap) each(f func(*event), mins bool) {
	for i := h.runHead; i < len(h.run); i++ {
		f(&h.run[i])
	}
	for w, full := range h.full {
		for ; full != 0; full &= full - 1 {
			b := w*64 + bits.TrailingZeros64(full)
			bk := h.buckets[b]
			if mins {
				f(&h.mins[b])
			}
			k := bk.head
			for left := bk.count; left > 0; {
				blk := h.store[int(k)<<blockBits:][:min(left, blockSize)]
				for i := range blk {
					f(&blk[i])
				}
				left -= int32(len(blk))
				k = h.links[k]
			}
		}
	}
}

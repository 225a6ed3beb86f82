package machine

import (
	"fmt"
	"strings"
	"time"
)

// ClassSet is a set of outcome classes, e.g. the classes a circuit breaker
// counts as failures. The zero ClassSet is empty; controls read an empty set
// as "use my default".
type ClassSet uint8

// Classes returns the set of the given classes.
func Classes(cs ...Class) ClassSet {
	var s ClassSet
	for _, c := range cs {
		if c <= Terminal {
			s |= 1 << c
		}
	}
	return s
}

// Has reports whether c is in the set.
func (s ClassSet) Has(c Class) bool { return c <= Terminal && s&(1<<c) != 0 }

// String lists the classes, e.g. "capacity,transient".
func (s ClassSet) String() string {
	var names []string
	for c := Success; c <= Terminal; c++ {
		if s.Has(c) {
			names = append(names, c.String())
		}
	}
	return strings.Join(names, ",")
}

// or returns s, or def if s is empty.
func (s ClassSet) or(def ClassSet) ClassSet {
	if s == 0 {
		return def
	}
	return s
}

// DefaultWindowSlots is the number of slots a sliding window is cut into
// when a control's config leaves it 0 (Finagle's windowed counters use 10).
const DefaultWindowSlots = 10

// window counts two kinds of events over a sliding window of time, cut into
// a fixed number of slots of equal width (the window's length divided by the
// number of slots, in whole nanoseconds). Slots are aligned to the first
// time the window is used. The counts at now are those of now's slot and the
// slots before it, as many as make up the window: between a window less one
// slot and a whole window of the past. Memory is fixed when it is made, so
// counting never allocates. Not safe for concurrent use: its owner locks.
type window struct {
	width   time.Duration
	slots   [][2]int64 // ring: slot k is slots[k % len]
	anchor  time.Time  // start of slot 0
	cur     int64      // index of the newest slot touched
	started bool
}

func newWindow(length time.Duration, slots int) (*window, error) {
	if length <= 0 || slots <= 0 || length/time.Duration(slots) <= 0 {
		return nil, fmt.Errorf("sliding window needs a length > 0 and 1 to length-in-ns slots (got %v in %d slots)", length, slots)
	}
	return &window{width: length / time.Duration(slots), slots: make([][2]int64, slots)}, nil
}

// at moves the window to now and returns now's slot, for counting. A now
// earlier than the newest slot already touched (a concurrent caller that
// read the clock a little earlier) counts in the newest slot.
func (w *window) at(now time.Time) *[2]int64 {
	if !w.started {
		w.anchor, w.cur, w.started = now, 0, true
	}
	k := int64(0)
	if d := now.Sub(w.anchor); d > 0 {
		k = int64(d / w.width)
	}
	if k > w.cur {
		n := int64(len(w.slots))
		if k-w.cur >= n {
			clear(w.slots)
		} else {
			for j := w.cur + 1; j <= k; j++ {
				w.slots[j%n] = [2]int64{}
			}
		}
		w.cur = k
	}
	return &w.slots[w.cur%int64(len(w.slots))]
}

// sums returns the two counts over the window at now, each at least 0.
func (w *window) sums(now time.Time) (a, b int64) {
	w.at(now)
	for _, s := range w.slots {
		a += s[0]
		b += s[1]
	}
	return max(a, 0), max(b, 0)
}

// reset forgets every count (the alignment stays).
func (w *window) reset() { clear(w.slots) }

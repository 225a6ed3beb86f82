package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestQueuePopsInTimeOrder(t *testing.T) {
	var q queue
	for i, at := range []time.Duration{5, 1, 4, 1, 3, 2} {
		q.push(at, int32(i), evSend)
	}
	var got []time.Duration
	for q.len() > 0 {
		got = append(got, q.pop().at)
	}
	if want := []time.Duration{1, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("popped times %v, want %v", got, want)
	}
}

func TestQueueBreaksTiesByInsertionOrder(t *testing.T) {
	var q queue
	// Same time for all; clients pushed in a scrambled order.
	order := []int32{7, 3, 9, 0, 5}
	for _, c := range order {
		q.push(time.Second, c, evSend)
	}
	q.push(time.Millisecond, 42, evSend) // earlier time jumps the queue
	if e := q.pop(); e.client != 42 {
		t.Fatalf("first popped client %d, want 42", e.client)
	}
	for i, want := range order {
		if e := q.pop(); e.client != want {
			t.Fatalf("tie %d: popped client %d, want %d (insertion order)", i, e.client, want)
		}
	}
}

// The heap must agree with a stable sort by (time, insertion order) under
// interleaved pushes and pops.
func TestQueueMatchesStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q queue
	type item struct {
		at  time.Duration
		seq uint64
	}
	var pending []item
	for step := range 5000 {
		if rng.IntN(3) > 0 || len(pending) == 0 {
			at := time.Duration(rng.IntN(50)) // few values: many ties
			q.push(at, int32(step), evSend)
			pending = append(pending, item{at, q.seq - 1})
			continue
		}
		slices.SortStableFunc(pending, func(a, b item) int {
			if a.at != b.at {
				return int(a.at - b.at)
			}
			return int(a.seq) - int(b.seq)
		})
		want := pending[0]
		pending = pending[1:]
		got := q.pop()
		if got.at != want.at || got.seq != want.seq {
			t.Fatalf("step %d: popped (%v, %d), want (%v, %d)", step, got.at, got.seq, want.at, want.seq)
		}
	}
}

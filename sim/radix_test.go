package sim

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/racetest"
)

// TestRadixHeapOrder pushes and pops at random against a reference sorted
// by (at, key): thousands of pending events, so that buckets overflow
// sortMax and spill into lower ones, times from nanoseconds to hours apart,
// ties common, and now and then a push before the last pop (which the
// engine never makes, but the order must stay exact).
func TestRadixHeapOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spans []time.Duration // a push is at now plus up to one of these
		early bool            // some pushes before the last pop
	}{
		{"wide", []time.Duration{10, time.Millisecond, time.Second, time.Hour}, false},
		{"ties", []time.Duration{0, 3}, false},
		{"early", []time.Duration{5, time.Second}, true},
		{"negative", []time.Duration{time.Second}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(tc.name))))
			var h radixHeap
			h.init(16) // small, so that the store must grow
			var ref []event
			var key uint64
			now := time.Duration(0)
			if tc.name == "negative" {
				now = -time.Hour
			}
			steps := 100_000
			if racetest.Enabled {
				steps = 20_000
			}
			for step := 0; step < steps; step++ {
				// About 4000 pending once filled.
				if popPercent := 10 + 40*min(len(ref)/4000, 1); len(ref) > 0 && rng.IntN(100) < popPercent {
					got := h.pop()
					want := ref[0]
					ref = ref[1:]
					if got != want {
						t.Fatalf("step %d: popped %+v, want %+v", step, got, want)
					}
					now = got.at
					continue
				}
				at := now + time.Duration(rng.Int64N(int64(tc.spans[rng.IntN(len(tc.spans))])+1))
				if tc.early && rng.IntN(1000) == 0 {
					at = now - time.Duration(rng.Int64N(int64(time.Second)))
				}
				e := event{at: at, key: key}
				key++
				h.push(e)
				i, _ := slices.BinarySearchFunc(ref, e, func(x, y event) int {
					return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.key, y.key))
				})
				ref = slices.Insert(ref, i, e)
				if h.n != len(ref) {
					t.Fatalf("step %d: holds %d, want %d", step, h.n, len(ref))
				}
				if h.top() != ref[0] {
					t.Fatalf("step %d: top %+v, want %+v", step, h.top(), ref[0])
				}
			}
			for len(ref) > 0 {
				if got := h.pop(); got != ref[0] {
					t.Fatalf("draining: popped %+v, want %+v", got, ref[0])
				}
				ref = ref[1:]
			}
		})
	}
}

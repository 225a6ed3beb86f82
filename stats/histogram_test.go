package stats

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// Every value's bucket holds it, buckets tile the integers without gaps,
// and no bucket above the exact range is wider than 2^-HistogramBits of
// its lower end.
func TestHistogramBuckets(t *testing.T) {
	prevHi := int64(0)
	for o := range histogramOctaves {
		for sub := range histogramSub {
			lo, hi := bucketBounds(o, sub)
			if lo != prevHi {
				t.Fatalf("octave %d bucket %d starts at %d, the previous ended at %d", o, sub, lo, prevHi)
			}
			if o > 0 && float64(hi-lo)/float64(lo) > 1.0/histogramSub {
				t.Fatalf("octave %d bucket %d: [%d, %d) is relatively too wide", o, sub, lo, hi)
			}
			last := o == histogramOctaves-1 && sub == histogramSub-1
			if last && hi != math.MaxInt64 {
				t.Fatalf("the last bucket ends at %d, want MaxInt64", hi)
			}
			for _, v := range []int64{lo, hi - 1} {
				if go_, gs := histogramBucket(v); go_ != o || gs != sub {
					t.Fatalf("%d falls in octave %d bucket %d, want %d %d", v, go_, gs, o, sub)
				}
			}
			prevHi = hi
		}
	}
}

// The steps follow the exact empirical CDF: never before it, and at most a
// bucket width after; the counts and the maximum are exact.
func TestHistogramStepsFollowTheExactCDF(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h Histogram
	var vals []int64
	for range 20000 {
		v := int64(rng.ExpFloat64() * 3e9) // latencies around 3 s, in ns
		if rng.IntN(10) == 0 {
			v = rng.Int64N(5000) // and some tiny ones, counted exactly
		}
		vals = append(vals, v)
		h.Add(v)
	}
	slices.Sort(vals)
	if h.Count() != uint64(len(vals)) || h.Max() != vals[len(vals)-1] {
		t.Fatalf("count %d max %d, want %d and %d", h.Count(), h.Max(), len(vals), vals[len(vals)-1])
	}
	steps := 0
	h.Steps(func(at int64, cum uint64) {
		steps++
		// Exactly cum values are below the step's position, or all of
		// them at the last step, which sits on the maximum.
		below, _ := slices.BinarySearch(vals, at)
		if cum != uint64(len(vals)) && uint64(below) != cum {
			t.Fatalf("step at %d counts %d; %d values are below it", at, cum, below)
		}
		// The cum-th smallest value is at most one bucket width earlier.
		v := vals[cum-1]
		if at < v || float64(at-v) > max(1, float64(v)/histogramSub) {
			t.Fatalf("step at %d for a value at %d", at, v)
		}
	})
	if steps == 0 || steps > len(vals) {
		t.Fatalf("%d steps", steps)
	}
	if q := h.Quantile(0.5); q < float64(vals[len(vals)/2-1]) || q > float64(vals[len(vals)/2-1])*(1+1.0/histogramSub)+1 {
		t.Errorf("median %v, exact %d", q, vals[len(vals)/2-1])
	}
}

// Merging in any order gives the same histogram as adding everything to
// one, and the memory is bounded however many values are counted.
func TestHistogramMergeAndBound(t *testing.T) {
	var parts [5]Histogram
	var all Histogram
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 50000 {
		v := rng.Int64N(1 << 62)
		parts[i%5].Add(v)
		all.Add(v)
	}
	var fwd, back Histogram
	for i := range parts {
		fwd.Merge(&parts[i])
		back.Merge(&parts[len(parts)-1-i])
	}
	if !equalHistograms(&fwd, &back) || !equalHistograms(&fwd, &all) {
		t.Fatal("merging in another order or adding directly gave another histogram")
	}
	if n := all.Counters(); n > MaxHistogramCounters {
		t.Fatalf("%d counters, above the bound %d", n, MaxHistogramCounters)
	}
	for range 10 {
		for range 50000 {
			all.Add(rng.Int64N(1 << 62))
		}
		if n := all.Counters(); n > MaxHistogramCounters {
			t.Fatalf("%d counters, above the bound %d", n, MaxHistogramCounters)
		}
	}
}

func equalHistograms(a, b *Histogram) bool {
	if a.count != b.count || a.max != b.max {
		return false
	}
	for i := range a.octaves {
		if !slices.Equal(a.octaves[i], b.octaves[i]) {
			return false
		}
	}
	return true
}

// A histogram written as data (shards) and read back counts the same, and
// bad data is refused without changing the histogram.
func TestHistogramCountsRoundTrip(t *testing.T) {
	var h Histogram
	for _, v := range []int64{0, 7, 4095, 4096, 123456789, 5e12} {
		h.Add(v)
		h.Add(v / 3)
	}
	var back Histogram
	if err := back.AddCounts(h.Counts()); err != nil {
		t.Fatal(err)
	}
	if back.Count() != h.Count() || back.Max() != h.Max() || !reflect.DeepEqual(back.Counts(), h.Counts()) {
		t.Errorf("round trip: %+v, want %+v", back.Counts(), h.Counts())
	}
	for _, bad := range []HistogramCounts{
		{Buckets: [][3]uint64{{99, 0, 1}}, Max: 1},
		{Buckets: [][3]uint64{{0, 5000, 1}}, Max: 1},
		{Buckets: [][3]uint64{{0, 9, 1}}, Max: 3},
		{Buckets: [][3]uint64{{0, 5, 1}}, Max: 1e18}, // above its buckets
		{Buckets: [][3]uint64{{0, 5, 1}}, Max: -1},
		{Buckets: [][3]uint64{}, Max: 7},
		{Buckets: [][3]uint64{{0, 5, 0}}, Max: 5},
		{Buckets: [][3]uint64{{0, 6, 1}, {0, 5, 1}}, Max: 6},
		{Buckets: [][3]uint64{{0, 5, 1}, {0, 5, 1}}, Max: 5},
		{Buckets: [][3]uint64{{0, 5, math.MaxUint64}}, Max: 5}, // the count overflows
	} {
		if err := back.AddCounts(bad); err == nil {
			t.Errorf("AddCounts(%+v) accepted", bad)
		}
	}
	if back.Count() != h.Count() {
		t.Error("a refused AddCounts changed the histogram")
	}
}

package stats

import (
	"fmt"
	"math"
	"math/bits"
)

// HistogramBits sets a Histogram's resolution: values below
// 2^HistogramBits are counted exactly, and a larger value's bucket is at
// most 2^-HistogramBits (1/4096, about 0.025%) of the value wide.
const HistogramBits = 12

// histogramSub is the number of buckets per octave.
const histogramSub = 1 << HistogramBits

// histogramOctaves is the number of octaves that cover every non-negative
// int64: octave 0 holds [0, 2^b) exactly, octave o ≥ 1 holds
// [2^(b+o−1), 2^(b+o)), up to 2^63.
const histogramOctaves = 64 - HistogramBits

// MaxHistogramCounters bounds the counters a Histogram keeps, whatever
// and however many values it counts: every octave allocated (about
// 1.6 MiB of uint64s). A histogram of values that span a few orders of
// magnitude keeps far fewer.
const MaxHistogramCounters = histogramOctaves * histogramSub

// Histogram counts non-negative integers (in retrysim, latencies in
// nanoseconds) in log-linear buckets, as HDR histograms do: its memory is
// bounded (MaxHistogramCounters) however many values it counts, two
// histograms merge exactly, and since it only adds integers the result
// does not depend on the order values are added or merged in. Each
// octave's counters are allocated when it first counts a value. The zero
// value is an empty histogram; it is not safe for concurrent use.
type Histogram struct {
	octaves [histogramOctaves][]uint64
	count   uint64
	max     int64
}

// histogramBucket returns the octave of v ≥ 0 and its bucket within the octave.
func histogramBucket(v int64) (octave, sub int) {
	if v < histogramSub {
		return 0, int(v)
	}
	o := bits.Len64(uint64(v)) - HistogramBits
	return o, int(v>>(o-1)) - histogramSub
}

// bucketBounds returns the values bucket sub of octave o holds: [lo, hi),
// except that the last bucket, which would end at 2^63, ends at
// math.MaxInt64.
func bucketBounds(o, sub int) (lo, hi int64) {
	if o == 0 {
		return int64(sub), int64(sub) + 1
	}
	lo = int64(histogramSub+sub) << (o - 1)
	if hi = lo + 1<<(o-1); hi < lo {
		hi = math.MaxInt64
	}
	return lo, hi
}

// Add counts v; a negative v counts as 0.
func (h *Histogram) Add(v int64) {
	v = max(v, 0)
	o, sub := histogramBucket(v)
	if h.octaves[o] == nil {
		h.octaves[o] = make([]uint64, histogramSub)
	}
	h.octaves[o][sub]++
	h.count++
	h.max = max(h.max, v)
}

// Merge adds every value counted by o to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, counts := range o.octaves {
		if counts == nil {
			continue
		}
		if h.octaves[i] == nil {
			h.octaves[i] = make([]uint64, histogramSub)
		}
		for j, c := range counts {
			h.octaves[i][j] += c
		}
	}
	h.count += o.count
	h.max = max(h.max, o.max)
}

// Count returns the number of values counted.
func (h *Histogram) Count() uint64 { return h.count }

// Max returns the largest value counted, exactly; 0 when there is none.
func (h *Histogram) Max() int64 { return h.max }

// Counters returns the number of counters h keeps: what its memory
// grows with. It is at most MaxHistogramCounters.
func (h *Histogram) Counters() int {
	n := 0
	for _, c := range h.octaves {
		n += len(c)
	}
	return n
}

// Steps calls f for every non-empty bucket in increasing order with a
// time at which the cumulative count is reached and that count: at is the
// bucket's upper end (every value counted so far is below it), or the
// largest value counted for the last bucket, which is exact. So a step is
// never placed before the values it counts, and at most one bucket width
// (2^-HistogramBits of the value, or 1 below 2^HistogramBits) after them.
func (h *Histogram) Steps(f func(at int64, cumulative uint64)) {
	var cum uint64
	for o, counts := range h.octaves {
		for sub, c := range counts {
			if c == 0 {
				continue
			}
			cum += c
			_, hi := bucketBounds(o, sub)
			if cum == h.count {
				hi = h.max
			}
			f(hi, cum)
		}
	}
}

// Quantile returns an upper bound of the q-quantile (0 ≤ q ≤ 1) of the
// values counted, within one bucket width of the value: the smallest
// step (see Steps) whose cumulative count reaches q of the count. NaN when
// nothing was counted.
func (h *Histogram) Quantile(q float64) float64 {
	if h.count == 0 {
		return math.NaN()
	}
	need := uint64(math.Ceil(q * float64(h.count)))
	out := float64(h.max)
	done := false
	h.Steps(func(at int64, cum uint64) {
		if !done && cum >= need {
			out, done = float64(at), true
		}
	})
	return out
}

// HistogramCounts is a Histogram as data, for files that are merged later
// (shards): its non-empty buckets as (octave, bucket, count) and its largest
// value. A Histogram rebuilt from it counts exactly the same.
type HistogramCounts struct {
	Buckets [][3]uint64 `json:"buckets"`
	Max     int64       `json:"max"`
}

// Counts returns h as data.
func (h *Histogram) Counts() HistogramCounts {
	c := HistogramCounts{Buckets: [][3]uint64{}, Max: h.max}
	for o, counts := range h.octaves {
		for sub, n := range counts {
			if n > 0 {
				c.Buckets = append(c.Buckets, [3]uint64{uint64(o), uint64(sub), n})
			}
		}
	}
	return c
}

// AddCounts adds the values c describes to h. It fails, adding nothing,
// on data Counts does not write: buckets out of range, out of order or
// given twice, empty buckets, a largest value outside the last bucket (or
// other than 0 with no bucket), or counts that overflow.
func (h *Histogram) AddCounts(c HistogramCounts) error {
	var top [3]uint64
	total := h.count
	for i, b := range c.Buckets {
		switch {
		case b[0] >= histogramOctaves || b[1] >= histogramSub:
			return fmt.Errorf("histogram bucket (%d, %d) out of range", b[0], b[1])
		case i > 0 && (b[0] < top[0] || b[0] == top[0] && b[1] <= top[1]):
			return fmt.Errorf("histogram bucket (%d, %d) after (%d, %d): not in ascending order", b[0], b[1], top[0], top[1])
		case b[2] == 0:
			return fmt.Errorf("histogram bucket (%d, %d) counts nothing", b[0], b[1])
		case total+b[2] < total:
			return fmt.Errorf("histogram counts overflow")
		}
		total += b[2]
		top = b
	}
	if len(c.Buckets) == 0 {
		if c.Max != 0 {
			return fmt.Errorf("histogram largest value %d, but it counts nothing", c.Max)
		}
		return nil
	}
	if o, sub := histogramBucket(max(c.Max, 0)); c.Max < 0 || uint64(o) != top[0] || uint64(sub) != top[1] {
		lo, hi := bucketBounds(int(top[0]), int(top[1]))
		return fmt.Errorf("histogram largest value %d is not in its last bucket [%d, %d)", c.Max, lo, hi)
	}
	for _, b := range c.Buckets {
		o, sub := int(b[0]), int(b[1])
		if h.octaves[o] == nil {
			h.octaves[o] = make([]uint64, histogramSub)
		}
		h.octaves[o][sub] += b[2]
	}
	h.count = total
	h.max = max(h.max, c.Max)
	return nil
}

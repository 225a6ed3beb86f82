package sim

import (
	"fmt"
	"math"
	"time"
)

// Incident is the span of a scenario's trigger (a capacity cut, an outage),
// for the recovery metrics: goodput during and after it, and how long after
// its end goodput comes back (Recovery).
type Incident struct {
	// Start and End bound the trigger: [Start, End), End > Start >= 0.
	Start, End time.Duration
}

// Validate reports a span that is empty or reversed.
func (in Incident) Validate() error {
	if in.Start < 0 || in.End <= in.Start || in.End > Horizon {
		return fmt.Errorf("incident: want 0 <= start < end <= %v (got start %v, end %v)", Horizon, in.Start, in.End)
	}
	return nil
}

// Recovery rules: after the incident, a run has recovered at the first
// time t, a multiple of RecoveryStep at or after the incident's end, such that
// over [t, t+RecoveryWindow) goodput (operations completed) is at least
// RecoveryShare of what the server could give them: of the lesser of its
// capacity after the incident (the last step of its CapacityProfile; no
// bound for a model without one) and the demand (operations in progress at
// t plus those starting in the window). A window with no demand proves
// nothing and is skipped, so a run whose operations all gave up never
// recovers.
const (
	RecoveryWindow = 10 * time.Second
	RecoveryShare  = 0.9
	RecoveryStep   = 100 * time.Millisecond
)

// maxRecoveryBuckets bounds the counters a run keeps for its recovery:
// past that, the step doubles (adjacent buckets merge), so a run of any
// length keeps at most this many.
const maxRecoveryBuckets = 1 << 16

// Recovery is what a run measured around its incident (Config.Incident).
type Recovery struct {
	// Measured is true when the run had an incident to measure.
	Measured bool
	// DuringPerSecond and AfterPerSecond are goodput, in operations
	// completed per second, during the incident and over a span of the
	// same length right after it.
	DuringPerSecond, AfterPerSecond float64
	// Recovered says whether goodput came back (see RecoveryWindow) before
	// the run ended; TimeToRecover is then the time from the incident's end
	// until it did: t − end, where t is a multiple of Step (the grid of
	// time buckets from the run's start).
	Recovered     bool
	TimeToRecover time.Duration
	// Step is the resolution of TimeToRecover: RecoveryStep, doubled for
	// each time a long run's counters merged.
	Step time.Duration
}

// recoveryRecorder counts, per time bucket, operations started, ended
// (completed or given up) and completed, and counts the completions of the
// incident's two spans exactly.
type recoveryRecorder struct {
	incident                  Incident
	afterEnd                  time.Duration // end of the span after the incident
	capacity                  float64       // operations per second after the incident; +Inf if unbounded
	bucket                    time.Duration
	started, ended, completed []int32
	during, after             int
	// The bucket of the latest event and when it ends: events come in time
	// order, so finding their bucket needs no division.
	cursor    int
	cursorEnd time.Duration
}

func newRecoveryRecorder(in Incident, server ServerModel) *recoveryRecorder {
	rec := &recoveryRecorder{incident: in, afterEnd: 2*in.End - in.Start, capacity: math.Inf(1), bucket: RecoveryStep, cursorEnd: RecoveryStep}
	if p, ok := ModelAs[CapacityProfile](server); ok {
		if steps := p.Capacity(); len(steps) > 0 {
			if last := steps[len(steps)-1]; last.Per > 0 {
				rec.capacity = last.Requests * float64(time.Second) / float64(last.Per)
			}
		}
	}
	return rec
}

// add counts one event at time at in series s (one of the recorder's).
func (rec *recoveryRecorder) add(s *[]int32, at time.Duration) {
	i := int(at / rec.bucket)
	for i >= maxRecoveryBuckets {
		rec.coarsen()
		i = int(at / rec.bucket)
	}
	for len(*s) <= i {
		*s = append(*s, 0)
	}
	(*s)[i]++
}

// tick returns the bucket of an event at time at, no earlier than the
// events before it, and makes sure ended and completed reach it.
func (rec *recoveryRecorder) tick(at time.Duration) int {
	if at >= rec.cursorEnd {
		rec.cursor = int(at / rec.bucket)
		for rec.cursor >= maxRecoveryBuckets {
			rec.coarsen()
			rec.cursor = int(at / rec.bucket)
		}
		rec.cursorEnd = time.Duration(rec.cursor+1) * rec.bucket
	}
	for len(rec.ended) <= rec.cursor {
		rec.ended = append(rec.ended, 0)
		rec.completed = append(rec.completed, 0)
	}
	return rec.cursor
}

// coarsen doubles the bucket, merging buckets 2i and 2i+1 into i.
func (rec *recoveryRecorder) coarsen() {
	rec.bucket *= 2
	rec.cursor /= 2
	rec.cursorEnd = time.Duration(rec.cursor+1) * rec.bucket
	for _, s := range []*[]int32{&rec.started, &rec.ended, &rec.completed} {
		v := *s
		for i := range v {
			if i%2 == 1 {
				v[i/2] += v[i]
			} else {
				v[i/2] = v[i]
			}
		}
		*s = v[:(len(v)+1)/2]
	}
}

// complete counts an operation completed at at (event order).
func (rec *recoveryRecorder) complete(at time.Duration) {
	i := rec.tick(at)
	rec.completed[i]++
	rec.ended[i]++
	switch in := &rec.incident; {
	case at < in.Start:
	case at < in.End:
		rec.during++
	case at < rec.afterEnd:
		rec.after++
	}
}

// end counts an operation given up at at (event order).
func (rec *recoveryRecorder) end(at time.Duration) { rec.ended[rec.tick(at)]++ }

// start counts an operation started at at, in any order.

func (rec *recoveryRecorder) start(at time.Duration) { rec.add(&rec.started, at) }

// result applies the recovery rules to what the run counted.
func (rec *recoveryRecorder) result() Recovery {
	in := rec.incident
	length := (in.End - in.Start).Seconds()
	out := Recovery{Measured: true, Step: rec.bucket,
		DuringPerSecond: float64(rec.during) / length, AfterPerSecond: float64(rec.after) / length}
	n := max(len(rec.started), len(rec.ended), len(rec.completed))
	at := func(s []int32, i int) int {
		if i < len(s) {
			return int(s[i])
		}
		return 0
	}
	// prefix sums: cum[i] counts buckets [0, i)
	cumStarted, cumEnded, cumCompleted := make([]int, n+1), make([]int, n+1), make([]int, n+1)
	for i := range n {
		cumStarted[i+1] = cumStarted[i] + at(rec.started, i)
		cumEnded[i+1] = cumEnded[i] + at(rec.ended, i)
		cumCompleted[i+1] = cumCompleted[i] + at(rec.completed, i)
	}
	// A window is RecoveryWindow long, or one bucket when buckets have grown
	// longer; the capacity it is held to is its own length's worth.
	window := max(int(RecoveryWindow/rec.bucket), 1)
	most := rec.capacity * (time.Duration(window) * rec.bucket).Seconds()
	first := int((in.End + rec.bucket - 1) / rec.bucket)
	for k := first; k < n; k++ {
		end := min(k+window, n)
		demand := cumStarted[k] - cumEnded[k] + cumStarted[end] - cumStarted[k]
		if demand == 0 {
			continue
		}
		goodput := cumCompleted[end] - cumCompleted[k]
		if float64(goodput) >= RecoveryShare*min(most, float64(demand)) {
			out.Recovered = true
			out.TimeToRecover = time.Duration(k)*rec.bucket - in.End
			break
		}
	}
	return out
}

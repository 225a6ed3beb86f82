package fit

import (
	"fmt"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// runner follows, operation by operation, what the policy that ran did
// besides its backoffs: a switch of model within an operation (a
// fallback), a retry sent later than its logged backoff allows (held by
// a gate, throttle or in-flight limit), and a first attempt sent after its
// operation began (held before it was sent at all). Operations are
// remembered until their operation record (or, in a log whose operation
// records have given no start, until they end), at most maxOpen at once.
type runner struct {
	ops    map[string]*opTrack
	starts bool // an operation record has given its start
	// Switches counts operations that changed model; SwitchMin and
	// SwitchMax bound the attempts they made before it; From and To are
	// the first switch's models.
	Switches, SwitchMin, SwitchMax int
	From, To                       string
	// Retries counts retries whose wait was logged; Held those sent more
	// than 1 ms (and 1 %) after it ended, HeldMax the longest excess.
	Retries, Held int
	HeldMax       time.Duration
	// Firsts counts operations whose start and first attempt are both
	// known; Delayed those whose first attempt came over 1 ms after the
	// start, DelayMax the longest such delay.
	Firsts, Delayed int
	DelayMax        time.Duration
}

type opTrack struct {
	model     string
	switched  bool
	due       time.Time // the end of the last logged wait
	hasDue    bool
	wait      time.Duration // the last logged wait
	firstSent time.Time
}

func newRunner() *runner { return &runner{ops: map[string]*opTrack{}} }

// see follows one record.
func (r *runner) see(rec *Record) {
	if rec.Kind == OperationRecord {
		r.starts = r.starts || !rec.Start.IsZero()
		if o := r.ops[rec.Op]; o != nil {
			if !rec.Start.IsZero() && !o.firstSent.IsZero() {
				r.Firsts++
				if d := o.firstSent.Sub(rec.Start); d > time.Millisecond {
					r.Delayed++
					r.DelayMax = max(r.DelayMax, d)
				}
			}
			delete(r.ops, rec.Op)
		}
		return
	}
	o := r.ops[rec.Op]
	if o == nil {
		if rec.Attempt != 1 || len(r.ops) >= maxOpen {
			return
		}
		o = &opTrack{model: rec.Model, firstSent: rec.Sent}
		r.ops[rec.Op] = o
	}
	if o.hasDue {
		r.Retries++
		if late := rec.Sent.Sub(o.due); late > time.Millisecond+o.wait/100 {
			r.Held++
			r.HeldMax = max(r.HeldMax, late)
		}
	}
	switch {
	case o.switched:
	case rec.FallbackTo != "": // said after the attempt before the switch
		r.switched(o, rec.Attempt, rec.Model, rec.FallbackTo)
	case rec.Model != "" && o.model != "" && rec.Model != o.model: // seen on the first attempt after it
		r.switched(o, rec.Attempt-1, o.model, rec.Model)
	}
	o.hasDue = rec.HasBackoff
	if rec.HasBackoff {
		o.due, o.wait = rec.Answered.Add(rec.Backoff), rec.Backoff
	}
	if rec.Classified && (rec.Class == policies.Success || rec.Class == policies.Terminal) && !rec.HasBackoff {
		o.hasDue = false
		if !r.starts {
			delete(r.ops, rec.Op) // no operation record will ask for its first attempt
		}
	}
}

// switched counts an operation's switch of model after attempt after.
func (r *runner) switched(o *opTrack, after int, from, to string) {
	o.switched = true
	if r.Switches == 0 {
		r.SwitchMin, r.SwitchMax, r.From, r.To = after, after, from, to
	}
	r.Switches++
	r.SwitchMin, r.SwitchMax = min(r.SwitchMin, after), max(r.SwitchMax, after)
}

// describe says what the log shows of a fallback and of coordination,
// and what a fit does not infer.
func (r *runner) describe() []string {
	var out []string
	if r.Switches > 0 {
		when := fmt.Sprintf("after %d attempts", r.SwitchMin)
		if r.SwitchMax != r.SwitchMin {
			when = fmt.Sprintf("after %d to %d attempts", r.SwitchMin, r.SwitchMax)
		}
		from := "its first model"
		if r.From != "" {
			from = yamlString(r.From)
		}
		out = append(out, fmt.Sprintf("a model fallback: %d operations switched model (the first from %s to %s) %s; the fitted server gives both models one capacity, and as-run has no fallback",
			r.Switches, from, yamlString(r.To), when))
	}
	if r.Held > 0 {
		out = append(out, fmt.Sprintf("%d of %d retries were sent later than their logged wait allowed (by up to %v): something held them, a gate, a throttle or an in-flight limit; which one is not inferred",
			r.Held, r.Retries, roundDuration(r.HeldMax)))
	} else if r.Retries > 0 {
		out = append(out, fmt.Sprintf("every one of %d retries was sent when its logged wait ended: no gate, throttle or in-flight limit held them", r.Retries))
	}
	if r.Delayed > 0 {
		out = append(out, fmt.Sprintf("%d of %d operations whose start is logged sent their first attempt late (by up to %v): held before sending, as a gate, throttle or in-flight limit holds",
			r.Delayed, r.Firsts, roundDuration(r.DelayMax)))
	}
	return out
}

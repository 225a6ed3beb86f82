package sim

import (
	"fmt"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// Layer is a retry layer inside a policy's own (Policy.Layers): an SDK's
// retry loop inside the application's, an HTTP client's inside the SDK's.
// Levels are numbered from the policy itself (0, the outermost) inwards;
// each attempt of level k is a whole operation of level k+1, which starts
// afresh (its own attempts, backoff and rules), and only the innermost
// level's attempts reach the server. An attempt of level k ends with the
// outcome of level k+1's operation: its success, or the outcome of its
// last attempt when it stops (out of attempts, or an outcome it does not
// retry). With no other bound, the attempts reaching the server per
// operation are at most the product of the levels' max attempts.
//
// Each level's attempt timeout bounds its attempt: the whole inner loop,
// waits included. When it passes, the inner levels are abandoned (their
// request in flight too: its client stops waiting) and the level sees a
// timeout (Transient, no status), as policies.Do does for an attempt's
// context. The outermost level's deadline bounds everything, as without
// layers. A layer has no deadline, coordinators or fallback of its own
// (yet): its Rules' Deadline must be 0.
type Layer struct {
	// Name names the layer in its counter (layers.NAME.attempts).
	Name  string
	Rules policies.Policy
}

// MaxLayers bounds Policy.Layers.
const MaxLayers = 8

func validateLayers(ls []Layer) error {
	if len(ls) > MaxLayers {
		return fmt.Errorf("%d retry layers, at most %d", len(ls), MaxLayers)
	}
	for i, l := range ls {
		switch {
		case l.Name == "" || l.Name == "outer":
			return fmt.Errorf("layer %d needs a name other than \"\" and \"outer\"", i+1)
		case l.Rules.Backoff == nil:
			return fmt.Errorf("layer %q has no backoff", l.Name)
		case l.Rules.MaxAttempts <= 0:
			return fmt.Errorf("layer %q needs max attempts", l.Name)
		case l.Rules.Deadline != 0:
			return fmt.Errorf("layer %q: an inner layer has no deadline of its own (bound it with the attempt timeout of the layer around it)", l.Name)
		}
		for _, o := range ls[:i] {
			if o.Name == l.Name {
				return fmt.Errorf("two layers are called %q", l.Name)
			}
		}
	}
	return nil
}

// layers is the state of a run's inner retry layers: for operation i and
// level k (1..L), its Op is ops[i·L+k−1]; for level k (0..L−1), when the
// operation of level k+1 started is start[i·L+k] and when level k's
// attempt ends is end[i·L+k] (0: no timeout).
type layers struct {
	defs  []Layer
	plans []policies.Plan
	ops   []policies.Op
	start []time.Duration
	end   []time.Duration
	cur   []uint8 // the level operation i is at: 0 when the outermost decides
	sends []int64 // attempts of each level 0..L−1 (the innermost's are Result.Attempts)
}

func newLayers(defs []Layer, n int) *layers {
	L := len(defs)
	lay := &layers{defs: defs, plans: make([]policies.Plan, L), ops: make([]policies.Op, n*L),
		start: make([]time.Duration, n*L), end: make([]time.Duration, n*L), cur: make([]uint8, n), sends: make([]int64, L)}
	for k, d := range defs {
		lay.plans[k] = policies.Plan{Policy: d.Rules}
	}
	return lay
}

// op is level k's (1..L) Op of operation i.
func (lay *layers) op(i int32, k int) *policies.Op { return &lay.ops[int(i)*len(lay.defs)+k-1] }

// levelTimeout is level k's attempt timeout (level 0: the policy's).
func (r *runner) levelTimeout(k int) time.Duration {
	if k == 0 {
		return r.plan.Policy.AttemptTimeout
	}
	return r.lay.defs[k-1].Rules.AttemptTimeout
}

// descend sends level k's attempt of operation i: level k+1's operation
// starts, at now.
func (r *runner) descend(i int32, now time.Duration, k int) {
	lay := r.lay
	at := int(i)*len(lay.defs) + k
	lay.sends[k]++
	lay.end[at] = 0
	if t := r.levelTimeout(k); t > 0 {
		lay.end[at] = now + t
	}
	lay.start[at] = now
	lay.op(i, k+1).Start(&lay.plans[k])
	lay.cur[i] = uint8(k + 1)
	r.readyInner(i, now)
}

// outerEnd is the earliest end of the attempts of levels below k that
// operation i is in; 0 for none.
func (lay *layers) outerEnd(i int32, k int) time.Duration {
	var end time.Duration
	for j := range k {
		if e := lay.end[int(i)*len(lay.defs)+j]; e > 0 && (end == 0 || e < end) {
			end = e
		}
	}
	return end
}

// expired returns the outermost level below k whose attempt has ended by
// now, if any.
func (lay *layers) expired(i int32, k int, now time.Duration) (int, bool) {
	for j := range k {
		if e := lay.end[int(i)*len(lay.defs)+j]; e > 0 && e <= now {
			return j, true
		}
	}
	return 0, false
}

// readyInner asks level k > 0 of operation i whether it may send now.
func (r *runner) readyInner(i int32, now time.Duration) {
	lay := r.lay
	k := int(lay.cur[i])
	if j, ok := lay.expired(i, k, now); ok {
		r.timedOut(i, now, j)
		return
	}
	st := lay.op(i, k).Before(&lay.plans[k-1], policies.Moment{Now: epoch.Add(now), Since: now - lay.start[int(i)*len(lay.defs)+k-1]}, nil, r.rng)
	switch st.Kind {
	case policies.StepSend:
		if k < len(lay.defs) {
			r.descend(i, now, k)
			return
		}
		giveUp := lay.outerEnd(i, k)
		if t := r.levelTimeout(k); t > 0 && (giveUp == 0 || now+t < giveUp) {
			giveUp = now + t
		}
		r.sendTo(i, now, giveUp, r.retrying(i))
	case policies.StepWait:
		at := now + st.Delay
		if e := lay.outerEnd(i, k); e > 0 && e < at {
			at = e // an outer attempt times out first
		}
		r.schedule(at, i, evReady)
	case policies.StepStop:
		// Before any attempt of its own (none stops so without a
		// deadline or coordinators): the level's outcome is the last one seen.
		r.up(i, now, k)
	default:
		r.err = fmt.Errorf("policy %q: layer %q blocked, but a layer has no coordinators", r.cfg.Policy.Name, lay.defs[k-1].Name)
	}
}

// retrying reports whether the attempt operation i is about to send is a
// retry at some level.
func (r *runner) retrying(i int32) bool {
	if r.ops[i].op.Attempts() > 1 {
		return true
	}
	for k := 1; k <= len(r.lay.defs); k++ {
		if r.lay.op(i, k).Attempts() > 1 {
			return true
		}
	}
	return false
}

// respondInner gives the server's response to operation i's innermost
// level, or, when it is an outer level's attempt timing out (the response
// was cut at that level's end), to that level.
func (r *runner) respondInner(i int32, now time.Duration) {
	o := &r.ops[i]
	if o.class == policies.Transient && o.status == 0 {
		if j, ok := r.lay.expired(i, len(r.lay.defs), now); ok {
			r.timedOut(i, now, j)
			return
		}
	}
	r.afterInner(i, now, len(r.lay.defs))
}

// timedOut ends level j's attempt of operation i at now with a timeout.
func (r *runner) timedOut(i int32, now time.Duration, j int) {
	o := &r.ops[i]
	o.class, o.status, o.wait = policies.Transient, 0, 0
	r.up(i, now, j+1)
}

// up ends level k's operation of operation i: its outcome, in the
// operation's outcome fields, is that of level k−1's attempt.
func (r *runner) up(i int32, now time.Duration, k int) {
	lay := r.lay
	lay.cur[i] = uint8(k - 1)
	lay.end[int(i)*len(lay.defs)+k-1] = 0
	if k == 1 {
		r.conclude(i, now)
		return
	}
	r.afterInner(i, now, k-1)
}

// afterInner gives level k > 0 of operation i the outcome of its attempt.
func (r *runner) afterInner(i int32, now time.Duration, k int) {
	lay := r.lay
	o := &r.ops[i]
	m := policies.Moment{Now: epoch.Add(now), Since: now - lay.start[int(i)*len(lay.defs)+k-1]}
	if o.class == policies.Success {
		lay.op(i, k).After(&lay.plans[k-1], m, policies.Outcome{}, false, nil, r.rng)
		r.up(i, now, k)
		return
	}
	st := lay.op(i, k).After(&lay.plans[k-1], m, o.outcome(), true, nil, r.rng)
	if st.Kind == policies.StepStop {
		r.up(i, now, k)
		return
	}
	at := now + st.Delay
	if e := lay.outerEnd(i, k); e > 0 && e < at {
		at = e
	}
	r.schedule(at, i, evReady)
}

// report adds each level's attempts: layers.outer.attempts (the policy's
// own), then layers.NAME.attempts for each layer.
func (lay *layers) report(r *runner, c *Counters) {
	c.Add("layers.outer.attempts", lay.sends[0])
	for k, d := range lay.defs {
		n := r.res.Attempts
		if k+1 < len(lay.defs) {
			n = int(lay.sends[k+1])
		}
		c.Add("layers."+d.Name+".attempts", int64(n))
	}
}

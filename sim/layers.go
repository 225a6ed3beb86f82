package sim

import (
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// Layer is a retry layer inside a policy's own (Policy.Layers): an SDK's
// retry loop inside the application's, an HTTP client's inside the SDK's,
// a sidecar's in front of them all. Levels are numbered from the policy
// itself (0, the outermost) inwards; each attempt of level k is a whole
// operation of level k+1, which starts afresh (its own attempts, backoff
// and rules), and only the innermost level's attempts reach the server.
// An attempt of level k ends with the outcome of level k+1's operation:
// its success, or the outcome of its last attempt when it stops (out of
// attempts, or an outcome it does not retry). With no other bound, the
// attempts reaching the server per operation are at most the product of
// the levels' max attempts.
//
// Each level's attempt timeout bounds its attempt: the whole inner loop,
// waits included; the outermost level's deadline bounds level 0's
// attempts too. When an attempt of level k ends so, level k sees a
// timeout (Transient, no status), as policies.Do does for an attempt's
// context, and what happens inside depends on deadline propagation:
//
//   - a layer that receives its caller's deadline (the default) stops
//     with it: it is abandoned at once, its request in flight too (its
//     client stops waiting), and so are the layers inside it that
//     receive its deadline in turn. Such a layer knows the earliest end of
//     the attempts around it: its waits stop there and its requests' client
//     stops waiting there, as Envoy caps a per-try timeout by the remaining
//     deadline. It still sends an attempt with less than its own attempt
//     timeout left.
//   - a layer with NoDeadlinePropagation (a sidecar or gateway that does
//     not read a deadline header) knows none of the attempts around it:
//     when its caller gives up, it goes on as an orphan, with the layers
//     inside it, until its own rules stop it; its attempts still reach the
//     server, and its outcome is discarded. Meanwhile its caller retries,
//     starting a fresh operation of the layer.
//
// A layer has no deadline or fallback of its own: its Rules' Deadline
// must be 0. Its Coordinators are shared by every operation of the run at
// that layer, orphans included (a sidecar's retry budget is shared by all
// its callers); they must not queue operations (an in-flight limit), hedge
// or read rate-limit headers.
type Layer struct {
	// Name names the layer in its counters (layers.NAME.attempts).
	Name  string
	Rules policies.Policy
	// Coordinators are the layer's own shared controls (retry budget,
	// breaker, throttle, ...), asked in this order before each of its
	// attempts.
	Coordinators []machine.Spec
	// NoDeadlinePropagation: the layer does not receive its caller's
	// deadline and goes on as an orphan when its caller gives up.
	NoDeadlinePropagation bool
}

// evTier is the event of a slot whose own event was moved to the end of
// an attempt around it (runner.beyond).
const evTier = evHedge + 1

// MaxLayers bounds Policy.Layers.
const MaxLayers = 8

// ValidateLayers checks a policy's layers as a run does.
func ValidateLayers(ls []Layer) error {
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
		case len(l.Coordinators) > machine.MaxCoordinators:
			return fmt.Errorf("layer %q: %d coordinators, at most %d", l.Name, len(l.Coordinators), machine.MaxCoordinators)
		}
		for _, s := range l.Coordinators {
			if err := validateLayerCoordinator(s); err != nil {
				return fmt.Errorf("layer %q: %w", l.Name, err)
			}
		}
		for _, o := range ls[:i] {
			if o.Name == l.Name {
				return fmt.Errorf("two layers are called %q", l.Name)
			}
		}
	}
	return nil
}

// validateLayerCoordinator refuses what an inner layer cannot drive: a
// coordinator that queues operations (the engine keeps a waiter only for
// the outermost level), a hedge, and one that reads rate-limit headers
// (only the outermost level gets them).
func validateLayerCoordinator(s machine.Spec) error {
	if s == nil {
		return fmt.Errorf("a nil coordinator spec")
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if q, ok := s.(machine.Queuer); ok && q.Queues() {
		return fmt.Errorf("%T queues operations; an inner layer's coordinators must not (put the in-flight limit on the outermost policy)", s)
	}
	if _, ok := s.(policies.HedgeConfig); ok {
		return fmt.Errorf("an inner layer cannot hedge")
	}
	c, err := s.NewCoordinator()
	if err != nil {
		return err
	}
	if _, ok := c.(machine.LimitsObserver); ok {
		return fmt.Errorf("%T reads rate-limit headers, which only the outermost policy gets", s)
	}
	return nil
}

// retryClasses are the classes whose retries each level counts
// (layers.NAME.retries_CLASS); the names are those expectations use.
var retryClasses = [...]struct {
	class policies.Class
	name  string
}{{policies.RetryAfter, "retry_after"}, {policies.Capacity, "capacity"}, {policies.Transient, "transient"}, {policies.Terminal, "terminal"}}

// RetryClassNames are the class names of the counters
// layers.NAME.retries_CLASS, in order.
func RetryClassNames() []string {
	names := make([]string, len(retryClasses))
	for i, c := range retryClasses {
		names[i] = c.name
	}
	return names
}

// layers is the state of a run's inner retry layers. It is kept per slot:
// slots 0..base−1 are the run's operations, and slots from base on hold
// orphans, the work of layers whose caller gave up; an orphan's slot is
// also an operation slot of the engine (runner.ops, an event key), reused
// from a free list once the orphan ends. For slot i and level k (1..L),
// its Op is ops[i·L+k−1]; for level k (0..L−1), when the operation of
// level k+1 started is start[i·L+k] and when level k's attempt ends is
// end[i·L+k] (0: no end; always 0 below an orphan's root).
type layers struct {
	defs  []Layer
	plans []machine.Plan
	// known[k] is the outermost level whose attempt's end level k (1..L)
	// knows: levels known[k]+1..k all receive their caller's deadline
	// (known[k] == k: none).
	known []int
	base  int32
	ops   []machine.Op
	start []time.Duration
	end   []time.Duration
	cur   []uint8 // the level slot i is at: 0 when the outermost decides
	root  []uint8 // the slot's outermost level: 0 for an operation, ≥ 1 for an orphan
	// With a layer that does not receive its caller's deadline, an event
	// of a slot later than the end of an attempt around it is moved there
	// (evTier): due and dueKind hold the event itself, which the orphan
	// made then takes. nil without such a layer.
	due     []time.Duration
	dueKind []eventKind
	parent  []int32 // orphan slot base+j came from operation parent[j]
	free    []int32
	seed    uint64
	orphans uint64 // orphans made so far: the next one's random stream
	// Counts: attempts of each level 0..L−1 (the innermost's are
	// Result.Attempts), attempts out of each level 1..L by orphans, and
	// retries of each level 0..L by class (retryClasses).
	sends   []int64
	late    []int64
	retries [][len(retryClasses)]int64
}

func newLayers(defs []Layer, n int, seed uint64) (*layers, error) {
	L := len(defs)
	lay := &layers{defs: defs, plans: make([]machine.Plan, L), known: make([]int, L+1), base: int32(n), seed: seed,
		ops: make([]machine.Op, n*L), start: make([]time.Duration, n*L), end: make([]time.Duration, n*L),
		cur: make([]uint8, n), root: make([]uint8, n), sends: make([]int64, L), late: make([]int64, L), retries: make([][len(retryClasses)]int64, L+1)}
	for k, d := range defs {
		lay.plans[k] = machine.Plan{Policy: d.Rules}
		for _, s := range d.Coordinators {
			c, err := s.NewCoordinator()
			if err != nil {
				return nil, fmt.Errorf("layer %q: %w", d.Name, err)
			}
			lay.plans[k].Coordinators = append(lay.plans[k].Coordinators, c)
		}
		lay.known[k+1] = k + 1
		if !d.NoDeadlinePropagation {
			lay.known[k+1] = lay.known[k]
		}
		if d.NoDeadlinePropagation && lay.due == nil {
			lay.due, lay.dueKind = make([]time.Duration, n), make([]eventKind, n)
		}
	}
	return lay, nil
}

// orphaning reports whether some layer goes on when its caller gives up.
func (lay *layers) orphaning() bool { return lay.due != nil }

// op is level k's (1..L) Op of slot i.
func (lay *layers) op(i int32, k int) *machine.Op { return &lay.ops[int(i)*len(lay.defs)+k-1] }

// levelTimeout is level k's attempt timeout (level 0: the policy's).
func (r *runner) levelTimeout(k int) time.Duration {
	if k == 0 {
		return r.plan.Policy.AttemptTimeout
	}
	return r.lay.defs[k-1].Rules.AttemptTimeout
}

// descend sends level k's attempt of slot i: level k+1's operation
// starts, at now.
func (r *runner) descend(i int32, now time.Duration, k int) {
	lay := r.lay
	at := int(i)*len(lay.defs) + k
	lay.sent(r, i, k)
	end := time.Duration(0)
	if t := r.levelTimeout(k); t > 0 {
		end = now + t
	}
	if d := r.plan.Policy.Deadline; k == 0 && d > 0 && (end == 0 || r.ops[i].start+d < end) {
		end = r.ops[i].start + d // the budget ends the attempt too
	}
	lay.end[at] = end
	lay.start[at] = now
	lay.op(i, k+1).Start(&lay.plans[k])
	lay.cur[i] = uint8(k + 1)
	r.readyInner(i, now)
}

// knownEnd is the earliest end of the attempts around level k of slot i
// that level k knows (those its deadline comes from); 0 for none.
func (lay *layers) knownEnd(i int32, k int) time.Duration {
	return lay.earliest(i, lay.known[k], k)
}

// earliest is the earliest end of slot i's attempts of levels from..to−1;
// 0 for none.
func (lay *layers) earliest(i int32, from, to int) time.Duration {
	var end time.Duration
	base := int(i) * len(lay.defs)
	for j := from; j < to; j++ {
		if e := lay.end[base+j]; e > 0 && (end == 0 || e < end) {
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

// bound prepares the engine to schedule slot i's events at level k: an
// event after the end of an attempt around it that level k does not know
// is moved to that end (runner.limit), and the policy's deadline bounds
// the slot's requests only if it reaches level k (runner.deadline).
// unbound undoes it.
func (r *runner) bound(i int32, k int) {
	lay := r.lay
	r.limit, r.deadline = Horizon, 0
	if i < lay.base && lay.known[k] == 0 {
		r.deadline = r.plan.Policy.Deadline
	}
	if !lay.orphaning() {
		return
	}
	if e := lay.earliest(i, 0, k); e > 0 {
		if known := lay.knownEnd(i, k); known == 0 || e < known {
			r.limit = e
		}
	}
}

func (r *runner) unbound() { r.limit, r.deadline = Horizon, r.plan.Policy.Deadline }

// beyond schedules operation i's event of kind at at, which is later
// than runner.limit: past the horizon, the run fails; otherwise the event
// comes after the end of an attempt around the level that schedules it,
// and it is moved there (evTier) until that attempt has ended.
func (r *runner) beyond(at time.Duration, i int32, kind eventKind) {
	if at > Horizon || r.lay == nil || !r.lay.orphaning() {
		r.err = fmt.Errorf("policy %q: virtual time would pass the simulator's horizon of %v (client %d, attempt %d); set a deadline or fewer attempts",
			r.cfg.Policy.Name, Horizon, i, r.ops[i].op.Attempts()+1)
		return
	}
	r.lay.due[i], r.lay.dueKind[i] = at, kind
	r.ops[i].next = evTier
	r.q.push(r.limit, i)
}

// tierEvent handles an event moved by beyond: an attempt around slot i's
// level has ended at now; the event itself goes to the orphan.
func (r *runner) tierEvent(i int32, now time.Duration) {
	lay := r.lay
	r.src.pcg = &r.ops[i].pcg
	r.ops[i].next = lay.dueKind[i]
	j, ok := lay.expired(i, int(lay.cur[i]), now)
	if !ok {
		r.err = fmt.Errorf("policy %q: an event of slot %d was moved to %v, but no attempt around it ends then", r.cfg.Policy.Name, i, now)
		return
	}
	r.timedOut(i, now, j, lay.due[i], lay.dueKind[i])
}

// readyInner asks level k > 0 of slot i whether it may send now.
func (r *runner) readyInner(i int32, now time.Duration) {
	lay := r.lay
	k := int(lay.cur[i])
	if j, ok := lay.expired(i, k, now); ok {
		r.timedOut(i, now, j, now, evReady)
		return
	}
	st := lay.op(i, k).Before(&lay.plans[k-1], machine.Moment{Now: epoch.Add(now), Since: now - lay.start[int(i)*len(lay.defs)+k-1]}, nil, r.rng)
	switch st.Kind {
	case machine.StepSend:
		if k < len(lay.defs) {
			r.descend(i, now, k)
			return
		}
		giveUp := lay.knownEnd(i, k)
		if t := r.levelTimeout(k); t > 0 && (giveUp == 0 || now+t < giveUp) {
			giveUp = now + t
		}
		lay.sent(r, i, k)
		r.bound(i, k)
		r.sendTo(i, now, giveUp, r.retrying(i))
		r.unbound()
	case machine.StepWait:
		at := now + st.Delay
		if e := lay.knownEnd(i, k); e > 0 && e < at {
			at = e // an attempt around it times out first
		}
		r.bound(i, k)
		r.schedule(at, i, evReady)
		r.unbound()
	case machine.StepStop:
		if lay.op(i, k).Attempts() == 0 {
			// A coordinator of the layer refused its first attempt: the
			// layer answers 503, as Envoy does when a budget or breaker
			// refuses a request.
			o := &r.ops[i]
			o.class, o.status, o.wait = policies.Capacity, 503, 0
		} // else the level's outcome is its last attempt's
		r.up(i, now, k)
	default:
		r.err = fmt.Errorf("policy %q: layer %q blocked, but a layer's coordinators cannot queue", r.cfg.Policy.Name, lay.defs[k-1].Name)
	}
}

// retrying reports whether the attempt slot i is about to send is a
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

// respondInner gives the server's response to slot i's innermost level,
// or, when it is an outer level's attempt timing out (the response was cut
// at that level's end), to that level.
func (r *runner) respondInner(i int32, now time.Duration) {
	o := &r.ops[i]
	if o.class == policies.Transient && o.status == 0 {
		if j, ok := r.lay.expired(i, len(r.lay.defs), now); ok {
			r.timedOut(i, now, j, now, evResponse)
			return
		}
	}
	r.afterInner(i, now, len(r.lay.defs))
}

// decideInner is decide for slot i of a layered run.
func (r *runner) decideInner(i int32, now time.Duration) {
	o := &r.ops[i]
	r.bound(i, int(r.lay.cur[i]))
	if resp := r.decider.Decide(now, o.status); resp.Pending {
		r.pend(i, resp, o.wait)
	} else {
		r.deliver(i, now, resp, o.wait)
	}
	r.unbound()
}

// timedOut ends level j's attempt of slot i at now with a timeout. The
// levels inside it that receive its deadline are abandoned; the first one
// that does not goes on, with those inside it, as an orphan, which takes
// the slot's pending event: kind, at at.
func (r *runner) timedOut(i int32, now time.Duration, j int, at time.Duration, kind eventKind) {
	lay := r.lay
	c := int(lay.cur[i])
	last := c // the innermost level abandoned
	for m := j + 1; m <= c; m++ {
		if lay.defs[m-1].NoDeadlinePropagation {
			r.orphan(i, m, at, kind)
			last = m - 1
			break
		}
	}
	if r.err != nil {
		return
	}
	r.abandon(i, now, j+1, last, last < c || kind != evReady)
	o := &r.ops[i]
	o.class, o.status, o.wait = policies.Transient, 0, 0
	r.up(i, now, j+1)
}

// abandon tells the coordinators of slot i's levels from..to, whose
// caller gave up at now, that their operations end there: an attempt in
// flight (every level's but the innermost's, whose only if inFlight)
// timed out, as Expire tells it; the innermost's pending attempt, if not
// sent, is given back.
func (r *runner) abandon(i int32, now time.Duration, from, to int, inFlight bool) {
	lay := r.lay
	for k := from; k <= to; k++ {
		p := &lay.plans[k-1]
		if len(p.Coordinators) == 0 {
			continue
		}
		m := machine.Moment{Now: epoch.Add(now), Since: now - lay.start[int(i)*len(lay.defs)+k-1]}
		if k < to || inFlight {
			lay.op(i, k).Expire(p, m)
		} else {
			lay.op(i, k).Abandon(p, m.Now, nil)
		}
	}
}

// orphan moves levels m..cur of slot i, whose caller gave up, to a slot of
// their own, and schedules its pending event there.
func (r *runner) orphan(i int32, m int, at time.Duration, kind eventKind) {
	lay := r.lay
	s, ok := r.newSlot(i)
	if !ok {
		return
	}
	L := len(lay.defs)
	from, to := int(i)*L, int(s)*L
	copy(lay.ops[to:to+L], lay.ops[from:from+L])
	copy(lay.start[to:to+L], lay.start[from:from+L])
	copy(lay.end[to:to+L], lay.end[from:from+L])
	clear(lay.end[to : to+m]) // the attempts around it are over
	lay.cur[s], lay.root[s] = lay.cur[i], uint8(m)
	pcg := r.ops[s].pcg
	r.ops[s] = r.ops[i]
	r.ops[s].pcg = pcg
	r.bound(s, int(lay.cur[s]))
	r.schedule(at, s, kind)
	r.unbound()
}

// newSlot returns a free orphan slot for work that slot from gives up
// (for the same operation), with a fresh random stream; false when the run has no room for it (r.err).
func (r *runner) newSlot(from int32) (int32, bool) {
	lay := r.lay
	parent := int32(r.owner(from)) // an orphan of an orphan works for the same operation
	var s int32
	if n := len(lay.free); n > 0 {
		s, lay.free = lay.free[n-1], lay.free[:n-1]
		lay.parent[s-lay.base] = parent
	} else {
		if len(r.ops) >= MaxOperations {
			r.err = fmt.Errorf("policy %q: more than %d operations and orphaned layer operations at once", r.cfg.Policy.Name, MaxOperations)
			return 0, false
		}
		s = int32(len(r.ops))
		r.ops = append(doubled(r.ops, 1), operation{})
		r.src.pcg = &r.ops[from].pcg // the slice may have moved
		L := len(lay.defs)
		lay.ops = append(doubled(lay.ops, L), make([]machine.Op, L)...)
		lay.start = append(doubled(lay.start, L), make([]time.Duration, L)...)
		lay.end = append(doubled(lay.end, L), make([]time.Duration, L)...)
		lay.cur, lay.root = append(doubled(lay.cur, 1), 0), append(doubled(lay.root, 1), 0)
		lay.due, lay.dueKind = append(doubled(lay.due, 1), 0), append(doubled(lay.dueKind, 1), 0)
		lay.parent = append(lay.parent, parent)
	}
	r.ops[s].pcg = newStream(lay.seed, streamOrphan, lay.orphans)
	lay.orphans++
	return s, true
}

// doubled returns s with room for extra more elements, doubling its
// capacity when it has none: append grows large slices by a quarter, and
// the orphans' arrays start as large as the run's operations.
func doubled[T any](s []T, extra int) []T {
	if cap(s)-len(s) >= extra {
		return s
	}
	return slices.Grow(s, max(extra, len(s)))
}

// owner is the operation whose work slot i does: i itself, or the
// operation an orphan came from.
func (r *runner) owner(i int32) int {
	if r.lay == nil || i < r.lay.base {
		return int(i)
	}
	return int(r.lay.parent[i-r.lay.base])
}

// up ends level k's operation of slot i: its outcome, in the slot's
// outcome fields, is that of level k−1's attempt.
func (r *runner) up(i int32, now time.Duration, k int) {
	lay := r.lay
	lay.cur[i] = uint8(k - 1)
	lay.end[int(i)*len(lay.defs)+k-1] = 0
	switch {
	case int(lay.root[i]) == k:
		lay.free = append(lay.free, i) // the orphan is done; its outcome reaches nobody
	case k == 1:
		r.conclude(i, now)
	default:
		r.afterInner(i, now, k-1)
	}
}

// sent counts level k's attempt of slot i, about to be sent: a retry
// follows the failure still in the slot's outcome fields.
func (lay *layers) sent(r *runner, i int32, k int) {
	if k < len(lay.defs) {
		lay.sends[k]++
	}
	if i >= lay.base && k > 0 {
		lay.late[k-1]++ // an orphan's root is level 1 or deeper
	}
	op := &r.ops[i].op
	if k > 0 {
		op = lay.op(i, k)
	}
	if op.Attempts() > 1 {
		for c, rc := range retryClasses {
			if rc.class == r.ops[i].class {
				lay.retries[k][c]++
			}
		}
	}
}

// afterInner gives level k > 0 of slot i the outcome of its attempt.
func (r *runner) afterInner(i int32, now time.Duration, k int) {
	lay := r.lay
	o := &r.ops[i]
	m := machine.Moment{Now: epoch.Add(now), Since: now - lay.start[int(i)*len(lay.defs)+k-1]}
	if o.class == policies.Success {
		lay.op(i, k).After(&lay.plans[k-1], m, policies.Outcome{}, false, nil, r.rng)
		r.up(i, now, k)
		return
	}
	st := lay.op(i, k).After(&lay.plans[k-1], m, o.outcome(), true, nil, r.rng)
	if st.Kind == machine.StepStop {
		r.up(i, now, k)
		return
	}
	at := now + st.Delay
	if e := lay.knownEnd(i, k); e > 0 && e < at {
		at = e
	}
	r.bound(i, k)
	r.schedule(at, i, evReady)
	r.unbound()
}

// report adds each level's counts: layers.outer.attempts and
// layers.outer.retries_CLASS for the policy's own, then for each layer
// layers.NAME.attempts_in (its operations: attempts of the level around
// it), layers.NAME.attempts (its attempts), layers.NAME.after_giveup (its
// attempts made after a caller around it gave up) and
// layers.NAME.retries_CLASS; layers.after_giveup is the innermost's.
func (lay *layers) report(r *runner, c *Counters) {
	c.Add("layers.outer.attempts", lay.sends[0])
	lay.reportRetries(c, "outer", 0)
	for k, d := range lay.defs {
		out := int64(r.res.Attempts)
		if k+1 < len(lay.defs) {
			out = lay.sends[k+1]
		}
		c.Add("layers."+d.Name+".attempts_in", lay.sends[k])
		c.Add("layers."+d.Name+".attempts", out)
		c.Add("layers."+d.Name+".after_giveup", lay.late[k])
		lay.reportRetries(c, d.Name, k+1)
	}
	c.Add("layers.after_giveup", lay.late[len(lay.defs)-1])
}

func (lay *layers) reportRetries(c *Counters, name string, k int) {
	for n, rc := range retryClasses {
		c.Add("layers."+name+".retries_"+rc.name, lay.retries[k][n])
	}
}

// LayerBytes is what retry layers take per operation of a run (newLayers):
// each level's state and times, plus the level and root marks, and with
// orphaning the parked event (due, dueKind).
func LayerBytes(layers int, orphaning bool) int64 {
	if layers == 0 {
		return 0
	}
	perLevel := int64(unsafe.Sizeof(machine.Op{})) + 2*int64(unsafe.Sizeof(time.Duration(0)))
	n := int64(layers)*perLevel + 2
	if orphaning {
		n += int64(unsafe.Sizeof(time.Duration(0))) + 1
	}
	return n
}

// OrphanSlotBytes is what one orphan slot of a policy with layers retry
// layers takes: its operation, its layers' state and its parent (what
// newSlot appends).
func OrphanSlotBytes(layers int) int64 {
	return int64(unsafe.Sizeof(operation{})) + LayerBytes(layers, true) + 4
}

// Orphaning reports whether some layer of p goes on after its caller
// gave up.
func (p *Policy) Orphaning() bool {
	return slices.ContainsFunc(p.Layers, func(l Layer) bool { return l.NoDeadlinePropagation })
}

// OrphansPerOperation bounds the orphans one operation of p can have at
// once, given the attempts outer sends at most: each attempt of the
// level around a layer that does not receive its caller's deadline may
// leave one behind, if some level around that layer gives up on time (an
// attempt timeout, or the policy's deadline). 0 when none can.
func (p *Policy) OrphansPerOperation(outer float64) float64 {
	n, attempts := 0.0, outer
	timed := p.Rules.AttemptTimeout > 0 || p.Rules.Deadline > 0
	for _, l := range p.Layers {
		if l.NoDeadlinePropagation && timed {
			n += attempts
		}
		attempts *= float64(l.Rules.MaxAttempts)
		timed = timed || l.Rules.AttemptTimeout > 0
	}
	return n
}

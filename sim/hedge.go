package sim

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// Hedging in the engine (the rules are policies.HedgeConfig's). An
// operation of a hedging policy keeps its attempt's copies beside it; its
// one pending event (evHedge) is the earliest of their answers and the next
// hedge due. Events at one instant go: answers first, lower copies first,
// then the hedge due. The first successful answer wins: the copies still
// out are cancelled there (the server is told, if it is a Canceller, and
// each counts in hedge.cancelled), and the winner is answered as any
// attempt. A copy sent while a sibling's success is already known to come
// at T carries GiveUpAt = T (its client will cancel then), so a queue with
// drop_abandoned skips it if its turn comes later.

// Canceller is an optional interface of a Server that is told when a
// client cancels a request it sent before its answer came: a hedged copy
// whose sibling succeeded first. resp is what Arrive answered. A wrapper
// forwards it (cancel.go).
type Canceller interface {
	Cancel(now time.Duration, resp Response)
}

// hedgeCopy is one copy of a hedged attempt.
type hedgeCopy struct {
	at     time.Duration // when its answer reaches the client
	done   time.Duration // when the server said it answers (Response.At)
	wait   time.Duration
	status int32
	ticket int32
	class  policies.Class
	cut    bool // the budget ends first: the attempt is cut at at
	live   bool // sent and not yet answered or cancelled
}

// hedgeState is the copies of an operation's pending attempt.
type hedgeState struct {
	next   time.Duration // when the next hedge is due; -1 for none
	sent   time.Duration // when the first copy was sent
	delay  time.Duration // between copies, read when the first was sent
	copies int32         // copies of the pending attempt sent
	hedges int32         // hedges the operation sent (machine.Moment.Hedges)
	// c is the operation's copies, 1+MaxHedges of the policy's Hedger, in
	// the runner's hedgeCopies.
	c []hedgeCopy
}

// hedgeStateBytes is what hedging adds to an operation besides its
// copies, and hedgeCopyBytes what each copy takes (runs' work estimate).
const (
	hedgeStateBytes = int64(unsafe.Sizeof(hedgeState{}))
	hedgeCopyBytes  = int64(unsafe.Sizeof(hedgeCopy{}))
)

// HedgeBytes is the memory hedging adds to each operation of a policy
// whose Hedger sends at most maxHedges hedges an attempt.
func HedgeBytes(maxHedges int) int64 { return hedgeStateBytes + int64(1+maxHedges)*hedgeCopyBytes }

// initHedges prepares the copies of n operations when the policy hedges.
func (r *runner) initHedges(n int) error {
	if r.plan.Hedger() == nil {
		r.hedges = nil
		return nil
	}
	if r.decider != nil {
		return fmt.Errorf("policy %q hedges: hedging needs a server that decides each request when it arrives, and %T decides some later", r.cfg.Policy.Name, r.cfg.Server)
	}
	if cap(r.hedges) >= n {
		r.hedges = r.hedges[:n]
		clear(r.hedges)
	} else {
		r.hedges = make([]hedgeState, n)
	}
	w := 1 + r.plan.Hedger().Config().MaxHedges
	if cap(r.hedgeCopies) >= n*w {
		r.hedgeCopies = r.hedgeCopies[:n*w]
		clear(r.hedgeCopies)
	} else {
		r.hedgeCopies = make([]hedgeCopy, n*w)
	}
	for i := range r.hedges {
		r.hedges[i].c = r.hedgeCopies[i*w : (i+1)*w : (i+1)*w]
	}
	return nil
}

// sendHedged sends operation i's attempt as its first copy, with every
// hedge at once for a delay of 0, and schedules what comes next.
func (r *runner) sendHedged(i int32, now time.Duration) {
	o, h, p := &r.ops[i], &r.hedges[i], r.planOf(i)
	h.copies, h.next, h.sent = 0, -1, now
	h.delay, _ = o.op.HedgeDelay(p)
	r.sendCopy(i, now)
	if h.delay > 0 {
		h.next = now + h.delay
	} else {
		for r.err == nil && o.op.Hedge(p, r.momentOf(i, now), int(h.copies)) {
			r.sendCopy(i, now)
		}
	}
	r.scheduleHedge(i)
}

// sendCopy sends the next copy of operation i's attempt.
func (r *runner) sendCopy(i int32, now time.Duration) {
	o, h := &r.ops[i], &r.hedges[i]
	k := h.copies
	h.copies++
	if k > 0 {
		h.hedges++
	}
	r.countSent(int(i))
	if f := r.cfg.Observer.OnSend; f != nil {
		f(now, int(i), o.op.Attempts() > 1)
	}
	req := r.request(i, now)
	giveUp := req.GiveUpAt
	req.Copy = int(k)
	if s, ok := h.firstSuccess(); ok && (req.GiveUpAt == 0 || s < req.GiveUpAt) {
		req.GiveUpAt = s
	}
	resp := r.server.Arrive(now, req)
	r.watch(now, req.GiveUpAt, &resp)
	if resp.Pending {
		r.err = fmt.Errorf("server model %T left a hedged request pending", r.cfg.Server)
		return
	}
	r.decided(now, i, resp.Outcome.Class, req.GiveUpAt > 0 && resp.At > req.GiveUpAt)
	c := hedgeCopy{at: resp.At, done: resp.At, wait: resp.Outcome.ServerWait, status: int32(resp.Outcome.Status), ticket: resp.Ticket, class: resp.Outcome.Class, live: true}
	if giveUp > 0 && resp.At > giveUp {
		// As await: cut at the budget's end, or a timeout.
		c.at = giveUp
		if giveUp == r.budgetEnd(i) {
			c.cut = true
		} else {
			c.class, c.status, c.wait = policies.Transient, 0, 0
		}
	}
	h.c[k] = c
}

// firstSuccess returns when the earliest successful answer among the
// copies out reaches the client.
func (h *hedgeState) firstSuccess() (time.Duration, bool) {
	best, ok := time.Duration(0), false
	for k := range h.copies {
		if c := &h.c[k]; c.live && c.class == policies.Success && !c.cut && (!ok || c.at < best) {
			best, ok = c.at, true
		}
	}
	return best, ok
}

// scheduleHedge schedules operation i's next happening.
func (r *runner) scheduleHedge(i int32) {
	h := &r.hedges[i]
	at := h.next
	for k := range h.copies {
		if c := &h.c[k]; c.live && (at < 0 || c.at < at) {
			at = c.at
		}
	}
	r.schedule(at, i, evHedge)
}

// hedgeEvent handles operation i's next happening at now: one answer, or
// the hedge due.
func (r *runner) hedgeEvent(i int32, now time.Duration) {
	o, h, p := &r.ops[i], &r.hedges[i], r.planOf(i)
	r.src.pcg = &o.pcg
	for k := range h.copies {
		c := &h.c[k]
		if !c.live || c.at != now {
			continue
		}
		c.live = false
		if (c.class == policies.Success && !c.cut) || !h.anyLive() {
			r.endHedged(i, now, c)
			return
		}
		r.scheduleHedge(i) // a failed copy while others are out
		return
	}
	// The hedge due.
	h.next = -1
	if o.op.Hedge(p, r.momentOf(i, now), int(h.copies)) {
		r.sendCopy(i, now)
		h.next = now + h.delay
	}
	r.scheduleHedge(i)
}

func (h *hedgeState) anyLive() bool {
	for k := range h.copies {
		if h.c[k].live {
			return true
		}
	}
	return false
}

// endHedged ends operation i's attempt with copy c's answer: the copies
// still out are cancelled, and c is answered as any attempt.
func (r *runner) endHedged(i int32, now time.Duration, c *hedgeCopy) {
	o, h := &r.ops[i], &r.hedges[i]
	h.next = -1
	n := 0
	for k := range h.copies {
		x := &h.c[k]
		if !x.live {
			continue
		}
		x.live = false
		n++
		cancel(r.server, now, Response{At: x.done, Ticket: x.ticket})
		if f := r.cfg.Observer.OnResponse; f != nil {
			f(now, int(i), policies.Transient) // the client stopped waiting
		}
	}
	if c.class == policies.Success && !c.cut {
		o.op.HedgeLatency(r.planOf(i), now-h.sent)
	}
	o.op.Cancelled(r.planOf(i), n)
	o.class, o.status, o.wait, o.cut = c.class, c.status, c.wait, c.cut
	r.respond(i, now)
}

// reportHedges adds the hedging controls' counts to the run's counters:
// hedge.sent, hedge.denied and hedge.cancelled.
func (r *runner) reportHedges() {
	if r.hedges == nil {
		return
	}
	var st machine.HedgeStats
	plans := r.plans
	if plans == nil {
		plans = []machine.Plan{r.plan}
	}
	for k := range plans {
		s := plans[k].Hedger().Stats()
		st.Sent, st.Denied, st.Cancelled = st.Sent+s.Sent, st.Denied+s.Denied, st.Cancelled+s.Cancelled
	}
	r.res.Counters.Add("hedge.sent", st.Sent)
	r.res.Counters.Add("hedge.denied", st.Denied)
	r.res.Counters.Add("hedge.cancelled", st.Cancelled)
}

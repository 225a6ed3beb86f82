package sim

import "time"

// Wrappers and Canceller. A server wrapper (rate limit, billing, crash,
// pool) tells its inner server of a cancel when the inner server gave the
// answer cancelled. Its own answers (a rate limit's rejection, a crash's
// refusal or reset, a pool's 429 with every member out) carry ownTicket,
// and their cancel goes no further. A pool keeps the member in the ticket
// (poolTicket): hedged requests are never pending, so their tickets are
// the wrappers' to use.

// ownTicket marks a wrapper's own answer.
const ownTicket int32 = -1

// cancelInner tells s of a cancel if it is a Canceller.
func cancelInner(s Server, now time.Duration, resp Response) {
	if c, ok := s.(Canceller); ok {
		c.Cancel(now, resp)
	}
}

// poolTicket is the ticket of member k's answer with ticket t, among n
// members; slot 0 is the pool's own.
func poolTicket(t int32, k, n int) int32 { return t*int32(n+1) + int32(k+1) }

// poolMemberOf undoes poolTicket: the member (-1: the pool's own answer)
// and the member's ticket.
func poolMemberOf(t int32, n int) (k int, inner int32) {
	m := int32(n + 1)
	slot := (t%m + m) % m
	return int(slot) - 1, (t - slot) / m
}

// Cancel forwards to the inner model, unless the rate limit answered.
func (s *rateLimitState) Cancel(now time.Duration, resp Response) {
	if resp.Ticket != ownTicket {
		cancelInner(s.inner, now, resp)
	}
}

// Cancel forwards to the inner model.
func (s *billingState) Cancel(now time.Duration, resp Response) { cancelInner(s.inner, now, resp) }

// Cancel forwards to the inner model, unless the crash answered. An
// answer of the inner model comes before the next crash, and so does its
// cancel: the inner state is still the one that answered.
func (s *crashState) Cancel(now time.Duration, resp Response) {
	if resp.Ticket != ownTicket {
		cancelInner(s.inner, now, resp)
	}
}

// Cancel forwards to the member that answered.
func (s *poolState) Cancel(now time.Duration, resp Response) {
	k, t := poolMemberOf(resp.Ticket, len(s.members))
	if k < 0 {
		return
	}
	resp.Ticket = t
	cancelInner(s.members[k].server, now, resp)
}

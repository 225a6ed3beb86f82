package sim

import "time"

// Wrappers and Canceller. The engine tells a cancel to the servers from
// the outermost down to the one that gave the answer (wrapper.go). A
// wrapper's own answers (a rate limit's rejection, a crash's refusal or
// reset, a pool's 429 with every member out, a retry layer's answers)
// carry ownTicket, and their cancel goes no further. A pool keeps the
// member in the ticket (poolTicket): hedged requests are never pending,
// so their tickets are the wrappers' to use.

// ownTicket marks a wrapper's own answer.
const ownTicket int32 = -1

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

// Cancel goes to the member that answered, and the servers inside it.
func (s *poolState) Cancel(now time.Duration, resp Response) {
	k, t := poolMemberOf(resp.Ticket, len(s.members))
	if k < 0 {
		return
	}
	resp.Ticket = t
	cancel(s.members[k].server, now, resp)
}

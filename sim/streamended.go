package sim

// Wrappers and StreamEnder: as Cancel (cancel.go), a wrapper tells the
// model that answered that the watchdog ended its stream; its own answers
// (ownTicket) go no further.

// streamEndedInner tells s, if it asks, of a stream the watchdog ended.
func streamEndedInner(s Server, resp Response, events int) {
	if e, ok := s.(StreamEnder); ok {
		e.StreamEnded(resp, events)
	}
}

// StreamEnded forwards to the inner model, unless the rate limit answered.
func (s *rateLimitState) StreamEnded(resp Response, events int) {
	if resp.Ticket != ownTicket {
		streamEndedInner(s.inner, resp, events)
	}
}

// StreamEnded forwards to the inner model, unless the crash answered.
func (s *crashState) StreamEnded(resp Response, events int) {
	if resp.Ticket != ownTicket {
		streamEndedInner(s.inner, resp, events)
	}
}

// StreamEnded forwards to the member that answered.
func (s *poolState) StreamEnded(resp Response, events int) {
	k, t := poolMemberOf(resp.Ticket, len(s.members))
	if k < 0 {
		return
	}
	resp.Ticket = t
	streamEndedInner(s.members[k].server, resp, events)
}

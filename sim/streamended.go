package sim

// StreamEnded goes to the member that answered, and the servers inside
// it, as Cancel does (cancel.go).
func (s *poolState) StreamEnded(resp Response, events int) {
	k, t := poolMemberOf(resp.Ticket, len(s.members))
	if k < 0 {
		return
	}
	resp.Ticket = t
	answering(s.members[k].server, resp, func(x Server) {
		if e, ok := x.(StreamEnder); ok {
			e.StreamEnded(resp, events)
		}
	})
}

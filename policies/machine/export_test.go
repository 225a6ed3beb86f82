package machine

// Views of internal state for the external tests (stress_test.go), which
// drive the coordinators through policies.Do.

// Pending returns the waiters the limiter still tracks.
func (l *Limiter) Pending() int { return l.pending() }

// Probes returns the breaker's state and its admitted half-open probes.
func (b *Breaker) Probes() (BreakerState, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state, b.probes
}

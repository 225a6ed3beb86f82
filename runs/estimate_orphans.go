package runs

import (
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// orphanBytes bounds what the orphans of a run of p allocate (layers that
// go on after their caller gave up, sim.Layer.NoDeadlinePropagation) for
// clients operations: their slots start as many as the operations and
// double as they fill (sim's newSlot), up to room for the most orphans
// every operation can leave at once.
func orphanBytes(s *scenarios.Scenario, p *sim.Policy, clients float64) float64 {
	own := *p
	own.Layers = nil // the attempts of the policy's own level
	most := p.OrphansPerOperation(attemptBound(s.Server, &own))
	if most == 0 {
		return 0
	}
	slots := 0.0 // allocated by the doublings
	for c := 2 * clients; ; c *= 2 {
		slots += c
		if c >= clients*(1+most) || c > 1e12 {
			break
		}
	}
	return slots * float64(sim.OrphanSlotBytes(len(p.Layers)))
}

package runs

import (
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// orphanBytes bounds what the orphans of a run of p allocate (layers that
// go on after their caller gave up, sim.Layer.NoDeadlinePropagation) for
// clients operations: a call at each layer for the most orphans every
// operation can leave at once.
func orphanBytes(s *scenarios.Scenario, p *sim.Policy, clients float64) float64 {
	own := *p
	own.Layers = nil // the attempts of the policy's own level
	most := p.OrphansPerOperation(attemptBound(s.Server, &own))
	return clients * most * float64(sim.LayerBytes(len(p.Layers)))
}

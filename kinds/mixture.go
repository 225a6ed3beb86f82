package kinds

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The mixture distribution (sim.Mixture): one of several distributions,
// chosen at random per draw.
func registerMixture() {
	registerDistribution("mixture", decodeMixture,
		func(m *sim.Mixture) string {
			var parts []string
			for _, p := range m.Parts {
				parts = append(parts, fmt.Sprintf("%g%% %s", p.P*100, describeDistribution(p.Draw)))
			}
			return "mixture of " + strings.Join(parts, "; ")
		},
		func(m *sim.Mixture) time.Duration {
			least := time.Duration(-1)
			for _, p := range m.Parts {
				if d := minDistribution(p.Draw); p.P > 0 && (least < 0 || d < least) {
					least = d
				}
			}
			return max(least, 0)
		})
}

// decodeMixture reads {mixture: [{p: 0.99, draw: {exponential: 1ms}}, ...]}:
// each part's probability and distribution (any, a duration included).
func decodeMixture(dm *schema.Mapping) (*sim.Mixture, bool) {
	d := dm.Decoder()
	before := d.Problems()
	items := dm.Sequence("mixture")
	if d.Problems() > before {
		return nil, false
	}
	if len(items) == 0 || len(items) > sim.MaxMixtureParts {
		dm.Errorf("mixture", "want 1 to %d parts, such as [{p: 0.99, draw: {exponential: 1ms}}, {p: 0.01, draw: {exponential: 100ms}}]", sim.MaxMixtureParts)
		return nil, false
	}
	m := &sim.Mixture{}
	sum := 0.0
	for i, item := range items {
		pm := d.Mapping(item, fmt.Sprintf("%s[%d]", dm.Field("mixture"), i))
		for _, f := range []string{"p", "draw"} {
			if !pm.Has(f) && item != nil {
				pm.Errorf(f, "missing: a part is {p: PROBABILITY, draw: DISTRIBUTION}")
			}
		}
		part := sim.MixturePart{P: pm.Number("p", 0, 0, 1), Draw: distribution(pm, "draw", sim.Fixed(0))}
		pm.Finish("p", "draw")
		sum += part.P
		m.Parts = append(m.Parts, part)
	}
	if d.Problems() == before && math.Abs(sum-1) > 1e-9 {
		dm.Errorf("mixture", "the probabilities add up to %v, not 1", sum)
	}
	return m, d.Problems() == before
}

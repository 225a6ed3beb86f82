package kinds

import (
	"fmt"
	"slices"
	"strings"

	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// Retry layers inside a policy (sim.Policy.Layers): an SDK's loop inside
// the application's. Registered with the coordinators, as the fallback is,
// because it is a policy field: it holds no shared state.
func registerLayers() {
	registerCoordinator(&coordinatorKind{
		Kind: registerKind(&Kind{Category: Coordinators, Name: "layers", Fields: []string{"layers"},
			About: "layers: [policy, ...] are retry loops inside this one, outermost first; each attempt runs the next loop whole"}),
		decode: decodeLayers,
		describe: func(p *sim.Policy) string {
			if len(p.Layers) == 0 {
				return ""
			}
			var parts []string
			for _, l := range p.Layers {
				s := fmt.Sprintf("%s (%d attempts, %s", l.Name, l.Rules.MaxAttempts, DescribeBackoff(l.Rules.Backoff))
				if t := l.Rules.AttemptTimeout; t > 0 {
					s += fmt.Sprintf(", attempt timeout %v", t)
				}
				parts = append(parts, s+")")
			}
			return "retry layers inside: " + strings.Join(parts, " inside ")
		},
		clone: func(p *sim.Policy) { p.Layers = slices.Clone(p.Layers) },
	})
}

// decodeLayers reads a policy's layers field: a list of policies, each
// with its name, type and rules as any policy has, but no deadline,
// coordinators, fallback or layers of its own.
func decodeLayers(d *schema.Decoder, m *schema.Mapping, p *sim.Policy, _ bool) {
	if !m.Has("layers") {
		return
	}
	items := m.Sequence("layers")
	switch {
	case len(items) == 0:
		m.Errorf("layers", "the list is empty")
		return
	case len(items) > sim.MaxLayers:
		m.Errorf("layers", "%d layers; at most %d", len(items), sim.MaxLayers)
		return
	}
	for i, item := range items {
		path := fmt.Sprintf("%s[%d]", m.Field("layers"), i)
		before := d.Problems()
		l := DecodePolicy(d, item, path, Limits{}, nil)
		if d.Problems() > before {
			continue
		}
		lm := d.Mapping(item, path) // to name a field in an error
		switch {
		case l.Name == "outer":
			lm.Errorf("name", `"outer" names the policy's own layer in the counters; choose another name`)
		case slices.ContainsFunc(p.Layers, func(o sim.Layer) bool { return o.Name == l.Name }):
			lm.Errorf("name", "two layers are called %q", l.Name)
		case l.Rules.Deadline != 0:
			lm.Errorf("deadline", "an inner layer has no deadline of its own; bound it with the attempt_timeout of the layer around it")
		case l.Rules.MaxAttempts == 0:
			lm.Errorf("max_attempts", "missing: an inner layer needs max_attempts")
		case len(l.Coordinators) > 0 || l.Fallback != nil:
			lm.Errorf("type", "an inner layer has no coordinators or fallback (yet): %s", DescribeCoordination(&l))
		case len(l.Layers) > 0:
			lm.Errorf("layers", "list every layer in the outermost policy's layers, outermost first")
		}
		p.Layers = append(p.Layers, sim.Layer{Name: l.Name, Rules: l.Rules})
	}
}

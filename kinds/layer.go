package kinds

import (
	"fmt"
	"slices"
	"strings"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
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
				if on := l.Rules.RetryOn; !on.IsZero() {
					s += ", retries only " + on.String()
				}
				if c := DescribeCoordination(&sim.Policy{Coordinators: l.Coordinators}); c != "" {
					s += ", " + c
				}
				if l.NoDeadlinePropagation {
					s += ", no deadline propagation"
				}
				parts = append(parts, s+")")
			}
			return "retry layers inside: " + strings.Join(parts, " inside ")
		},
		clone: func(p *sim.Policy) {
			p.Layers = slices.Clone(p.Layers)
			for i := range p.Layers {
				p.Layers[i].Coordinators = slices.Clone(p.Layers[i].Coordinators)
			}
		},
	})
	layered := func(p *sim.Policy) bool { return len(p.Layers) > 0 }
	// The requests sent by layers' work whose caller gave up, and for
	// each class how many levels (the policy's own included) retried a
	// failure of it. Each layer's own counts are the run's counters
	// layers.NAME.attempts_in, .attempts, .after_giveup and
	// .retries_CLASS (sim.Result.Counters).
	metrics.RegisterShown(&metrics.Metric{Name: "layers.after_giveup", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter, Detail: true, Added: "2026-12",
		Quantity: "requests after the caller gave up"}, metrics.CounterValue("layers.after_giveup", 1), layered)
	for _, class := range sim.RetryClassNames() {
		suffix := ".retries_" + class
		metrics.RegisterShown(&metrics.Metric{Name: "layers.retrying_" + class, ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter, Detail: true, Added: "2026-12",
			Quantity: "layers retrying " + class}, func(r *sim.Result) (float64, bool) {
			n := 0
			for _, c := range r.Counters {
				if c.Value > 0 && strings.HasPrefix(c.Name, "layers.") && strings.HasSuffix(c.Name, suffix) {
					n++
				}
			}
			return float64(n), true
		}, layered)
	}
}

// decodeLayers reads a policy's layers field: a list of policies, each
// with its name, type and rules as any policy has, its coordinators
// (shared by the run's operations at that layer) and propagate_deadline,
// but no deadline, fallback or layers of its own.
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
		propagate := true
		l := DecodePolicy(d, item, path, Limits{}, func(lm *schema.Mapping) []string {
			propagate = lm.Boolean("propagate_deadline", true)
			return []string{"propagate_deadline"}
		})
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
		case l.Fallback != nil && lm.Has("fallback"):
			lm.Errorf("fallback", "an inner layer has no fallback (yet)")
		case l.Fallback != nil:
			lm.Errorf("type", "this type falls back to another model, and an inner layer has no fallback (yet)")
		case lm.Has("max_in_flight"):
			lm.Errorf("max_in_flight", "an inner layer's coordinators must not queue operations; put the in-flight limit on the outermost policy")
		case lm.Has("hedge"):
			lm.Errorf("hedge", "an inner layer cannot hedge")
		case lm.Has("pacer"):
			lm.Errorf("pacer", "only the outermost policy gets the rate-limit headers a pacer reads")
		case lm.Has("reset_gate"):
			lm.Errorf("reset_gate", "only the outermost policy gets the rate-limit headers a reset gate reads")
		case len(l.Layers) > 0:
			lm.Errorf("layers", "list every layer in the outermost policy's layers, outermost first")
		}
		layer := sim.Layer{Name: l.Name, Rules: l.Rules, Coordinators: l.Coordinators, NoDeadlinePropagation: !propagate}
		if d.Problems() == before {
			// Whatever else the engine refuses (a preset's control).
			if err := sim.ValidateLayers([]sim.Layer{layer}); err != nil {
				d.Errorf(item, path, "%v", err)
			}
		}
		p.Layers = append(p.Layers, layer)
	}
}

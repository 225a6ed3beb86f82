package kinds

import (
	"fmt"

	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The closed-loop workload (sim.ClosedLoop): workers running operations back to back.
func registerClosedLoop() {
	registerWorkload(&Kind{Name: "closed-loop", Fields: []string{"workers", "per_worker", "think", "spread", "until", "input_tokens", "output_tokens"},
		About: "workers each run operations back to back, a think time apart: load follows the server's speed"},
		workloadFuncs[*sim.ClosedLoop]{
			decode: decodeClosedLoop,
			describe: func(w *sim.ClosedLoop) string {
				s := fmt.Sprintf("%d workers, up to %d operations each, back to back", w.Workers, w.PerWorker)
				if w.Think != nil {
					s += ", think " + describeDistribution(w.Think)
				}
				if w.Until > 0 {
					s += fmt.Sprintf(", none started after %v", w.Until)
				}
				return s
			},
			clone: func(w *sim.ClosedLoop) *sim.ClosedLoop { c := *w; return &c },
			scale: func(w *sim.ClosedLoop, f float64) (*sim.ClosedLoop, error) {
				var err error
				w.Workers, err = scaleCount(w.Workers, f, "workers")
				return w, err
			},
		},
		workloadParam[*sim.ClosedLoop]{paramClients, func(w *sim.ClosedLoop, v int64) (*sim.ClosedLoop, error) {
			w.Workers = int(v)
			return w, nil
		}})
}

// decodeClosedLoop reads a closed-loop workload: workers running operations
// back to back.
func decodeClosedLoop(d *schema.Decoder, m *schema.Mapping, path string) *sim.ClosedLoop {
	for _, f := range []string{"workers", "per_worker"} {
		if !m.Has(f) && m.Node() != nil {
			m.Errorf(f, "missing: %s", map[string]string{"workers": "how many workers run operations", "per_worker": "the most operations each worker runs"}[f])
		}
	}
	return &sim.ClosedLoop{
		Workers:      int(m.Integer("workers", 1, 1, MaxClients)),
		PerWorker:    int(m.Integer("per_worker", 1, 1, MaxClients)),
		Think:        distribution(m, "think", nil),
		Spread:       m.Duration("spread", 0),
		Until:        m.Duration("until", 0),
		InputTokens:  int(m.Integer("input_tokens", 0, 0, 1<<31-1)),
		OutputTokens: int(m.Integer("output_tokens", 0, 0, 1<<31-1)),
	}
}

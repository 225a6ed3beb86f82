package kinds

import (
	"fmt"

	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The burst workload (sim.Burst), the default: clients that start one operation each.
func registerBurst() {
	registerWorkload(&Kind{Name: "burst", Fields: []string{"count", "spread"},
		About: "count clients, one operation each, starting at once or uniformly over spread"},
		workloadFuncs[sim.Burst]{
			decode: func(d *schema.Decoder, m *schema.Mapping, path string) sim.Burst {
				if m.Node() != nil && !m.Has("count") {
					m.Errorf("count", "missing: how many clients start an operation")
				}
				return sim.Burst{Clients: int(m.Integer("count", 0, 1, MaxClients)), Spread: m.Duration("spread", 0)}
			},
			describe: func(w sim.Burst) string {
				if w.Spread > 0 {
					return fmt.Sprintf("%d clients, one operation each, starting uniformly over %v", w.Clients, w.Spread)
				}
				return fmt.Sprintf("%d clients, one operation each, starting at t = 0", w.Clients)
			},
			clone: func(w sim.Burst) sim.Burst { return w },
			scale: func(w sim.Burst, f float64) (sim.Burst, error) {
				var err error
				w.Clients, err = scaleCount(w.Clients, f, "clients")
				return w, err
			},
		},
		workloadParam[sim.Burst]{paramClients, func(w sim.Burst, v int64) (sim.Burst, error) {
			w.Clients = int(v)
			return w, nil
		}})
}

// AllAtOnce returns the workload of clients clients that each start one
// operation at t = 0: a burst without spread.
func AllAtOnce(clients int) sim.Workload { return sim.Burst{Clients: clients} }

// ClientsAllAtOnce returns the clients of a workload whose operations are
// one per client, all starting at t = 0 (a burst without spread); false
// for any other workload.
func ClientsAllAtOnce(w sim.Workload) (clients int, ok bool) {
	b, ok := w.(sim.Burst)
	if !ok || b.Spread != 0 {
		return 0, false
	}
	return b.Clients, true
}

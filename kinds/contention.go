package kinds

import (
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// The contention server (sim.Contention): one row under optimistic concurrency.
func registerContention() {
	// The reads and the writes that reached the server (an attempt is a
	// read, then a write unless its client stopped waiting before the
	// read's answer), and the writes that failed because another write
	// committed after their read.
	reads := metrics.RegisterCount(&metrics.Metric{Name: "server.reads", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	writes := metrics.RegisterCount(&metrics.Metric{Name: "server.writes", ShedReason: metrics.SpentWork, Quantity: "writes sent", Unit: metrics.Count, Better: stats.LowerIsBetter, Headline: true})
	conflicts := metrics.RegisterCount(&metrics.Metric{Name: "server.conflicts", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	registerServer(&Kind{Name: "contention", Fields: []string{"network"},
		About: "one row under optimistic concurrency: read, then write; a write fails (409) if another committed since the read"},
		serverFuncs[*sim.Contention]{
			decode: func(d *schema.Decoder, m *schema.Mapping, path string) *sim.Contention {
				return &sim.Contention{Network: distribution(m, "network", sim.FoldedNormal{Mean: DefaultNetwork, StdDev: DefaultNetworkStdDev})}
			},
			describe:    describeContention,
			minResponse: func(c *sim.Contention) time.Duration { return 4 * minDistribution(c.Network) },
			metrics: func(*sim.Contention) []string {
				return []string{reads.Name, writes.Name, conflicts.Name}
			},
			clone: func(c *sim.Contention) *sim.Contention { x := *c; return &x },
			// No scale: a client may write once per other client's
			// commit, so the work grows as the square of the clients.
		},
		serverParam[*sim.Contention]{paramNetwork, func(c *sim.Contention, v int64) error {
			if n, ok := c.Network.(sim.FoldedNormal); ok && n.Mean > 0 {
				scale := float64(v) / float64(n.Mean)
				c.Network = sim.FoldedNormal{Mean: time.Duration(v), StdDev: time.Duration(float64(n.StdDev) * scale)}
				return nil
			}
			c.Network = sim.Fixed(time.Duration(v))
			return nil
		}})
}

func describeContention(c *sim.Contention) Table {
	t := Table{
		Caption: "Server: one row under optimistic concurrency (an attempt reads the row's version, then writes with it; " +
			"the write commits only if no write committed since the read, otherwise it fails with " + describeRejection(sim.Conflict) + ")",
		Header:  []string{"message", "one-way network delay"},
		Numeric: []bool{false, false},
	}
	for _, msg := range []string{"read request", "read response", "write request", "write response"} {
		t.Rows = append(t.Rows, []string{msg, describeDistribution(c.Network)})
	}
	return t
}

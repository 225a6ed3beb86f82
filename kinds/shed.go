package kinds

import (
	"fmt"
	"math"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// defaultReserve is the reserve shedder's share for critical requests:
// Stripe's example.
const defaultReserve = 0.2

// The reserve shedder (sim.ReserveShedder): Stripe's fleet-usage load
// shedder in front of an inner server.
func registerReserveShedder() {
	shed := metrics.RegisterCount(&metrics.Metric{Name: "shed.shed", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter,
		Quantity: "non-critical requests shed", Added: "2026-12"})
	var names []string
	for _, n := range []struct{ name, what string }{
		{"shed.critical_ok", "critical requests the inner server answered with a success"},
		{"shed.critical_failed", "critical requests the inner server failed"},
		{"shed.noncritical_ok", "non-critical requests the inner server answered with a success"},
		{"shed.noncritical_failed", "non-critical requests the inner server failed"},
	} {
		better := stats.HigherIsBetter
		if n.name == "shed.critical_failed" || n.name == "shed.noncritical_failed" {
			better = stats.LowerIsBetter
		}
		names = append(names, metrics.RegisterCount(&metrics.Metric{Name: n.name, Unit: metrics.Count, Better: better, Quantity: n.what, Added: "2026-12"}).Name)
	}
	registerServer(&Kind{Name: "reserve-shedder", Fields: []string{"reserve", "capacity", "window", "critical", "reject", "inner"},
		About: "Stripe's fleet-usage load shedder: non-critical requests may use 1 − reserve of the capacity (the rest shed, 503); critical ones are never shed"},
		serverFuncs[*sim.ReserveShedder]{
			decode:   decodeReserveShedder,
			describe: describeReserveShedder,
			minResponse: func(*sim.ReserveShedder) time.Duration {
				return 0 // shed at once
			},
			instant: func(*sim.ReserveShedder) bool { return true },
			metrics: func(*sim.ReserveShedder) []string { return append([]string{shed.Name}, names...) },
			inner:   func(r *sim.ReserveShedder) []sim.ServerModel { return []sim.ServerModel{r.Inner} },
			clone: func(r *sim.ReserveShedder) *sim.ReserveShedder {
				c := *r
				c.Inner = cloneServer(r.Inner)
				return &c
			},
			// The capacity scales with the inner server's, as long as the
			// allocation, a floor, stays in proportion.
			scale: func(r *sim.ReserveShedder, f float64) (*sim.ReserveShedder, error) {
				want := float64(r.Allocation()) * f
				var err error
				if r.Capacity, err = scaleCount(r.Capacity, f, "capacity"); err != nil {
					return r, err
				}
				if got := float64(r.Allocation()); math.Abs(got-want) > 0.1*want {
					return r, fmt.Errorf("the non-critical allocation of %.3g cannot be scaled by %.3g (it rounds to %v)", want/f, f, got)
				}
				r.Inner, err = scaleServer(r.Inner, f)
				return r, err
			},
		})
}

// decodeReserveShedder reads a reserve shedder and the server it guards.
func decodeReserveShedder(d *schema.Decoder, m *schema.Mapping, path string) *sim.ReserveShedder {
	r := &sim.ReserveShedder{
		Reserve:  m.Number("reserve", defaultReserve, 0, 0.999),
		Capacity: int(m.Integer("capacity", 0, 1, sim.MaxConcurrency)),
		Window:   m.Duration("window", 0),
		Reject:   rejection(m, "unavailable"),
	}
	if !m.Has("capacity") && m.Node() != nil {
		m.Errorf("capacity", "missing: what the inner server holds, such as a queue's workers (requests in flight) or, with window, capacity windows' admit")
	}
	if m.Has("critical") {
		p, err := sim.ParsePriority(m.Str("critical", ""))
		switch {
		case err != nil:
			m.Errorf("critical", "%v", err)
		case p == sim.PriorityDefault:
			m.Errorf("critical", "the default priority cannot be critical: the reserve is for requests above it")
		}
		r.Critical = p
	}
	r.Inner = decodeInner(d, m, "the server the shedder guards, such as {type: queue, concurrency: 10, service: {exponential: 100ms}}")
	return r
}

func describeReserveShedder(r *sim.ReserveShedder) Table {
	inner, about := describeInner(r.Inner)
	usage := "in flight"
	if r.Window > 0 {
		usage = "per " + r.Window.String()
	}
	reject := r.Reject
	if reject == (sim.Rejection{}) {
		reject = rejections["unavailable"]
	}
	critical := r.Critical
	if critical == 0 {
		critical = sim.PriorityCritical
	}
	inner.Caption = fmt.Sprintf("Server: a reserve shedder (Stripe's fleet-usage shedder): of a capacity of %d requests %s, %.0f%% is reserved for priority %v and above; other requests beyond %d %s are shed with %s; in front of %s",
		r.Capacity, usage, 100*r.Reserve, critical, r.Allocation(), usage, describeRejection(reject), about)
	return inner
}

package kinds

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// The crash server (sim.Crash): another server that is down in windows.
func registerCrash() {
	// Requests the crash dropped (in service or queued when it came) and
	// those refused while the server was down.
	reset := metrics.RegisterCount(&metrics.Metric{Name: "crash.reset", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	refused := metrics.RegisterCount(&metrics.Metric{Name: "crash.refused", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	registerServer(&Kind{Name: "crash", Fields: []string{"down", "inner"},
		About: "an inner server that crashes: what it holds fails at once, it refuses requests while down, and comes back empty"},
		serverFuncs[*sim.Crash]{
			decode:      decodeCrash,
			describe:    describeCrash,
			minResponse: func(*sim.Crash) time.Duration { return 0 }, // refused at once
			instant:     func(*sim.Crash) bool { return true },       // while down
			metrics:     func(*sim.Crash) []string { return []string{reset.Name, refused.Name} },
			inner:       func(c *sim.Crash) []sim.ServerModel { return []sim.ServerModel{c.Inner} },
			clone: func(c *sim.Crash) *sim.Crash {
				x := *c
				x.Down = slices.Clone(c.Down)
				x.Inner = cloneServer(c.Inner)
				return &x
			},
			scale: func(c *sim.Crash, f float64) (*sim.Crash, error) {
				var err error
				c.Inner, err = scaleServer(c.Inner, f)
				return c, err
			},
		},
		serverParam[*sim.Crash]{paramDownFor, func(c *sim.Crash, v int64) error {
			for i := range c.Down {
				c.Down[i].Until = c.Down[i].From + time.Duration(v)
			}
			return c.Validate()
		}})
}

// decodeCrash reads the down windows and the inner server.
func decodeCrash(d *schema.Decoder, m *schema.Mapping, path string) *sim.Crash {
	c := &sim.Crash{}
	items := m.Sequence("down")
	switch {
	case !m.Has("down") && m.Node() != nil:
		m.Errorf("down", "missing: when the server is down, such as [{from: 5s, until: 10s}]")
	case m.Has("down") && len(items) == 0:
		m.Errorf("down", "the list is empty")
	}
	for i, item := range items {
		wm := d.Mapping(item, fmt.Sprintf("%s.down[%d]", path, i))
		for _, f := range []string{"from", "until"} {
			if !wm.Has(f) && item != nil {
				wm.Errorf(f, "missing: a down window is {from: START, until: END}")
			}
		}
		w := sim.DownWindow{From: wm.Duration("from", 0), Until: wm.Duration("until", 0)}
		switch {
		case wm.Has("until") && w.Until <= w.From:
			wm.Errorf("until", "must be after from (%v)", w.From)
		case i > 0 && w.From < c.Down[i-1].Until:
			wm.Errorf("from", "the window starts before the one before it ends (%v): list windows in time order, apart", c.Down[i-1].Until)
		}
		wm.Finish("from", "until")
		c.Down = append(c.Down, w)
	}
	c.Inner = decodeInner(d, m, "the server that crashes, such as {type: queue, concurrency: 5, service: {exponential: 100ms}}")
	return c
}

func describeCrash(c *sim.Crash) Table {
	var spans []string
	for _, w := range c.Down {
		spans = append(spans, fmt.Sprintf("%v–%v", w.From, w.Until))
	}
	inner, about := describeInner(c.Inner)
	inner.Caption = fmt.Sprintf("Server: down %s (what it holds fails at once as a connection reset, new requests are refused, it comes back empty); otherwise %s",
		strings.Join(spans, ", "), about)
	return inner
}

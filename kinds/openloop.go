package kinds

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The open-loop workload (sim.OpenLoop): arrivals at a rate, whatever the server does.
func registerOpenLoop() {
	registerWorkload(&Kind{Name: "open-loop", Fields: []string{"rate", "rates", "until", "regular", "processes", "input_tokens", "output_tokens"},
		About: "requests arrive at a rate (Poisson) whatever the server does, until a time; each is one operation"},
		workloadFuncs[*sim.OpenLoop]{
			decode:   decodeOpenLoop,
			describe: describeOpenLoop,
			clone: func(w *sim.OpenLoop) *sim.OpenLoop {
				c := *w
				c.Rates = slices.Clone(w.Rates)
				return &c
			},
			scale: func(w *sim.OpenLoop, f float64) (*sim.OpenLoop, error) {
				for i := range w.Rates {
					w.Rates[i].PerSecond *= f
				}
				var err error
				if w.Processes > 1 { // each keeps its share of the arrivals
					w.Processes, err = scaleCount(w.Processes, f, "processes")
				}
				return w, err
			},
		},
		workloadParam[*sim.OpenLoop]{paramRate, func(w *sim.OpenLoop, v int64) (*sim.OpenLoop, error) {
			if len(w.Rates) != 1 {
				return w, errors.New("the open loop's rate changes over time (rates); only a constant rate can be set")
			}
			w.Rates = sim.ConstantRate(float64(v))
			return w, nil
		}})
}

// decodeOpenLoop reads an open-loop workload: a constant rate or steps of
// rates, and when arrivals stop.
func decodeOpenLoop(d *schema.Decoder, m *schema.Mapping, path string) *sim.OpenLoop {
	w := &sim.OpenLoop{}
	switch oneOf(m, "rate", "rates") {
	case "rate":
		w.Rates = sim.ConstantRate(m.Number("rate", 0, 0, MaxClients))
	case "rates":
		items := m.Sequence("rates")
		if len(items) == 0 {
			m.Errorf("rates", "the list is empty")
		}
		for i, item := range items {
			rm := d.Mapping(item, fmt.Sprintf("%s.rates[%d]", path, i))
			st := sim.RateStep{At: rm.Duration("at", 0), PerSecond: rm.Number("per_second", 0, 0, MaxClients), Ramp: rm.Boolean("ramp", false)}
			switch {
			case !rm.Has("per_second") && item != nil:
				rm.Errorf("per_second", "missing: arrivals per second from at on")
			case i == 0 && st.At != 0:
				rm.Errorf("at", "the first rate starts at 0, got %v", st.At)
			case i > 0 && st.At <= w.Rates[i-1].At:
				rm.Errorf("at", "must be after the previous rate's (%v), got %v", w.Rates[i-1].At, st.At)
			case st.Ramp && i == len(items)-1:
				rm.Errorf("ramp", "the last rate holds for ever; it cannot ramp")
			}
			rm.Finish()
			w.Rates = append(w.Rates, st)
		}
	default:
		if m.Node() != nil {
			m.Errorf("rate", "missing: arrivals per second (or rates, steps of them)")
		}
	}
	if !m.Has("until") && m.Node() != nil {
		m.Errorf("until", "missing: when arrivals stop")
	}
	w.Until = m.Duration("until", time.Second)
	if m.Has("until") && w.Until == 0 {
		m.Errorf("until", "must be > 0")
	}
	w.Regular = m.Boolean("regular", false)
	w.Processes = int(m.Integer("processes", 0, 1, sim.MaxProcesses))
	w.InputTokens = int(m.Integer("input_tokens", 0, 0, 1<<31-1))
	w.OutputTokens = int(m.Integer("output_tokens", 0, 0, 1<<31-1))
	return w
}

func describeOpenLoop(w *sim.OpenLoop) string {
	kind := "Poisson"
	if w.Regular {
		kind = "evenly spaced"
	}
	rate := fmt.Sprintf("%s per second", strconv.FormatFloat(w.Rates[0].PerSecond, 'g', -1, 64))
	if len(w.Rates) > 1 {
		rate = fmt.Sprintf("a rate that changes %d times", len(w.Rates)-1)
	}
	out := fmt.Sprintf("%s arrivals at %s until %v (about %d operations), one operation each", kind, rate, w.Until, w.Operations())
	if w.Processes > 1 {
		out += fmt.Sprintf(", dealt in turn to %d client processes with a retry layer each", w.Processes)
	}
	return out
}

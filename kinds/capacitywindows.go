package kinds

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The capacity-windows server (sim.CapacityWindows), the default: phases of capacity, every response after a response time.
func registerCapacityWindows() {
	registerServer(&Kind{Name: "capacity-windows", Fields: []string{"response_time", "phases", "fallback_phases", "trace", "window", "reject", "retry_after"},
		About: "phases of capacity: admit N per window, reject the rest; every response after response_time"},
		serverFuncs[*sim.CapacityWindows]{
			decode:      decodeCapacityWindows,
			describe:    describeCapacityWindows,
			minResponse: func(s *sim.CapacityWindows) time.Duration { return minDistribution(s.ResponseTime) },
			instant: func(s *sim.CapacityWindows) bool {
				return s.ResponseTime == sim.Fixed(0) && noServerWait(s.Phases) && noServerWait(s.FallbackPhases)
			},
			clone: func(s *sim.CapacityWindows) *sim.CapacityWindows {
				c := *s
				c.Phases = slices.Clone(s.Phases)
				c.FallbackPhases = slices.Clone(s.FallbackPhases)
				return &c
			},
			scale: func(s *sim.CapacityWindows, f float64) (*sim.CapacityWindows, error) {
				for _, phases := range [][]sim.Phase{s.Phases, s.FallbackPhases} {
					for i := range phases {
						if err := scalePhase(&phases[i], i == len(phases)-1, f); err != nil {
							return s, err
						}
					}
				}
				return s, nil
			},
		},
		serverParam[*sim.CapacityWindows]{paramCapacity, func(s *sim.CapacityWindows, v int64) error {
			last := &s.Phases[len(s.Phases)-1]
			last.Admit = int(v)
			if last.Window <= 0 {
				last.Window = time.Second
			}
			return nil
		}},
		serverParam[*sim.CapacityWindows]{paramOutage, func(s *sim.CapacityWindows, v int64) error {
			if len(s.Phases) < 2 {
				return errors.New("the server has one phase; an outage needs a first phase followed by another")
			}
			if v == 0 {
				s.Phases = s.Phases[1:]
				return nil
			}
			s.Phases[0].Duration = time.Duration(v)
			return nil
		}},
		serverParam[*sim.CapacityWindows]{paramResponseTime, func(s *sim.CapacityWindows, v int64) error {
			s.ResponseTime = sim.Fixed(time.Duration(v))
			return nil
		}})
}

// decodeCapacityWindows reads the fields of a capacity-windows server: phases,
// or a trace with the window and rejection of every phase.
func decodeCapacityWindows(d *schema.Decoder, m *schema.Mapping, path string) *sim.CapacityWindows {
	s := &sim.CapacityWindows{ResponseTime: distribution(m, "response_time", sim.Fixed(DefaultResponseTime))}
	if m.Has("trace") {
		if m.Has("phases") {
			m.Errorf("phases", "set phases or trace, not both")
		}
		window := m.Duration("window", time.Second)
		if window == 0 {
			m.Errorf("window", "must be > 0")
			window = time.Second
		}
		rej := rejection(m, "overloaded")
		s.Phases = traceRows(d, m, func(r io.Reader) ([]sim.Phase, error) { return sim.WindowPhasesFromCSV(r, window, rej) })
		return s
	}
	for _, f := range []string{"window", "reject", "retry_after"} {
		if m.Has(f) {
			m.Errorf(f, "is a field of each phase (here only with trace)")
		}
	}
	items := m.Sequence("phases")
	if len(items) == 0 && m.Node() != nil {
		m.Errorf("phases", "missing: the server needs at least one phase (or a trace)")
	}
	s.Phases = decodeWindowPhases(d, items, path+".phases")
	if m.Has("fallback_phases") {
		fb := m.Sequence("fallback_phases")
		if len(fb) == 0 {
			m.Errorf("fallback_phases", "must list at least one phase")
		}
		s.FallbackPhases = decodeWindowPhases(d, fb, path+".fallback_phases")
	}
	return s
}

// decodeWindowPhases decodes a list of capacity phases.
func decodeWindowPhases(d *schema.Decoder, items []*yaml.Node, path string) []sim.Phase {
	var phases []sim.Phase
	for i, item := range items {
		field := fmt.Sprintf("%s[%d]", path, i)
		pm := d.Mapping(item, field)
		p := sim.Phase{Duration: pm.Duration("duration", 0)}
		last := i == len(items)-1
		if !last && p.Duration == 0 {
			pm.Errorf("duration", "must be > 0: only the last phase may run on forever")
		}
		errsBefore := d.Problems()
		p.Admit = int(pm.Integer("admit", 0, 0, 1<<31-1))
		p.Window = pm.Duration("window", 0)
		switch {
		case d.Problems() > errsBefore:
			// The admit or the window itself was bad; that error says enough.
		case p.Admit > 0 && p.Window == 0:
			pm.Errorf("window", "must be > 0 when the phase admits requests (admit %d per window)", p.Admit)
		case p.Admit == 0 && pm.Has("window"):
			pm.Errorf("window", "has no effect: this phase admits nothing (set admit > 0)")
		}
		p.Reject = rejection(pm, "overloaded")
		pm.Finish()
		phases = append(phases, p)
	}
	return phases
}

// describeCapacityWindows is the table of a capacity-windows server's
// phases.
func describeCapacityWindows(s *sim.CapacityWindows) Table {
	rt := "a random time"
	if f, ok := s.ResponseTime.(sim.Fixed); ok {
		rt = time.Duration(f).String()
	}
	t := Table{
		Caption: fmt.Sprintf("Server (every response arrives %s after its request)", rt),
		Header:  []string{"phase", "from", "until", "admits", "rejects with"},
		Numeric: []bool{true, true, true, false, false},
	}
	start := time.Duration(0)
	for i, p := range s.Phases {
		admits := "nothing"
		if p.Admit > 0 {
			admits = fmt.Sprintf("%d per %v window", p.Admit, p.Window)
		}
		t.Rows = append(t.Rows, append(phaseRow(i, len(s.Phases), start, p.Duration), admits, describeRejection(p.Reject)))
		start += p.Duration
	}
	return t
}

// noServerWait reports whether no phase's rejection carries a server wait.
func noServerWait(phases []sim.Phase) bool {
	for _, ph := range phases {
		if ph.Reject.RetryAfter > 0 {
			return false
		}
	}
	return true
}

// scalePhase scales a phase's admissions by f, or, when they are too few
// to scale, lengthens its window by 1/f, as long as the window still fits
// in the phase (last: it lasts for ever).
func scalePhase(ph *sim.Phase, last bool, f float64) error {
	n, err := scaleCount(ph.Admit, f, "admissions per window")
	if err == nil {
		ph.Admit = n
		return nil
	}
	window := time.Duration(float64(ph.Window) / f)
	if !last && window > ph.Duration {
		return err
	}
	ph.Window = window
	return nil
}

package metrics

import (
	"strings"
	"sync"

	"github.com/retrysim/retrysim/sim"
)

// Metrics by priority: every metric a run's Result holds (not the
// counters of servers and workloads, which are the run's) exists for the
// operations of each priority as well, named by_priority.LEVEL.NAME
// (by_priority.critical.completed, by_priority.sheddable.latency_ms.p99),
// computed over sim.Result.OfPriority. A scenario reports them for the
// levels its workload gives (sim.PriorityLevels); they are details, in
// the JSON, the CSV, expectations and baselines, and in the tables'
// section by priority.

// PriorityPrefix is the first part of the name of every metric by priority.
const PriorityPrefix = "by_priority"

var (
	byPriorityMu sync.Mutex
	byPriority   = map[string]*Metric{} // one Metric per name, so that pointers compare
)

// ByPriority returns m over the operations of priority p, and false when
// m is not a metric of a Result's own counts (one registered by another
// package, a counter, or already by priority).
func ByPriority(p sim.Priority, m *Metric) (*Metric, bool) {
	if m.counted || m.external || m.level != nil {
		return nil, false
	}
	var present *Metric
	if m.PresentWith != nil {
		present, _ = ByPriority(p, m.PresentWith)
	}
	name := PriorityPrefix + "." + p.String() + "." + m.Name
	byPriorityMu.Lock()
	defer byPriorityMu.Unlock()
	if b, ok := byPriority[name]; ok {
		return b, true
	}
	b := *m
	b.Name, b.Column = name, PriorityPrefix+"."+p.String()+"."+m.Column
	b.Headline, b.Detail, b.shown, b.counted = false, true, nil, true
	b.level, b.base = &p, m
	b.part = strings.TrimPrefix(name, PriorityPrefix+".")
	b.value = func(r *sim.Result) (float64, bool) {
		sub, ok := r.OfPriority(p)
		if !ok {
			sub = &sim.Result{} // no operation of that priority started
		}
		return m.value(sub)
	}
	b.PresentWith = present
	byPriority[name] = &b
	return &b, true
}

// Level returns the priority m is computed over and the metric it is of,
// and false for a metric of the whole run.
func (m *Metric) Level() (sim.Priority, *Metric, bool) {
	if m.level == nil {
		return 0, nil, false
	}
	return *m.level, m.base, true
}

// ForLevels returns the metrics by priority of set, level by level in the
// order given, each level's in set's order: those of the metrics of set
// that a Result counts (ByPriority).
func ForLevels(set []*Metric, levels []sim.Priority) []*Metric {
	var out []*Metric
	for _, p := range levels {
		for _, m := range set {
			if b, ok := ByPriority(p, m); ok {
				out = append(out, b)
			}
		}
	}
	return out
}

// lookupByPriority finds by_priority.LEVEL.NAME for a registered NAME.
func lookupByPriority(name string) (*Metric, bool) {
	rest, ok := strings.CutPrefix(name, PriorityPrefix+".")
	if !ok {
		return nil, false
	}
	level, base, ok := strings.Cut(rest, ".")
	if !ok {
		return nil, false
	}
	p, err := sim.ParsePriority(level)
	if err != nil || p.String() != level {
		return nil, false // one name per metric: 5, not +5 or 05
	}
	for _, m := range registry {
		if m.Name == base {
			return ByPriority(p, m)
		}
	}
	return nil, false
}

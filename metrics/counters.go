package metrics

import (
	"regexp"
	"sync"

	"github.com/retrysim/retrysim/sim"
)

// A part's counter as a metric: the counters a pool reports for each member
// (pool.MEMBER.requests, ...) and those retry layers report for each layer
// (layers.LAYER.after_giveup, ...) have names that depend on the scenario,
// so they are no registered metrics; an expectation may still name one, and
// then the scenario reports it (scenarios.Scenario.Metrics) like any other
// metric, in the JSON and CSV only (a detail, not a headline).

// partCounter matches the name of a part's counter: its kind, the part's
// name (which may hold dots) and what it counts.
var partCounter = regexp.MustCompile(`^(pool|layers)\.(.+)\.([a-z][a-z_]*)$`)

var (
	counterMu sync.Mutex
	counters  = map[string]*Metric{} // one Metric per name, so that pointers compare
)

// Counter returns the metric of the part's counter called name, such as
// pool.east.failed, and false when name is no such counter's (or is a
// registered metric's). Its value is the run's counter; a run that reports
// no such counter (a name with a typo, a part the scenario lacks) has none.
func Counter(name string) (*Metric, bool) {
	if !partCounter.MatchString(name) {
		return nil, false
	}
	for _, m := range registry {
		if m.Name == name {
			return nil, false
		}
	}
	counterMu.Lock()
	defer counterMu.Unlock()
	if m, ok := counters[name]; ok {
		return m, true
	}
	m := &Metric{Name: name, Column: name, Unit: Count, Detail: true, JSONDecimals: -1, counted: true, ShedReason: SpentWork,
		Missing: "the runs report no counter " + name + " (a pool member or retry layer of that name?)",
		value: func(r *sim.Result) (float64, bool) {
			v, ok := r.Counters.Get(name)
			return float64(v), ok
		}}
	counters[name] = m
	return m, true
}

// IsCounter reports whether m is a part's counter (Counter).
func IsCounter(m *Metric) bool {
	c, ok := Counter(m.Name)
	return ok && c == m
}

// CounterPart splits the name of a part's counter into its kind ("pool"
// or "layers"), the part's name and what it counts.
func CounterPart(name string) (kind, part, what string, ok bool) {
	m := partCounter.FindStringSubmatch(name)
	if m == nil {
		return "", "", "", false
	}
	return m[1], m[2], m[3], true
}

// WithoutCounters is set without the parts' counters: what a one-seed
// report's rows show, whose breakdown (pool members, retry layers) carries
// every part's counters already.
func WithoutCounters(set []*Metric) []*Metric {
	out := make([]*Metric, 0, len(set))
	for _, m := range set {
		if !IsCounter(m) {
			out = append(out, m)
		}
	}
	return out
}

package kinds

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// lifoExtraEvents is what an adaptive-LIFO queue adds to an attempt's
// events in the work estimate's bound.
const lifoExtraEvents = 7

// The queue server (sim.Queue): workers serving requests first come, first served.
func registerQueue() {
	// Requests the queue skipped because their client had gone, and those
	// it rejected because it was full.
	dropped := metrics.RegisterCount(&metrics.Metric{Name: "server.dropped", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	full := metrics.RegisterCount(&metrics.Metric{Name: "server.queue_full", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	// Requests that controlled delay failed.
	codelDropped := metrics.RegisterCount(&metrics.Metric{Name: "server.codel_dropped", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	// Requests an adaptive-LIFO queue took newest first.
	lifo := metrics.RegisterCount(&metrics.Metric{Name: "server.lifo", ShedReason: metrics.SpentWork, Unit: metrics.Count})
	// Waiting requests a priority-ordered queue evicted for higher ones.
	evicted := metrics.RegisterCount(&metrics.Metric{Name: "server.priority_evicted", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter, Added: "2026-12"})
	registerServer(&Kind{Name: "queue", Fields: []string{"concurrency", "phases", "trace", "service", "queue_limit", "reject", "retry_after", "reject_after", "drop_abandoned", "codel", "adaptive_lifo", "priority"},
		About: "workers serving requests first come, first served: latency grows with load"},
		serverFuncs[*sim.Queue]{
			decode:   decodeQueue,
			describe: describeQueue,
			minResponse: func(q *sim.Queue) time.Duration {
				switch {
				case q.DropAbandoned:
					return 0
				case q.QueueLimit > 0:
					return min(q.RejectAfter, minDistribution(q.Service))
				}
				return minDistribution(q.Service)
			},
			extraEvents: func(q *sim.Queue) float64 {
				if q.LIFO.On() || q.Priority.On {
					// A waiting request is decided again at each pick that
					// could take it and woken when later arrivals push its
					// forecast back: about 9 events an attempt
					// (TestEstimateBoundsLIFOPerPolicy), against 3.
					return lifoExtraEvents
				}
				return 0
			},
			metrics: func(q *sim.Queue) []string {
				names := []string{serverWasted.Name, serverWastedMs.Name}
				if q.DropAbandoned {
					names = append(names, dropped.Name)
				}
				if q.QueueLimit > 0 {
					names = append(names, full.Name)
				}
				if q.CoDel.Interval > 0 {
					names = append(names, codelDropped.Name)
				}
				if q.LIFO.On() {
					names = append(names, lifo.Name)
				}
				if q.Priority.On && q.QueueLimit > 0 {
					names = append(names, evicted.Name)
				}
				return names
			},
			clone: func(q *sim.Queue) *sim.Queue {
				c := *q
				c.Phases = slices.Clone(q.Phases)
				return &c
			},
			scale: func(q *sim.Queue, f float64) (*sim.Queue, error) {
				var err error
				if q.Concurrency, err = scaleCount(q.Concurrency, f, "workers"); err != nil {
					return q, err
				}
				for i := range q.Phases {
					if q.Phases[i].Concurrency, err = scaleCount(q.Phases[i].Concurrency, f, "workers"); err != nil {
						return q, err
					}
				}
				q.QueueLimit, err = scaleCount(q.QueueLimit, f, "queue slots")
				return q, err
			},
		},
		serverParam[*sim.Queue]{paramConcurrency, func(q *sim.Queue, v int64) error {
			if len(q.Phases) == 0 {
				q.Concurrency = int(v)
			} else {
				q.Phases[len(q.Phases)-1].Concurrency = int(v)
			}
			return nil
		}},
		serverParam[*sim.Queue]{paramServiceTime, func(q *sim.Queue, v int64) error {
			q.Service = sim.Fixed(time.Duration(v))
			return nil
		}})
}

// decodeQueue reads a queue server: workers (concurrency, phases or trace), the
// service time, and the bounded queue's rejection.
func decodeQueue(d *schema.Decoder, m *schema.Mapping, path string) *sim.Queue {
	q := &sim.Queue{}
	switch oneOf(m, "concurrency", "phases", "trace") {
	case "trace":
		q.Phases = traceRows(d, m, sim.WorkerPhasesFromCSV)
	case "phases":
		items := m.Sequence("phases")
		if len(items) == 0 {
			m.Errorf("phases", "the list is empty")
		}
		for i, item := range items {
			pm := d.Mapping(item, fmt.Sprintf("%s.phases[%d]", path, i))
			last := i == len(items)-1
			p := sim.WorkerPhase{Duration: phaseDuration(pm, last)}
			if !pm.Has("concurrency") && item != nil {
				pm.Errorf("concurrency", "missing: the workers during the phase")
			}
			lo := int64(0)
			if last {
				lo = 1 // requests would wait for ever
			}
			p.Concurrency = int(pm.Integer("concurrency", lo, lo, sim.MaxConcurrency))
			pm.Finish()
			q.Phases = append(q.Phases, p)
		}
	case "concurrency":
		q.Concurrency = int(m.Integer("concurrency", 1, 1, sim.MaxConcurrency))
	default:
		if m.Node() != nil {
			m.Errorf("concurrency", "missing: how many workers serve requests (or phases of workers, or a trace)")
		}
	}
	if !m.Has("service") && m.Node() != nil {
		m.Errorf("service", "missing: a worker's time per request, such as {exponential: 100ms}")
	}
	q.Service = distribution(m, "service", sim.Fixed(DefaultResponseTime))
	q.QueueLimit = int(m.Integer("queue_limit", 0, 0, 1<<31-1))
	q.DropAbandoned = m.Boolean("drop_abandoned", false)
	q.Reject = rejection(m, "overloaded")
	q.RejectAfter = m.Duration("reject_after", 0)
	if m.Has("codel") {
		cm := d.Mapping(m.Get("codel"), m.Field("codel"))
		q.CoDel = sim.CoDel{Target: cm.Duration("target", 5*time.Millisecond), Interval: cm.Duration("interval", 100*time.Millisecond)}
		name := cm.Str("rule", codelRules[0].rule.String())
		if i := slices.IndexFunc(codelRules, func(r codelRule) bool { return r.rule.String() == name }); i >= 0 {
			q.CoDel.Rule = codelRules[i].rule
		} else {
			cm.Errorf("rule", "unknown rule %q%s; choose one of %s", name, didYouMean(name, codelRuleNames()), codelRuleNames())
		}
		switch {
		case q.CoDel.Target <= 0:
			cm.Errorf("target", "must be > 0")
		case q.CoDel.Interval < q.CoDel.Target:
			cm.Errorf("interval", "must be at least the target (%v)", q.CoDel.Target)
		}
		cm.Finish("target", "interval", "rule")
	}
	if m.Has("adaptive_lifo") {
		lm := d.Mapping(m.Get("adaptive_lifo"), m.Field("adaptive_lifo"))
		def := 100 * time.Millisecond
		if q.CoDel.Interval > 0 {
			def = q.CoDel.Interval
		}
		q.LIFO.Interval = lm.Duration("interval", def)
		if q.LIFO.Interval <= 0 {
			lm.Errorf("interval", "must be > 0: how long the queue must stand before the newest requests go first")
		}
		lm.Finish("interval")
	}
	q.Priority.On = m.Boolean("priority", false)
	if q.QueueLimit == 0 {
		for _, f := range []string{"reject_after", "reject", "retry_after"} {
			if m.Has(f) && (f == "reject_after" || !q.DropAbandoned && q.CoDel.Interval == 0) {
				m.Errorf(f, "has no effect: the queue rejects only when it is full (set queue_limit)")
			}
		}
	}
	return q
}

// codelRule is a controlled-delay rule (named by its String) and what it
// does; the default first.
type codelRule struct {
	rule  sim.CoDelRule
	about string
}

var codelRules = []codelRule{
	{sim.CoDelAtDequeue, "Fail at Scale's test when the request reaches the head; the default"},
	{sim.CoDelAtArrival, "the same test when the request arrives"},
	{sim.CoDelControlLaw, "RFC 8289's control law at dequeue"},
}

// codelRuleNames lists the rules for an error message.
func codelRuleNames() string {
	var names []string
	for _, r := range codelRules {
		names = append(names, r.rule.String()+" ("+r.about+")")
	}
	return strings.Join(names, ", ")
}

func describeQueue(q *sim.Queue) Table {
	var notes []string
	notes = append(notes, "service time "+describeDistribution(q.Service))
	reject := q.Reject
	if reject == (sim.Rejection{}) {
		reject = rejections["overloaded"]
	}
	if q.QueueLimit > 0 {
		notes = append(notes, fmt.Sprintf("at most %d waiting, more rejected with %s", q.QueueLimit, describeRejection(reject)))
	} else {
		notes = append(notes, "the queue has no bound")
	}
	if q.DropAbandoned {
		notes = append(notes, "requests whose client has gone are skipped")
	}
	if q.LIFO.On() {
		notes = append(notes, fmt.Sprintf("adaptive LIFO: newest first once the queue has stood for %v", q.LIFO.Interval))
	}
	switch c := q.CoDel; {
	case c.Interval == 0:
	case c.Rule == sim.CoDelAtArrival:
		notes = append(notes, fmt.Sprintf("controlled delay decided at arrival: a request waits at most %v if the queue has stood for %v when it arrives (else %v), then fails with %s", c.Target, c.Interval, c.Interval, describeRejection(reject)))
	case c.Rule == sim.CoDelControlLaw:
		notes = append(notes, fmt.Sprintf("controlled delay by RFC 8289's control law (target %v, interval %v): the request at the head fails with %s once waits have stood above the target for the interval, then more often", c.Target, c.Interval, describeRejection(reject)))
	default:
		notes = append(notes, fmt.Sprintf("controlled delay decided at dequeue: a request that reaches the head after waiting more than %v, the queue having stood for %v (else more than %v), fails then with %s", c.Target, c.Interval, c.Interval, describeRejection(reject)))
	}
	order := "first come, first served"
	if q.LIFO.On() {
		order = "adaptive LIFO"
	}
	if q.Priority.On {
		order = "highest priority first (first come, first served within one), a full queue evicting the lowest first"
	}
	t := Table{
		Caption: "Server: a queue of workers, " + order + " (" + strings.Join(notes, "; ") + ")",
		Header:  []string{"phase", "from", "until", "workers"},
		Numeric: []bool{true, true, true, true},
	}
	if len(q.Phases) == 0 {
		t.Rows = [][]string{{"1", "0s", "forever", strconv.Itoa(q.Concurrency)}}
		return t
	}
	start := time.Duration(0)
	for i, p := range q.Phases {
		t.Rows = append(t.Rows, append(phaseRow(i, len(q.Phases), start, p.Duration), strconv.Itoa(p.Concurrency)))
		start += p.Duration
	}
	return t
}

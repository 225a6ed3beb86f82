package scenarios

import (
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// What a run measured around the scenario's incident (sim.Recovery),
// reported only for scenarios that set one; each has its own column.
var recoveryMetrics = []*metrics.Metric{
	goodputDuring, goodputAfter, recovered,
	// recovery.time_to_recover_ms does not exist for a run that never
	// recovered (as a latency does not when nothing completed), and is
	// short when clients gave up (their load is gone): it ranks only as
	// a latency does (metrics.OverKept).
	metrics.RegisterCounted(&metrics.Metric{Name: "recovery.time_to_recover_ms", Column: "recover_ms", Quantity: "time from the incident's end", Missing: "it never recovered", Unit: metrics.Milliseconds, Better: stats.LowerIsBetter, Headline: true,
		Over: metrics.OverKept, PresentWith: recovered},
		ofRecovery(func(r *sim.Recovery) (float64, bool) {
			return float64(r.TimeToRecover) / float64(time.Millisecond), r.Recovered
		})),
}

// Operations completed per second during the incident and over as long
// right after it. (Variables, declared in registration order, so that
// time_to_recover can name recovered.)
var (
	goodputDuring = metrics.RegisterCounted(&metrics.Metric{Name: "recovery.goodput_during", Column: "goodput_during", Unit: metrics.Ratio, Better: stats.HigherIsBetter, JSONDecimals: 4, ShedReason: metrics.TheWork},
		ofRecovery(func(r *sim.Recovery) (float64, bool) { return r.DuringPerSecond, true }))
	goodputAfter = metrics.RegisterCounted(&metrics.Metric{Name: "recovery.goodput_after", Column: "goodput_after", Quantity: "operations completed per second after the incident", Unit: metrics.Ratio, Better: stats.HigherIsBetter, Headline: true, JSONDecimals: 4, ShedReason: metrics.TheWork},
		ofRecovery(func(r *sim.Recovery) (float64, bool) { return r.AfterPerSecond, true }))
)

// recovered is recovery.recovered: 1 if goodput came back before the run
// ended, else 0 (its mean over seeds is the share that did).
var recovered = metrics.RegisterCounted(&metrics.Metric{Name: "recovery.recovered", Column: "recovered", Quantity: "runs that recovered (1: all)", Unit: metrics.Count, Better: stats.HigherIsBetter, Headline: true, Proportion: true, ShedReason: metrics.TheWork},
	ofRecovery(func(r *sim.Recovery) (float64, bool) {
		if r.Recovered {
			return 1, true
		}
		return 0, true
	}))

// ofRecovery returns a metric of a run's Recovery; it does not exist for a
// run that measured none.
func ofRecovery(f func(r *sim.Recovery) (float64, bool)) func(*sim.Result) (float64, bool) {
	return func(r *sim.Result) (float64, bool) {
		if !r.Recovery.Measured {
			return 0, false
		}
		return f(&r.Recovery)
	}
}

// RecoveryNames returns the names of the recovery metrics, reported for
// scenarios with an incident.
func RecoveryNames() []string {
	names := make([]string, len(recoveryMetrics))
	for i, m := range recoveryMetrics {
		names[i] = m.Name
	}
	return names
}

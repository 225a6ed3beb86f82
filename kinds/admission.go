package kinds

import (
	"fmt"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// Envoy's admission control defaults (admission_control.cc and its
// proto): sr_threshold 95 %, aggression 1, max_rejection_probability
// 80 %, sampling_window 30 s, rps_threshold 0.
const (
	defaultSuccessRateThreshold    = 0.95
	defaultMaxRejectionProbability = 0.8
	defaultSamplingWindow          = 30 * time.Second
)

// The admission-control server (sim.AdmissionControl): Envoy's filter in
// front of an inner server.
func registerAdmissionControl() {
	rejected := metrics.RegisterCount(&metrics.Metric{Name: "admission.rejected", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter,
		Quantity: "requests admission control rejected", Added: "2026-12"})
	admitted := metrics.RegisterCount(&metrics.Metric{Name: "admission.admitted", Unit: metrics.Count, Better: stats.HigherIsBetter,
		Quantity: "requests admission control let through", Added: "2026-12"})
	share := metrics.RegisterCounted(&metrics.Metric{Name: "admission.rejected_share", Over: metrics.OverKept, Unit: metrics.Ratio, Better: stats.LowerIsBetter,
		Proportion: true, JSONDecimals: 4, Quantity: "share of requests admission control rejected", Added: "2026-12"},
		func(r *sim.Result) (float64, bool) {
			rej, ok := r.Counters.Get("admission.rejected")
			adm, _ := r.Counters.Get("admission.admitted")
			if !ok || rej+adm == 0 {
				return 0, false
			}
			return float64(rej) / float64(rej+adm), true
		})
	registerServer(&Kind{Name: "admission-control", Fields: []string{"success_rate_threshold", "aggression", "max_rejection_probability", "sampling_window", "rps_threshold", "inner"},
		About: "Envoy's admission control filter: rejects (503) with a probability that grows as the window's success rate falls below the threshold"},
		serverFuncs[*sim.AdmissionControl]{
			decode:      decodeAdmissionControl,
			describe:    describeAdmissionControl,
			minResponse: func(*sim.AdmissionControl) time.Duration { return 0 }, // rejected at once
			instant:     func(*sim.AdmissionControl) bool { return true },
			metrics: func(*sim.AdmissionControl) []string {
				return []string{rejected.Name, admitted.Name, share.Name}
			},
			inner: func(a *sim.AdmissionControl) []sim.ServerModel { return []sim.ServerModel{a.Inner} },
			clone: func(a *sim.AdmissionControl) *sim.AdmissionControl {
				c := *a
				c.Inner = cloneServer(a.Inner)
				return &c
			},
			// The probability reads shares of the window's counts; only the
			// requests a second of rps_threshold scale with the load.
			scale: func(a *sim.AdmissionControl, f float64) (*sim.AdmissionControl, error) {
				var err error
				if a.RPSThreshold, err = scaleCount(a.RPSThreshold, f, "rps threshold"); err != nil {
					return a, err
				}
				a.Inner, err = scaleServer(a.Inner, f)
				return a, err
			},
		})
}

// decodeAdmissionControl reads Envoy's fields (the success rate and the
// maximum probability as shares, not Envoy's percents) and the inner server.
func decodeAdmissionControl(d *schema.Decoder, m *schema.Mapping, path string) *sim.AdmissionControl {
	a := &sim.AdmissionControl{
		SuccessRateThreshold:    m.Number("success_rate_threshold", defaultSuccessRateThreshold, 0.01, 1),
		Aggression:              m.Number("aggression", 1, 1, 1e6),
		MaxRejectionProbability: m.Number("max_rejection_probability", defaultMaxRejectionProbability, 0, 1),
		SamplingWindow:          m.Duration("sampling_window", defaultSamplingWindow),
		RPSThreshold:            int(m.Integer("rps_threshold", 0, 0, sim.MaxRPSThreshold)),
	}
	if w := a.SamplingWindow; m.Has("sampling_window") && (w < time.Second || w%time.Second != 0) {
		m.Errorf("sampling_window", "must be whole seconds, at least 1s (Envoy counts the window in seconds), got %v", w)
	}
	a.Inner = decodeInner(d, m, "the server behind the filter, such as {type: error-mix, failures: [...]}")
	return a
}

func describeAdmissionControl(a *sim.AdmissionControl) Table {
	inner, about := describeInner(a.Inner)
	rps := ""
	if a.RPSThreshold > 0 {
		rps = fmt.Sprintf(", none below %d requests a second", a.RPSThreshold)
	}
	inner.Caption = fmt.Sprintf("Server: Envoy's admission control (503 with probability min(%g, max(0, (n − s/%g)/(n + 1))^(1/%g)) over a %v window%s), in front of %s",
		a.MaxRejectionProbability, a.SuccessRateThreshold, a.Aggression, a.SamplingWindow, rps, about)
	return inner
}

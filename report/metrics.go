package report

// Better says which direction of a metric is an improvement.
type Better int

const (
	HigherIsBetter Better = iota + 1
	LowerIsBetter
)

func (b Better) String() string {
	if b == HigherIsBetter {
		return "higher is better"
	}
	return "lower is better"
}

// Metric is one headline number of a policy's result, by the name used in
// expectations, baselines, sweeps and plots (the JSON field path).
type Metric struct {
	Name   string
	Better Better
	// Value returns the metric, and false when it does not exist for this
	// result (latencies when nothing completed).
	Value func(PolicyResult) (float64, bool)
}

func always(f func(PolicyResult) float64) func(PolicyResult) (float64, bool) {
	return func(p PolicyResult) (float64, bool) { return f(p), true }
}

func optional(f func(PolicyResult) *float64) func(PolicyResult) (float64, bool) {
	return func(p PolicyResult) (float64, bool) {
		if v := f(p); v != nil {
			return *v, true
		}
		return 0, false
	}
}

func reason(name string) func(PolicyResult) (float64, bool) {
	return always(func(p PolicyResult) float64 { return float64(p.GaveUpBy[name]) })
}

// Metrics lists every metric in a fixed order.
var Metrics = []Metric{
	{"completed", HigherIsBetter, always(func(p PolicyResult) float64 { return float64(p.Completed) })},
	{"attempts", LowerIsBetter, always(func(p PolicyResult) float64 { return float64(p.Attempts) })},
	{"retries", LowerIsBetter, always(func(p PolicyResult) float64 { return float64(p.Retries) })},
	{"gave_up", LowerIsBetter, always(func(p PolicyResult) float64 { return float64(p.GaveUp) })},
	{"gave_up_by.attempts", LowerIsBetter, reason("attempts")},
	{"gave_up_by.deadline", LowerIsBetter, reason("deadline")},
	{"gave_up_by.terminal", LowerIsBetter, reason("terminal")},
	{"gave_up_by.queue_full", LowerIsBetter, reason("queue_full")},
	{"amplification", LowerIsBetter, always(func(p PolicyResult) float64 { return p.Amplification })},
	{"latency_ms.p50", LowerIsBetter, optional(func(p PolicyResult) *float64 { return p.LatencyMS.P50 })},
	{"latency_ms.p95", LowerIsBetter, optional(func(p PolicyResult) *float64 { return p.LatencyMS.P95 })},
	{"latency_ms.p99", LowerIsBetter, optional(func(p PolicyResult) *float64 { return p.LatencyMS.P99 })},
	{"last_completion_ms", LowerIsBetter, optional(func(p PolicyResult) *float64 { return p.LastCompletionMS })},
}

// LookupMetric finds a metric by name.
func LookupMetric(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricNames returns the names of all metrics, in order.
func MetricNames() []string {
	names := make([]string, len(Metrics))
	for i, m := range Metrics {
		names[i] = m.Name
	}
	return names
}

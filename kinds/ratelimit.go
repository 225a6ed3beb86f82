package kinds

import (
	"fmt"
	"strings"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// The rate-limit server (sim.RateLimit): an API key's limits in front of an inner server.
func registerRateLimit() {
	// Requests a key's rate limits rejected (429), and those that can
	// never fit them (413).
	limited := metrics.RegisterCount(&metrics.Metric{Name: "server.rate_limited", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	tooLarge := metrics.RegisterCount(&metrics.Metric{Name: "server.too_large", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	// With a requests limit: the time, up to the key's last request, that
	// its requests bucket sat full (capacity no one used), and the share of
	// what the limit allowed up to then that went through.
	idle := metrics.RegisterCounted(&metrics.Metric{Name: "server.key_idle_ms", Over: metrics.OverKept, Unit: metrics.Milliseconds, Better: stats.LowerIsBetter,
		Quantity: "ms the key's request limit sat full", Added: "2026-12"}, metrics.CounterValue("server.key_idle_ms", time.Millisecond))
	utilisation := metrics.RegisterCounted(&metrics.Metric{Name: "server.key_utilisation", Over: metrics.OverKept, Unit: metrics.Ratio, Better: stats.HigherIsBetter,
		Proportion: true, JSONDecimals: 4, Quantity: "share of the key's request limit used", Added: "2026-12"},
		func(r *sim.Result) (float64, bool) {
			passed, _ := r.Counters.Get("server.key_passed")
			capacity, ok := r.Counters.Get("server.key_capacity")
			if !ok || capacity <= 0 {
				return 0, false
			}
			return min(float64(passed)/float64(capacity), 1), true
		})
	// The clients' side: the mean time an operation spent waiting before
	// its attempts (sim.Result.Waited per operation).
	idleClients := metrics.RegisterCounted(&metrics.Metric{Name: "client.idle_ms", Over: metrics.OverKept, Unit: metrics.Milliseconds, Better: stats.LowerIsBetter,
		Quantity: "ms an operation waited before its attempts", Added: "2026-12"},
		func(r *sim.Result) (float64, bool) {
			if r.Clients == 0 {
				return 0, false
			}
			return float64(r.Waited) / float64(time.Millisecond) / float64(r.Clients), true
		})
	registerServer(&Kind{Name: "rate-limit", Fields: []string{"requests_per_minute", "input_tokens_per_minute", "output_tokens_per_minute",
		"input_tokens", "output_tokens", "reject_after", "retry_after_unit", "inner", "retry_after_growth", "max_retry_after"},
		About: "an API key's requests and tokens per minute (429 with retry-after) in front of an inner server"},
		serverFuncs[*sim.RateLimit]{
			decode:   decodeRateLimit,
			describe: describeRateLimit,
			minResponse: func(r *sim.RateLimit) time.Duration {
				return min(r.RejectAfter, MinResponse(r.Inner))
			},
			metrics: func(r *sim.RateLimit) []string {
				names := []string{limited.Name}
				if r.InputTokensPerMinute > 0 || r.OutputTokensPerMinute > 0 {
					names = append(names, tooLarge.Name)
				}
				if r.RequestsPerMinute > 0 {
					names = append(names, idle.Name, utilisation.Name)
				}
				names = append(names, idleClients.Name)
				return names
			},
			inner: func(r *sim.RateLimit) []sim.ServerModel { return []sim.ServerModel{r.Inner} },
			clone: func(r *sim.RateLimit) *sim.RateLimit {
				c := *r
				c.Inner = cloneServer(r.Inner)
				return &c
			},
			// No scale: a 429's retry-after is the time to the key's next
			// token, which a key scaled down would lengthen (a pilot of
			// shared-key-agents at a tenth predicted a quarter of its events).
		},
		serverParam[*sim.RateLimit]{paramRequestsPerMinute, func(r *sim.RateLimit, v int64) error {
			r.RequestsPerMinute = v
			return nil
		}})
}

// decodeRateLimit reads a rate-limit server and the inner server it guards.
func decodeRateLimit(d *schema.Decoder, m *schema.Mapping, path string) *sim.RateLimit {
	r := &sim.RateLimit{
		RequestsPerMinute:     m.Integer("requests_per_minute", 0, 0, sim.MaxPerMinute),
		InputTokensPerMinute:  m.Integer("input_tokens_per_minute", 0, 0, sim.MaxPerMinute),
		OutputTokensPerMinute: m.Integer("output_tokens_per_minute", 0, 0, sim.MaxPerMinute),
		InputTokens:           int(m.Integer("input_tokens", 0, 0, 1<<31-1)),
		OutputTokens:          int(m.Integer("output_tokens", 0, 0, 1<<31-1)),
		RejectAfter:           m.Duration("reject_after", 0),
		RetryAfterUnit:        m.Duration("retry_after_unit", 0),
		RetryAfterGrowth:      m.Number("retry_after_growth", 0, 0, sim.MaxRetryAfterGrowth),
		MaxRetryAfter:         m.Duration("max_retry_after", 0),
	}
	if m.Has("max_retry_after") && !m.Has("retry_after_growth") {
		m.Errorf("max_retry_after", "bounds a growing retry-after: set retry_after_growth too")
	}
	needOneOf(m, "limit", "requests_per_minute", "input_tokens_per_minute", "output_tokens_per_minute")
	r.Inner = decodeInner(d, m, "the server behind the key's limits, such as {type: error-mix, failures: [...]}")
	return r
}

// describeInner returns the table of a wrapper's inner server s, and what
// the wrapper's caption calls it: its kind and the rest of its caption.
func describeInner(s sim.ServerModel) (Table, string) {
	inner := DescribeServer(s)
	about := strings.TrimPrefix(inner.Caption, "Server")
	if k := serverKindOf(s); k != nil {
		about = k.Name + about
	}
	return inner, about
}

func describeRateLimit(r *sim.RateLimit) Table {
	var limits []string
	for _, l := range []struct {
		n    int64
		what string
	}{{r.RequestsPerMinute, "requests"}, {r.InputTokensPerMinute, "input tokens"}, {r.OutputTokensPerMinute, "output tokens"}} {
		if l.n > 0 {
			limits = append(limits, fmt.Sprintf("%d %s", l.n, l.what))
		}
	}
	inner, about := describeInner(r.Inner)
	inner.Caption = fmt.Sprintf("Server: one API key limited to %s per minute (429 with retry-after), in front of %s",
		strings.Join(limits, ", "), about)
	return inner
}

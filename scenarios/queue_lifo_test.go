package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/sim"
)

// A queue's adaptive_lifo field: 100 ms by default, the codel interval
// when codel is set; errors at the field; the models that cannot take a
// queue that decides later say so.
func TestQueueAdaptiveLIFODecode(t *testing.T) {
	queue := func(extra string) string {
		return withModels("    server: {type: queue, concurrency: 2, service: 1s"+extra+"}\n", burstClients)
	}
	for _, tt := range []struct {
		extra string
		want  time.Duration
	}{
		{"", 0},
		{", adaptive_lifo: {}", 100 * time.Millisecond},
		{", adaptive_lifo: {interval: 30ms}", 30 * time.Millisecond},
		{", codel: {interval: 50ms}, adaptive_lifo: {}", 50 * time.Millisecond},
	} {
		if q := parseOne(t, queue(tt.extra)).Server.(*sim.Queue); q.LIFO.Interval != tt.want {
			t.Errorf("%q: interval %v, want %v", tt.extra, q.LIFO.Interval, tt.want)
		}
	}
	for _, tt := range []struct{ src, want string }{
		{queue(", adaptive_lifo: {interval: 0s}"), "m.yaml:3:82: scenarios[0].server.adaptive_lifo.interval: must be > 0"},
		{queue(", adaptive_lifo: {interval: -5ms}"), "scenarios[0].server.adaptive_lifo.interval: must not be negative"},
		{queue(", adaptive_lifo: {target: 5ms}"), "scenarios[0].server.adaptive_lifo.target: unknown field (known fields: interval)"},
		{queue(", adaptive_lifo: lifo"), "scenarios[0].server.adaptive_lifo"},
		{withModels("    server: {type: billing, per_request: 1, inner: {type: queue, concurrency: 1, service: 1s, adaptive_lifo: {}}}\n", burstClients), "decides requests after they arrive; it cannot be billed"},
		{withModels("    server: {type: pool, members: [{name: a, server: {type: queue, concurrency: 1, service: 1s, adaptive_lifo: {}}}]}\n", burstClients), "cannot be a pool member"},
	} {
		_, err := Parse("m.yaml", []byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v,\nwant %q", err, tt.want)
		}
	}
}

func TestBillingPartialStreamsDecode(t *testing.T) {
	for _, tt := range []struct {
		extra string
		want  bool
	}{{"", false}, {", partial_streams: true", true}} {
		s := parseOne(t, withModels("    server: {type: billing, per_output_token: 0.001"+tt.extra+", inner: {type: error-mix, response_time: 1s, failures: [{probability: 0.1, reject: server-error}]}}\n", burstClients))
		if b := s.Server.(*sim.Billing); b.PartialStreams != tt.want {
			t.Errorf("%q: partial streams %v", tt.extra, b.PartialStreams)
		}
	}
	_, err := Parse("m.yaml", []byte(withModels("    server: {type: billing, per_output_token: 0.001, partial_streams: 1, inner: {type: error-mix, response_time: 1s, failures: [{probability: 0.1, reject: server-error}]}}\n", burstClients)))
	if err == nil || !strings.Contains(err.Error(), "scenarios[0].server.partial_streams") {
		t.Errorf("a non-boolean partial_streams: %v", err)
	}
}

// A policy that completes nothing has no billed-per-completion value: the
// metrics say they may be missing, so that a shard of such a run merges
// (the shard reader refused its null before).
func TestBillingPerCompletionMayBeMissing(t *testing.T) {
	for _, name := range []string{"billing.billed_per_completion", "billing.cost_per_completion"} {
		if m, ok := metrics.Lookup(name); !ok || !m.MayBeMissing() {
			t.Errorf("%s: registered %v, may be missing %v", name, ok, ok && m.MayBeMissing())
		}
	}
}

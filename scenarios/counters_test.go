package scenarios

import (
	"strings"
	"testing"

	"github.com/retrysim/retrysim/metrics"
)

// An expectation may name one part's counter: a retry layer's of its
// policy, a pool member's. The scenario then reports it, after its other
// metrics; a part it lacks is an error at the expectation.
func TestExpectationsNamePartsCounters(t *testing.T) {
	const layered = `scenarios:
  - name: s
    check_seeds: 2
    server: {response_time: 50ms, phases: [{reject: unavailable}]}
    clients: {count: 5}
    policies:
      - name: app
        type: immediate
        max_attempts: 2
        layers: [{name: sidecar, type: immediate, max_attempts: 3}]
        expect: [EXPECT]
      - name: plain
        type: immediate
        max_attempts: 1
`
	s := parseOne(t, strings.Replace(layered, "EXPECT", `"max(layers.outer.retries_capacity) <= 5", "max(layers.sidecar.attempts) <= 30"`, 1))
	ms := s.Metrics()
	outer, _ := metrics.Counter("layers.outer.retries_capacity")
	sidecar, _ := metrics.Counter("layers.sidecar.attempts")
	if n := len(ms); n < 2 || ms[n-2] != outer || ms[n-1] != sidecar {
		t.Errorf("the counters are not the last metrics: %v", ms)
	}
	const pooled = `scenarios:
  - name: s
    check_seeds: 2
    server:
      type: pool
      members:
        - {name: east, server: {response_time: 10ms, phases: [{admit: 100, window: 1s}]}}
        - {name: west, server: {response_time: 10ms, phases: [{admit: 100, window: 1s}]}}
    clients: {count: 5}
    policies:
      - name: app
        type: immediate
        max_attempts: 2
        expect: [EXPECT]
`
	parseOne(t, strings.Replace(pooled, "EXPECT", `"max(pool.west.failed) == 0"`, 1))
	for _, tt := range []struct{ file, expect, want string }{
		{layered, `"max(layers.sidcar.attempts) <= 30"`, `m.yaml:11:18: scenarios[0].policies[0].expect[0]: layers.sidcar.attempts names retry layer "sidcar", which policy "app" lacks (its levels: outer, sidecar)`},
		{pooled, `"max(layers.sidecar.attempts) <= 30"`, `policy "app" has no layers`},
		{layered, `"max(pool.east.failed) == 0"`, `pool.east.failed names a pool member, but the scenario's server is not a pool`},
		{pooled, `"max(pool.north.failed) == 0"`, `pool.north.failed names pool member "north", which the pool lacks (its members: east, west)`},
	} {
		_, err := Parse("m.yaml", []byte(strings.Replace(tt.file, "EXPECT", tt.expect, 1)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.expect, err, tt.want)
		}
	}
}

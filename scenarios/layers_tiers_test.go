package scenarios

import (
	"strings"
	"testing"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/policies"
)

// A layer decodes propagate_deadline (true unless set) and its
// coordinators, a preset's included; what a layer cannot drive is an
// error at its field.
func TestLayersTiersDecode(t *testing.T) {
	s := parseOne(t, withLayers("[{name: sdk, type: aws-standard}, {name: sidecar, type: immediate, max_attempts: 5, propagate_deadline: false, retry_quota: {capacity: 50}}]"))
	ls := s.Policies[0].Layers
	if len(ls) != 2 || ls[0].NoDeadlinePropagation || !ls[1].NoDeadlinePropagation {
		t.Fatalf("layers %+v", ls)
	}
	if len(ls[0].Coordinators) != 1 || len(ls[1].Coordinators) != 1 {
		t.Fatalf("coordinators: sdk %v, sidecar %v", ls[0].Coordinators, ls[1].Coordinators)
	}
	if q, ok := ls[1].Coordinators[0].(policies.RetryQuotaConfig); !ok || q.Capacity != 50 {
		t.Errorf("sidecar coordinator %#v", ls[1].Coordinators[0])
	}
	if d := kinds.DescribeCoordination(&s.Policies[0]); !strings.Contains(d, "no deadline propagation") {
		t.Errorf("describe: %s", d)
	}
	for _, tt := range []struct{ layers, want string }{
		{"[{name: sdk, type: immediate, max_attempts: 2, hedge: {delay: 1s}}]", "layers[0].hedge: an inner layer cannot hedge"},
		{"[{name: sdk, type: immediate, max_attempts: 2, fallback: {}}]", "layers[0].fallback: an inner layer has no fallback"},
		{"[{name: cli, type: claude-code}]", "layers[0].type: this type falls back to another model"},
		{"[{name: sdk, type: immediate, max_attempts: 2, pacer: {}}]", "layers[0].pacer: only the outermost policy gets the rate-limit headers"},
		{"[{name: sdk, type: immediate, max_attempts: 2, propagate_deadline: maybe}]", "layers[0].propagate_deadline"},
	} {
		_, err := Parse("m.yaml", []byte(withLayers(tt.layers)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v,\nwant %q", tt.layers, err, tt.want)
		}
	}
}

// The layers' metrics are reported for a scenario with a layered policy,
// so that expectations can name them, and not otherwise.
func TestLayersMetricsReported(t *testing.T) {
	s := parseOne(t, withLayers("[{name: sidecar, type: immediate, max_attempts: 3, propagate_deadline: false}]"))
	var names []string
	for _, m := range s.Metrics() {
		names = append(names, m.Name)
	}
	for _, want := range []string{"layers.after_giveup", "layers.retrying_capacity", "layers.retrying_retry_after"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("%s not reported: %v", want, names)
		}
	}
	_, err := Parse("m.yaml", []byte(`scenarios:
  - name: s
    server: {phases: [{reject: unavailable}]}
    clients: {count: 2}
    policies:
      - {name: app, type: immediate, max_attempts: 3, expect: ["layers.after_giveup == 0"]}
`))
	if err == nil || !strings.Contains(err.Error(), "layers.after_giveup is not reported") {
		t.Errorf("an expectation on a layer metric without layers: %v", err)
	}
}

package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// hedge and the stream watchdog decode from a policy's mapping.
func TestHedgeAndWatchdogDecode(t *testing.T) {
	src := strings.Replace(valid, "      - name: immediate\n", `      - name: immediate
        hedge: {delay: 150ms, max_hedges: 2, budget_percent: 10, budget_burst: 4, percentile: 95, window: 50, min_samples: 10}
        stream_idle_timeout: 5s
        stream_first_byte_timeout: 20s
`, 1)
	f, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p := f.Scenarios[0].Policies[0]
	want := policies.HedgeConfig{Delay: 150 * time.Millisecond, MaxHedges: 2, BudgetPercent: 10, BudgetBurst: 4, Percentile: 95, Window: 50, MinSamples: 10}
	if len(p.Coordinators) != 1 || p.Coordinators[0] != want {
		t.Errorf("coordinators %+v, want %+v", p.Coordinators, want)
	}
	if p.Rules.StreamIdleTimeout != 5*time.Second || p.Rules.StreamFirstByteTimeout != 20*time.Second {
		t.Errorf("rules %+v", p.Rules)
	}
}

// errorMix is a scenario file whose server is an error mix with the given
// failures list.
func errorMix(failures string) string {
	return `scenarios:
  - name: s
    server:
      type: error-mix
      response_time: 1s
      failures:
` + failures + `
    clients: {count: 3, max_attempts: 3}
    policies:
      - name: immediate
`
}

// Stream faults decode from an error mix's failures, and bad ones are
// errors at their position.
func TestStreamFaultsDecode(t *testing.T) {
	f, err := Parse("x.yaml", []byte(errorMix(`        - {probability: 0.1, stream_fault: {kind: stall, after_events: 3, for: 2m}}
        - {probability: 0.1, stream_fault: {kind: cut, after_events: 1}}
        - {probability: 0.1, reject: server-error}`)))
	if err != nil {
		t.Fatal(err)
	}
	outs := f.Scenarios[0].Server.(*sim.ErrorMix).Phases[0].Outcomes
	if outs[0].Fault != (sim.StreamFault{Kind: sim.StallAfter, After: 3, For: 2 * time.Minute}) ||
		outs[1].Fault != (sim.StreamFault{Kind: sim.CutAfter, After: 1}) || outs[2].Fault.Kind != sim.NoFault || outs[2].Reject.Status != 500 {
		t.Errorf("outcomes %+v", outs)
	}
	for _, tc := range []struct{ failures, want string }{
		{`        - {probability: 0.1, stream_fault: {kind: hang, for: 1m}}`, `unknown stream fault "hang"`},
		{`        - {probability: 0.1, stream_fault: {kind: stall, after_events: 2}}`, "for must be > 0"},
		{`        - {probability: 0.1, stream_fault: {kind: cut, after_events: 2, for: 1m}}`, "for applies only to stalls"},
		{`        - {probability: 0.1, reject: overloaded, stream_fault: {kind: ping_only, for: 1m}}`, "drop reject"},
		{`        - {probability: 0.1, stream_fault: {kind: ping_only, for: 1m, after: 2}}`, "stream_fault.after"},
	} {
		_, err := Parse("x.yaml", []byte(errorMix(tc.failures)))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.yaml:") {
			t.Errorf("%s: err %v, want %q with a position", tc.failures, err, tc.want)
		}
	}
}

package check

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/scenarios"
)

// A baseline is untrusted input. Whatever its bytes, the readers of
// single-seed and multi-seed reports give an error or a report: no panic,
// and no value a run cannot have (metrics.Metric.Impossible).
func FuzzReadBaselines(f *testing.F) {
	single := report.Document{Schema: report.SingleSeedSchema, Scenario: "s", Seed: 3,
		Results: []report.PolicyResult{result("a", 20, 18, 100, time.Second), result("b", 20, 0, 160)}}
	one := string(encode(f, single))
	s := worldScenario(f)
	single.Origin = report.NewOrigin("retrysim devel, commit unknown", "w.yaml", []string{"clients=20"}, s)
	withOrigin := string(encode(f, single))
	multi := `{"schema": "retrysim/multi-seed/v1", "scenario": "s", "first_seed": 1, "seeds": 2, "baseline": "p",
 "test": "wilcoxon-signed-rank", "alpha": 0.05, "warnings": [],
 "policies": [{"policy": "p", "metrics": [
  {"metric": "completed", "better": "higher", "n": 2, "summary": null, "vs_baseline": null, "values": [20, 19]},
  {"metric": "goodput_share", "better": "higher", "n": 2, "summary": null, "vs_baseline": null, "values": [1, 0.95]},
  {"metric": "latency_ms.p99", "better": "lower", "n": 1, "summary": null, "vs_baseline": null, "values": [1500, null]}]}]}`
	for _, s := range []string{
		one, multi, withOrigin,
		strings.Replace(withOrigin, "workload.clients = 20", "workload.clients = 21", 1),
		// The impossible values: each reader must refuse them.
		strings.Replace(one, `"completed": 18`, `"completed": -3.5`, 1),
		strings.Replace(one, `"completed": 18`, `"completed": 1e308`, 1),
		strings.Replace(one, `"completed": 18`, `"completed": null`, 1),
		strings.Replace(one, `"goodput_share": 0.9`, `"goodput_share": 1.5`, 1),
		strings.Replace(multi, `[20, 19]`, `[20, -3.5]`, 1),
		strings.Replace(multi, `[20, 19]`, `[1e308, 19]`, 1),
		strings.Replace(multi, `[20, 19]`, `[20, 18.5]`, 1),
		strings.Replace(multi, `[1, 0.95]`, `[1, 1.05]`, 1),
		strings.Replace(multi, `[1500, null]`, `[-1500, null]`, 1),
	} {
		f.Add([]byte(s))
	}
	if doc, err := ReadBaseline("b.json", strings.NewReader(withOrigin)); err != nil || doc.Origin == nil || doc.Origin.Digest != s.Digest() {
		f.Fatalf("a report with its origin: %v", err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if doc, err := ReadBaseline("b.json", bytes.NewReader(data)); err == nil {
			for _, r := range doc.Results {
				for i, m := range r.Metrics {
					if msg := m.Impossible(r.Values[i]); msg != "" {
						t.Fatalf("single-seed baseline read with %s = %v, which %s", m.Name, r.Values[i], msg)
					}
				}
			}
		}
		if set, err := ReadSeedBaseline("b.json", data); err == nil {
			for _, p := range set.Policies {
				for i, m := range p.Metrics {
					for _, v := range p.Values[i] {
						if msg := m.Impossible(v); msg != "" {
							t.Fatalf("multi-seed baseline read with %s = %v, which %s", m.Name, v, msg)
						}
					}
				}
			}
		}
	})
}

// worldScenario is a small scenario, for an origin.
func worldScenario(t testing.TB) *scenarios.Scenario {
	f, err := scenarios.Parse("w.yaml", []byte(`scenarios:
  - name: s
    server: {phases: [{admit: 1, window: 1s}]}
    clients: {count: 20, max_attempts: 2}
    policies: [{name: immediate}]
`))
	if err != nil {
		t.Fatal(err)
	}
	return f.Scenarios[0]
}

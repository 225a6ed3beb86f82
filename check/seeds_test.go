package check

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
)

// gateScenario is scenariotest.GateYAML's scenario.
func gateScenario(t *testing.T, base string) *scenarios.Scenario {
	t.Helper()
	f, err := scenarios.Parse("gate.yaml", []byte(scenariotest.GateYAML(base)))
	if err != nil {
		t.Fatal(err)
	}
	return f.Scenarios[0]
}

func collect(t *testing.T, s *scenarios.Scenario, first uint64, k int) *runs.MultiSeed {
	t.Helper()
	m, err := runs.Collect(t.Context(), s, first, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// recorded is m as a baseline file: the multi-seed JSON report, read back.
func recorded(t *testing.T, m *runs.MultiSeed) *SeedSet {
	t.Helper()
	data, err := json.Marshal(report.Stats(m))
	if err != nil {
		t.Fatal(err)
	}
	set, err := ReadSeedBaseline("baseline.json", data)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func failures(cs []SeedChange) []string {
	var out []string
	for _, c := range cs {
		if c.Fail {
			out = append(out, c.Explain())
		}
	}
	return out
}

// The gate catches a change of behaviour and not a change of draws, over
// 30 seeds (docs/ci.md, "What the gate catches").
func TestSeedGateCatchesChangesNotNoise(t *testing.T) {
	const seeds = 30
	base := recorded(t, collect(t, gateScenario(t, "500ms"), 1, seeds))
	tol := Tolerances{Default: DefaultSeedTolerance}

	// (a) The same runs again: nothing differs, nothing fails.
	same, _ := CompareSeeds("baseline.json", base, FromMultiSeed(collect(t, gateScenario(t, "500ms"), 1, seeds)), tol, DefaultAlpha)
	for _, c := range same {
		if c.Verdict != Unchanged || c.Fail || c.Diff.Test.N != 0 {
			t.Errorf("(a) same runs: %s", c.Explain())
		}
	}

	// (b) The base delay doubled: worse latencies, significantly.
	doubled, _ := CompareSeeds("baseline.json", base, FromMultiSeed(collect(t, gateScenario(t, "1s"), 1, seeds)), tol, DefaultAlpha)
	var latencyFails int
	for _, c := range doubled {
		if c.Fail && c.Metric != nil && (c.Metric.Unit == metrics.Milliseconds || c.Metric == metrics.Completed) {
			latencyFails++
			if c.Diff.Test.P >= 0.05 {
				t.Errorf("(b) %s failed with p = %v", c.Metric.Name, c.Diff.Test.P)
			}
		}
	}
	if latencyFails == 0 {
		t.Errorf("(b) doubling the base delay failed neither completed nor a latency; failures: %q", failures(doubled))
	}

	// (c) The same policy with other draws (seeds 1001-1030 paired with
	// 1-30): the same distribution, so nothing fails at the default
	// tolerance.
	other := FromMultiSeed(collect(t, gateScenario(t, "500ms"), 1001, seeds))
	other.FirstSeed = base.FirstSeed
	if cs, _ := CompareSeeds("baseline.json", base, other, tol, DefaultAlpha); len(failures(cs)) > 0 {
		f := failures(cs)
		t.Errorf("(c) other draws of the same policy failed: %q", f)
	}
}

// A latency of a policy whose completions changed significantly is not
// ranked: it describes other operations.
func TestSeedGateSurvivorMetricsNotComparable(t *testing.T) {
	base := &SeedSet{Scenario: "s", FirstSeed: 1, Seeds: 8, Policies: []SeedPolicy{{
		Name:    "p",
		Metrics: []*metrics.Metric{metrics.Completed, metrics.P99},
		Values:  [][]float64{{20, 20, 20, 20, 20, 20, 20, 20}, {900, 950, 1000, 1100, 1200, 1250, 1300, 1400}},
	}}}
	now := &SeedSet{Scenario: "s", FirstSeed: 1, Seeds: 8, Policies: []SeedPolicy{{
		Name:    "p",
		Metrics: []*metrics.Metric{metrics.Completed, metrics.P99},
		// Fewer complete, and those that do are quick.
		Values: [][]float64{{12, 11, 12, 13, 12, 11, 10, 12}, {300, 310, 320, 330, 340, 350, 360, 370}},
	}}}
	cs, _ := CompareSeeds("b.json", base, now, Tolerances{Default: DefaultSeedTolerance}, DefaultAlpha)
	if cs[0].Metric != metrics.Completed || !cs[0].Fail {
		t.Fatalf("completed: %s, want a failure", cs[0].Explain())
	}
	if cs[1].Verdict != NotComparable || cs[1].Fail {
		t.Fatalf("p99: %s, want not comparable", cs[1].Explain())
	}
	if !strings.Contains(cs[1].Explain(), "completes -8") {
		t.Errorf("p99's note %q does not say how many fewer complete", cs[1].Explain())
	}
}

func TestReadSeedBaselineRefusesBadInput(t *testing.T) {
	good := func() map[string]any {
		return map[string]any{
			"schema": report.MultiSeedSchema, "scenario": "s", "first_seed": 1, "seeds": 2, "baseline": "p",
			"test": "wilcoxon-signed-rank", "alpha": 0.05, "warnings": []string{},
			"policies": []any{map[string]any{"policy": "p", "metrics": []any{map[string]any{
				"metric": "completed", "better": "higher", "n": 2, "summary": nil, "vs_baseline": nil, "values": []any{20, 19}}}}},
		}
	}
	metric := func(d map[string]any) map[string]any {
		return d["policies"].([]any)[0].(map[string]any)["metrics"].([]any)[0].(map[string]any)
	}
	cases := []struct {
		name string
		edit func(d map[string]any)
		want string
	}{
		{"other schema", func(d map[string]any) { d["schema"] = "retrysim/sweep/v1" }, `schema "retrysim/sweep/v1"`},
		{"unknown field", func(d map[string]any) { d["extra"] = 1 }, `unknown field "extra"`},
		{"no scenario", func(d map[string]any) { delete(d, "scenario") }, `missing field "scenario"`},
		{"no seeds", func(d map[string]any) { delete(d, "seeds") }, `missing field "seeds"`},
		{"seeds 0", func(d map[string]any) { d["seeds"] = 0 }, "seeds 0: want 1 to"},
		{"seed overflow", func(d map[string]any) { d["first_seed"] = uint64(1<<64 - 1) }, "past the largest seed"},
		{"no policies", func(d map[string]any) { d["policies"] = []any{} }, "no policies"},
		{"unknown metric", func(d map[string]any) { metric(d)["metric"] = "speed" }, `unknown metric "speed"`},
		{"direction", func(d map[string]any) { metric(d)["better"] = "lower" }, `says "lower" is better`},
		{"no values", func(d map[string]any) { delete(metric(d), "values") }, "has no values per seed"},
		{"too few values", func(d map[string]any) { metric(d)["values"] = []any{20} }, "has 1 values, want one per seed (2)"},
		{"huge value", func(d map[string]any) {
			metric(d)["metric"], metric(d)["better"], metric(d)["values"] = "amplification", "lower", []any{1e300, 1}
		}, "amplification on seed 1 is 1e+300, beyond"},
		// Impossible values, refused as the shard reader refuses them
		// (metrics.Metric.Impossible).
		{"huge count", func(d map[string]any) { metric(d)["values"] = []any{20, 1e308} }, "completed on seed 2: 1e+308 is not a count"},
		{"negative count", func(d map[string]any) { metric(d)["values"] = []any{-3.5, 19} }, "policies[0] (p): metrics[0]: completed on seed 1: -3.5 is not a finite number ≥ 0"},
		{"fractional count", func(d map[string]any) { metric(d)["values"] = []any{20, 18.5} }, "completed on seed 2: 18.5 is not a count"},
		{"missing count", func(d map[string]any) { metric(d)["values"] = []any{20, nil} }, "completed on seed 2: null (missing), but the metric always has a value"},
		{"share above 1", func(d map[string]any) {
			metric(d)["metric"], metric(d)["values"] = "goodput_share", []any{0.5, 1.25}
		}, "goodput_share on seed 2: 1.25 is not a share"},
		{"negative time", func(d map[string]any) {
			metric(d)["metric"], metric(d)["better"], metric(d)["values"] = "latency_ms.p99", "lower", []any{-1, 100}
		}, "latency_ms.p99 on seed 1: -1 is not a finite number ≥ 0"},
		{"fractional seeds", func(d map[string]any) { d["seeds"] = 1.5 }, "cannot unmarshal number 1.5"},
	}
	for _, c := range cases {
		d := good()
		c.edit(d)
		data, _ := json.Marshal(d)
		_, err := ReadSeedBaseline("b.json", data)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "b.json: ") {
			t.Errorf("%s: error %v, want one naming b.json and saying %q", c.name, err, c.want)
		}
	}
	data, _ := json.Marshal(good())
	if _, err := ReadSeedBaseline("b.json", append(data, []byte(" {}")...)); err == nil {
		t.Error("trailing data: accepted")
	}
	if set, err := ReadSeedBaseline("b.json", data); err != nil || set.Policies[0].Values[0][1] != 19 {
		t.Errorf("good baseline: %v, %v", set, err)
	}
}

func TestSeedsToDetect(t *testing.T) {
	// Mean 20, sample standard deviation 2: a 5 % change is 1, so the
	// paired spread √2·2 needs ((1.96+0.84)·2.83)² / (3/π) ≈ 65.8 → 66.
	vals := []float64{18, 22, 18, 22, 18, 22, 18, 22, 18, 22}
	vals = append(vals, 20) // keeps the mean; the sd becomes 1.897
	n, ok := SeedsToDetect(vals, 0.05)
	if !ok || n < 55 || n > 66 {
		t.Errorf("SeedsToDetect = %d, %v; want about 60", n, ok)
	}
	if _, ok := SeedsToDetect([]float64{20, 20, 20}, 0.05); ok {
		t.Error("no spread: want no estimate")
	}
	base := &SeedSet{Scenario: "s", FirstSeed: 1, Seeds: len(vals), Policies: []SeedPolicy{{Name: "p", Metrics: []*metrics.Metric{metrics.Completed}, Values: [][]float64{vals}}}}
	if w := PowerWarnings("b.json", base); len(w) != 1 || !strings.Contains(w[0], "11 seeds detect a 5% change in completed") {
		t.Errorf("warnings %q", w)
	}
	var buf bytes.Buffer
	rep := Report{Warnings: PowerWarnings("b.json", base)}
	WriteCheck(&buf, report.Table, &rep)
	if !strings.Contains(buf.String(), "Warnings") {
		t.Errorf("the check report does not show the warning:\n%s", buf.String())
	}
}

// Slower while completing fewer is still worse, and fails: the operations
// lost could not have made the latency better (metrics.Comparable).
func TestSeedGateSlowerAndFewerFails(t *testing.T) {
	base := &SeedSet{Scenario: "s", FirstSeed: 1, Seeds: 8, Policies: []SeedPolicy{{
		Name:    "p",
		Metrics: []*metrics.Metric{metrics.Completed, metrics.P99},
		Values:  [][]float64{{20, 20, 20, 20, 20, 20, 20, 20}, {900, 950, 1000, 1100, 1200, 1250, 1300, 1400}},
	}}}
	now := &SeedSet{Scenario: "s", FirstSeed: 1, Seeds: 8, Policies: []SeedPolicy{{
		Name:    "p",
		Metrics: []*metrics.Metric{metrics.Completed, metrics.P99},
		Values:  [][]float64{{12, 11, 12, 13, 12, 11, 10, 12}, {3000, 3100, 3200, 3300, 3400, 3500, 3600, 3700}},
	}}}
	cs, _ := CompareSeeds("b.json", base, now, Tolerances{Default: DefaultSeedTolerance}, DefaultAlpha)
	if cs[1].Verdict != Worsened || !cs[1].Fail {
		t.Fatalf("p99 slower while completing fewer: %s, want worse and a failure", cs[1].Explain())
	}
}

// A share's interval in the gate's table stays inside [0, 1] (Wilson's,
// as the multi-seed report gives it), written as [low, high]: a t interval
// of 1, 1, 1, 0.7 would reach past 1.
func TestSeedGateShareIntervalInsideUnit(t *testing.T) {
	vals := []float64{1, 1, 1, 0.7}
	set := &SeedSet{Scenario: "s", FirstSeed: 1, Seeds: 4, Policies: []SeedPolicy{{
		Name: "p", Metrics: []*metrics.Metric{metrics.GoodputShare}, Values: [][]float64{vals},
	}}}
	cs, _ := CompareSeeds("b.json", set, set, Tolerances{Default: DefaultSeedTolerance}, DefaultAlpha)
	c := cs[0]
	if c.Base.CILow < 0 || c.Base.CIHigh > 1 || c.Base.CIHigh <= c.Base.Mean {
		t.Errorf("interval [%v, %v] around %v", c.Base.CILow, c.Base.CIHigh, c.Base.Mean)
	}
	if got := c.MeanText(c.Base); !strings.HasPrefix(got, "0.925 [") || strings.Contains(got, "±") {
		t.Errorf("MeanText = %q, want the mean and [low, high]", got)
	}
}

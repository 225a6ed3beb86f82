package check

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// simResult builds a run's result.
func simResult(policy string, clients, completed, attempts int, latencies ...time.Duration) sim.Result {
	r := sim.Result{Policy: policy, Clients: clients, Completed: completed, Attempts: attempts,
		Retries: attempts - clients, GaveUp: clients - completed, Latencies: latencies}
	if len(latencies) > 0 {
		r.LastCompletion = latencies[len(latencies)-1]
	}
	return r
}

// result builds a PolicyResult the way compare does.
func result(policy string, clients, completed, attempts int, latencies ...time.Duration) report.PolicyResult {
	r := simResult(policy, clients, completed, attempts, latencies...)
	return report.Row(&r, metrics.Default())
}

// series is one metric of runs on consecutive seeds, as runs.MultiSeed keeps it.
func series(runs []sim.Result, metric string) []float64 {
	m, _ := metrics.Lookup(metric)
	out := make([]float64, len(runs))
	for i := range runs {
		out[i] = m.ValueOrNaN(&runs[i])
	}
	return out
}

func TestEvaluate(t *testing.T) {
	runs := []sim.Result{
		simResult("p", 20, 18, 100, time.Second, 2*time.Second),
		simResult("p", 20, 10, 120),
		simResult("p", 20, 20, 80, 3*time.Second),
	}
	cases := []struct {
		expr     string
		measured string
		runs     string
		pass     bool
	}{
		{"completed >= 18", "18", "seed 5", true},
		{"completed > 18", "18", "seed 5", false},
		{"mean(completed) >= 16", "16", "seeds 5..7", true},
		{"min(completed) >= 11", "10", "seeds 5..7", false},
		{"max(attempts) <= 120", "120", "seeds 5..7", true},
		{"median(attempts) == 100", "100", "seeds 5..7", true},
		{"amplification <= 5", "5", "seed 5", true},
		{"latency_ms.p99 <= 2000", "2000", "seed 5", true},
		// One run completed nothing: the statistic is over the other two.
		{"max(latency_ms.p99) <= 2500", "3000", "seeds 5..7 (1 without a value)", false},
	}
	for _, c := range cases {
		e, err := scenarios.ParseExpectation(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		r := Evaluate(e, "p", 5, series(runs, e.Metric))
		if r.MeasuredText() != c.measured || r.RunsText() != c.runs || r.Pass != c.pass {
			t.Errorf("%s: measured %s over %s, pass %v; want %s over %s, pass %v", c.expr,
				r.MeasuredText(), r.RunsText(), r.Pass, c.measured, c.runs, c.pass)
		}
		if !r.Pass && !strings.Contains(r.Explain(), c.measured) {
			t.Errorf("%s: explanation %q does not give the measured value", c.expr, r.Explain())
		}
	}
	// A metric with no value at all fails, whatever the bound.
	e, _ := scenarios.ParseExpectation("latency_ms.p50 >= 0")
	r := Evaluate(e, "p", 1, series(runs[1:2], e.Metric))
	if r.Pass || r.HasValue || !strings.Contains(r.Explain(), "no value") || !strings.Contains(r.Explain(), "(nothing completed)") {
		t.Errorf("latency of a run that completed nothing: %+v, %q", r, r.Explain())
	}
	// A time to recover is missing for another reason.
	e, _ = scenarios.ParseExpectation("recovery.time_to_recover_ms <= 1000")
	r = Evaluate(e, "p", 1, []float64{math.NaN()})
	if r.Pass || !strings.Contains(r.Explain(), "(it never recovered)") {
		t.Errorf("a run that never recovered: %q", r.Explain())
	}
}

func encode(t testing.TB, doc report.Document) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadBaseline(t *testing.T) {
	doc := report.Document{Schema: report.SingleSeedSchema, Scenario: "s", Seed: 3, Results: []report.PolicyResult{result("a", 20, 18, 100, time.Second), result("b", 20, 0, 160)}}
	data := encode(t, doc)
	got, err := ReadBaseline("base.json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(t, *got), data) {
		t.Errorf("read back differently:\n%s", encode(t, *got))
	}

	bad := []struct{ name, data, msg string }{
		{"empty", "", "not a single-seed JSON report"},
		{"not json", "scenario: s", "not a single-seed JSON report"},
		{"array", `[{"scenario": "s"}]`, "not a single-seed JSON report"},
		{"multi-seed", `{"scenario": "s", "seed": 1, "seeds": 100, "results": [{"policy": "a"}]}`, `missing field "clients"`},
		{"unknown field", strings.Replace(string(data), `"seed": 3,`, `"seed": 3, "first_seed": 1,`, 1), `unknown field "first_seed"`},
		{"multi-seed report", `{"schema": "retrysim/multi-seed/v1", "scenario": "s", "first_seed": 1, "seeds": 50, "policies": []}`, `this is a "retrysim/multi-seed/v1" report, not a single-seed one`},
		{"no scenario", `{"seed": 1, "results": []}`, `missing field "scenario"`},
		{"no seed", `{"scenario": "s", "results": []}`, `missing field "seed"`},
		{"no results", `{"scenario": "s", "seed": 1, "results": []}`, "no results"},
		{"missing metric", strings.Replace(string(data), `"completed": 18,`, ``, 1), `results[0]: missing field "completed"`},
		{"wrong type", strings.Replace(string(data), `"completed": 18`, `"completed": "18"`, 1), "line 9"},
		{"trailing", string(data) + "{}", "after top-level value"},
		{"twice", strings.Replace(string(data), `"policy": "b"`, `"policy": "a"`, 1), "appears twice"},
		// Impossible values, refused as shard files refuse them.
		{"negative count", strings.Replace(string(data), `"completed": 18`, `"completed": -3.5`, 1), "results[0] (a): completed on seed 3: -3.5 is not a finite number ≥ 0"},
		{"fractional count", strings.Replace(string(data), `"attempts": 100`, `"attempts": 99.5`, 1), "results[0] (a): attempts on seed 3: 99.5 is not a count (a whole number from 0 to 2^53)"},
		{"huge count", strings.Replace(string(data), `"completed": 18`, `"completed": 1e308`, 1), "completed on seed 3: 1e+308 is not a count"},
		{"missing count", strings.Replace(string(data), `"completed": 18`, `"completed": null`, 1), "completed on seed 3: null (missing), but the metric always has a value"},
		{"negative ratio", strings.Replace(string(data), `"amplification": 5`, `"amplification": -5`, 1), "amplification on seed 3: -5 is not a finite number ≥ 0"},
		{"share above 1", strings.Replace(string(data), `"goodput_share": 0.9`, `"goodput_share": 1.9`, 1), "goodput_share on seed 3: 1.9 is not a share"},
		{"negative time", strings.Replace(string(data), `"p99": 1000`, `"p99": -1000`, 1), "latency_ms.p99 on seed 3: -1000 is not a finite number ≥ 0"},
	}
	for _, b := range bad {
		_, err := ReadBaseline("base.json", strings.NewReader(b.data))
		if err == nil || !strings.Contains(err.Error(), b.msg) || !strings.HasPrefix(err.Error(), "base.json: ") {
			t.Errorf("%s: error %v, want base.json: …%s…", b.name, err, b.msg)
		}
	}
}

func TestParseTolerance(t *testing.T) {
	for in, want := range map[string]float64{"5%": 0.05, "0.5%": 0.005, "0": 0, "0%": 0, "100%": 1} {
		if got, err := ParseTolerance(in); err != nil || got != want {
			t.Errorf("ParseTolerance(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"5", "0.05", "-5%", "five%", "%", "2000%"} {
		if _, err := ParseTolerance(in); err == nil {
			t.Errorf("ParseTolerance(%q) succeeded", in)
		}
	}
}

func findChange(cs []Change, policy, metric string) *Change {
	for i := range cs {
		if cs[i].Policy == policy && cs[i].Metric == metric {
			return &cs[i]
		}
	}
	return nil
}

func TestCompareBaseline(t *testing.T) {
	base := report.Document{Scenario: "s", Seed: 1, Results: []report.PolicyResult{
		result("a", 20, 18, 100, time.Second, 2*time.Second),
		result("b", 20, 20, 40, time.Second),
		result("gone", 20, 20, 20, time.Second),
	}}
	now := report.Document{Scenario: "s", Seed: 1, Results: []report.PolicyResult{
		result("a", 20, 12, 104, time.Second, 4*time.Second), // fewer completions, 4% more attempts, slower
		result("b", 20, 20, 30, time.Second),                 // fewer attempts: better
		result("new", 20, 0, 160),
	}}
	cs := CompareBaseline("base.json", &base, &now, Tolerances{Default: 0.05})
	check := func(policy, metric string, worse, fail bool, explain string) {
		t.Helper()
		c := findChange(cs, policy, metric)
		if c == nil {
			t.Fatalf("no change for %s/%s", policy, metric)
		}
		if c.Worse != worse || c.Fail != fail || !strings.Contains(c.Explain(), explain) {
			t.Errorf("%s/%s: worse %v fail %v %q; want worse %v fail %v, %q", policy, metric, c.Worse, c.Fail, c.Explain(), worse, fail, explain)
		}
	}
	check("a", "completed", true, true, "completed fell from 18 to 12 (-6, -33.3%), worse beyond the 5% tolerance (higher is better)")
	check("a", "attempts", true, false, "attempts rose from 100 to 104 (+4, +4.0%), worse but within the 5% tolerance")
	check("a", "gave_up", true, true, "gave_up rose from 2 to 8")
	check("a", "latency_ms.p99", true, true, "latency_ms.p99 rose from 2000 to 4000")
	check("a", "latency_ms.p50", false, false, "unchanged at 1000")
	check("b", "attempts", false, false, "attempts fell from 40 to 30 (-10, -25.0%), better")
	check("gone", "", true, true, "policy gone is in the baseline but no longer in scenario s")
	if findChange(cs, "new", "completed") != nil {
		t.Error("a policy new since the baseline was compared")
	}
	// With no tolerance, the 4% rise in attempts fails too.
	if c := findChange(CompareBaseline("base.json", &base, &now, Tolerances{}), "a", "attempts"); !c.Fail {
		t.Error("a 4% rise passed with no tolerance")
	}
	// A latency that disappears (nothing completes) fails.
	none := report.Document{Scenario: "s", Seed: 1, Results: []report.PolicyResult{result("a", 20, 0, 160)}}
	if c := findChange(CompareBaseline("base.json", &base, &none, Tolerances{Default: 0.05}), "a", "latency_ms.p50"); !c.Fail || !strings.Contains(c.Explain(), "now has no value") {
		t.Errorf("vanished latency: %+v %q", c, c.Explain())
	}
	// The same document against itself: nothing changes.
	for _, c := range CompareBaseline("base.json", &base, &base, Tolerances{}) {
		if c.Changed() || c.Fail {
			t.Errorf("%s/%s changed against itself", c.Policy, c.Metric)
		}
	}
}

func TestWriteCheckAndJUnit(t *testing.T) {
	e1, _ := scenarios.ParseExpectation("completed >= 18")
	e2, _ := scenarios.ParseExpectation("mean(attempts) <= 90")
	sims := []sim.Result{simResult("a", 20, 18, 100, time.Second), simResult("a", 20, 19, 90, time.Second)}
	runs := []report.PolicyResult{result("a", 20, 18, 100, time.Second), result("a", 20, 19, 90, time.Second)}
	rep := Report{}
	for _, e := range []scenarios.Expectation{e1, e2} {
		r := Evaluate(e, "a", 1, series(sims, e.Metric))
		r.Scenario, r.Source = "s", "f.yaml:7"
		rep.Checks = append(rep.Checks, r)
	}
	base := report.Document{Scenario: "s", Seed: 1, Results: []report.PolicyResult{result("a", 20, 19, 90, time.Second)}}
	now := report.Document{Scenario: "s", Seed: 1, Results: runs[:1]}
	rep.Baseline = CompareBaseline("base.json", &base, &now, Tolerances{Default: 0.05})
	if e, b := rep.Failures(); e != 1 || b != 8 {
		t.Fatalf("failures = %d, %d; want 1 expectation (mean 95 > 90) and 8 metrics (completed, attempts, retries, gave_up, amplification, attempts_per_completion, goodput_share, gave_up_share)", e, b)
	}
	for _, format := range Formats() {
		var buf bytes.Buffer
		if err := WriteCheck(&buf, format, &rep); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, want := range []string{"mean(attempts) <= 90", "95", "seeds 1..2", "f.yaml:7", "FAIL",
			"completed fell from 19 to 18", "1 of 2 expectations hold; 8 of 19 baseline metrics worse beyond tolerance: FAIL"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", format, want, out)
			}
		}
	}
	if err := WriteCheck(&bytes.Buffer{}, "json", &rep); err == nil {
		t.Error("unknown format accepted")
	}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, &rep); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("JUnit output does not parse: %v\n%s", err, buf.String())
	}
	if got.Tests != 2+19 || got.Failures != 1+8 || len(got.Suites) != 2 {
		t.Errorf("JUnit: %d tests, %d failures, %d suites; want 21, 9, 2", got.Tests, got.Failures, len(got.Suites))
	}
}

// A bound copied from the report (four decimals) must hold: the measured
// value is compared as printed.
func TestEvaluateComparesThePrintedValue(t *testing.T) {
	third := 5266.0 + 2.0/3.0 // 5266.6666…, printed 5266.6667
	e, err := scenarios.ParseExpectation("latency_ms.p99 == 5266.6667")
	if err != nil {
		t.Fatal(err)
	}
	r := Evaluate(e, "p", 1, []float64{third})
	if !r.Pass || r.MeasuredText() != "5266.6667" {
		t.Fatalf("pass %v, measured %s", r.Pass, r.MeasuredText())
	}
}

// A baseline recorded before the metrics that state the trade were added
// still reads: they are compared when the baseline has them.
func TestReadBaselineBeforeTradeMetrics(t *testing.T) {
	old := `{"scenario": "s", "seed": 1, "results": [{"policy": "a", "clients": 20, "completed": 18, "attempts": 102,
	  "retries": 82, "gave_up": 2, "gave_up_by": {"attempts": 0, "deadline": 2, "queue_full": 0, "terminal": 0},
	  "amplification": 5.1, "latency_ms": {"p50": 8000, "p95": 16100, "p99": 16100}, "last_completion_ms": 16100}]}`
	doc, err := ReadBaseline("old.json", strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(doc.Results[0].Metrics, metrics.AttemptsPerCompletion) || !slices.Contains(doc.Results[0].Metrics, metrics.P99) {
		t.Errorf("metrics read: %v", doc.Results[0].Metrics)
	}
	// Without a metric that was always there, it is still an error.
	if _, err := ReadBaseline("old.json", strings.NewReader(strings.Replace(old, `"p95": 16100, `, "", 1))); err == nil || !strings.Contains(err.Error(), "latency_ms.p95") {
		t.Errorf("a baseline without latency_ms.p95: %v", err)
	}
}

// A single-seed report names its schema; reports without one (written
// before it) read the same.
func TestSingleSeedSchema(t *testing.T) {
	base := report.Document{Schema: report.SingleSeedSchema, Scenario: "s", Seed: 1, Results: []report.PolicyResult{result("a", 20, 19, 90, time.Second)}}
	data, err := json.Marshal(base)
	if err != nil || !strings.HasPrefix(string(data), `{"schema":"retrysim/single-seed/v1",`) {
		t.Fatalf("%s %v", data, err)
	}
	if _, err := ReadBaseline("b.json", bytes.NewReader(data)); err != nil {
		t.Errorf("with the schema: %v", err)
	}
	other := strings.Replace(string(data), "single-seed/v1", "single-seed/v9", 1)
	if _, err := ReadBaseline("b.json", strings.NewReader(other)); err == nil || !strings.Contains(err.Error(), `"retrysim/single-seed/v9"`) {
		t.Errorf("another schema: %v", err)
	}
}

// A single-seed baseline applies the survivor rule too: a quicker p99 of a
// policy that now completes fewer is not better but not comparable (and
// does not fail); a slower one while completing fewer is worse.
func TestCompareBaselineSurvivorRule(t *testing.T) {
	base := report.Document{Scenario: "s", Seed: 1, Results: []report.PolicyResult{result("a", 20, 18, 100, time.Second, 5*time.Second)}}
	quick := report.Document{Scenario: "s", Seed: 1, Results: []report.PolicyResult{result("a", 20, 12, 100, time.Second)}}
	c := findChange(CompareBaseline("base.json", &base, &quick, Tolerances{Default: 0.05}), "a", "latency_ms.p99")
	if c.NotComparable == "" || c.Improved || c.Fail || !strings.Contains(c.Explain(), "not comparable: over completed operations only, and the policy now completes 12 (was 18)") {
		t.Errorf("quicker p99 completing fewer: %+v %q", c, c.Explain())
	}
	rep := Report{Baseline: CompareBaseline("base.json", &base, &quick, Tolerances{Default: 0.05})}
	var buf bytes.Buffer
	if err := WriteCheck(&buf, report.Table, &rep); err != nil || !strings.Contains(buf.String(), "| not comparable ") {
		t.Errorf("table: %v\n%s", err, buf.String())
	}
	slow := report.Document{Scenario: "s", Seed: 1, Results: []report.PolicyResult{result("a", 20, 12, 100, 9*time.Second)}}
	if c := findChange(CompareBaseline("base.json", &base, &slow, Tolerances{Default: 0.05}), "a", "latency_ms.p99"); c.NotComparable != "" || !c.Fail {
		t.Errorf("slower p99 completing fewer: %+v, want a failure", c)
	}
}

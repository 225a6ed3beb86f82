package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{4, 1, 3, 2, 5})
	if s.N != 5 || s.Mean != 3 || s.Median != 3 || s.Min != 1 || s.Max != 5 {
		t.Fatalf("summary %+v", s)
	}
	// Sample sd of 1..5 is sqrt(2.5); t(0.975, 4) = 2.776.
	half := 2.776 * math.Sqrt(2.5) / math.Sqrt(5)
	if math.Abs(s.StdDev-math.Sqrt(2.5)) > 1e-12 || math.Abs(s.CIHigh-(3+half)) > 1e-9 || math.Abs(s.CILow-(3-half)) > 1e-9 {
		t.Fatalf("sd %v CI [%v, %v], want sd %v half-width %v", s.StdDev, s.CILow, s.CIHigh, math.Sqrt(2.5), half)
	}
	// Type-7 quantiles: p5 of 1..5 is 1 + 0.05·4 = 1.2.
	if math.Abs(s.P5-1.2) > 1e-12 || math.Abs(s.P95-4.8) > 1e-12 {
		t.Fatalf("p5 %v p95 %v, want 1.2 and 4.8", s.P5, s.P95)
	}
	if one := Summarize([]float64{7}); one.CILow != 7 || one.CIHigh != 7 || one.StdDev != 0 {
		t.Fatalf("single value: %+v", one)
	}
	if (Summarize(nil) != Summary{}) {
		t.Fatal("empty input gave a non-zero summary")
	}
}

func TestTQuantileIsContinuousPastTheTable(t *testing.T) {
	if got := tQuantile975(31); math.Abs(got-2.0395) > 2e-3 {
		t.Fatalf("t(31) = %v, want about 2.0395", got)
	}
	if got := tQuantile975(1000); math.Abs(got-1.9623) > 1e-3 {
		t.Fatalf("t(1000) = %v, want about 1.9623", got)
	}
}

func TestMetricsRegistry(t *testing.T) {
	r := sim.Result{Policy: "p", Clients: 4, Completed: 3, Attempts: 10, Retries: 6, GaveUp: 1,
		Latencies: []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, LastCompletion: 3 * time.Second}
	r.GaveUpBy[policies.StopDeadline] = 1
	row := Row(&r)
	want := map[string]float64{"completed": 3, "attempts": 10, "amplification": 2.5, "gave_up_by.deadline": 1, "latency_ms.p50": 2000, "last_completion_ms": 3000}
	for name, v := range want {
		m, ok := LookupMetric(name)
		if !ok {
			t.Fatalf("no metric %q", name)
		}
		if got, ok := m.Value(row); !ok || got != v {
			t.Errorf("%s = %v (ok %v), want %v", name, got, ok, v)
		}
	}
	if m, _ := LookupMetric("completed"); m.Better != HigherIsBetter {
		t.Error("more completions must be better")
	}
	if m, _ := LookupMetric("attempts"); m.Better != LowerIsBetter {
		t.Error("fewer attempts must be better")
	}
	empty := Row(&sim.Result{Clients: 1, GaveUp: 1})
	if m, _ := LookupMetric("latency_ms.p99"); func() bool { _, ok := m.Value(empty); return ok }() {
		t.Error("latency of a run with no completions exists")
	}
	if _, ok := LookupMetric("bogus"); ok {
		t.Error("found a metric that does not exist")
	}
}

func TestCSVQuotesAwkwardNames(t *testing.T) {
	c := Comparison{Scenario: `odd "name"`, Seed: 3, Results: []sim.Result{{Policy: "a,b", Clients: 1}}}
	var b bytes.Buffer
	if err := Write(&b, "csv", &c); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], `"odd ""name""",3,"a,b",1,0,`) {
		t.Fatalf("csv:\n%s", b.String())
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	if err := Write(&bytes.Buffer{}, "yaml", &Comparison{}); err == nil || !strings.Contains(err.Error(), "table, markdown, csv, json") {
		t.Fatalf("err = %v", err)
	}
}

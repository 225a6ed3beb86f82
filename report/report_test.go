package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

func TestCSVQuotesAwkwardNames(t *testing.T) {
	c := Comparison{Scenario: `odd "name"`, Seed: 3, Results: []sim.Result{{Policy: "a,b", Clients: 1}}}
	var b bytes.Buffer
	if err := Write(&b, CSV, &c); err != nil {
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

// The JSON row nests metrics by their names, rounds as each metric says and
// writes null for a metric without a value.
func TestRowJSON(t *testing.T) {
	r := sim.Result{Policy: "p", Clients: 3, Completed: 2, Attempts: 10, Retries: 7, GaveUp: 1,
		Latencies: []time.Duration{time.Second, 1500 * time.Millisecond}, LastCompletion: 1500 * time.Millisecond,
		GiveUps: []time.Duration{2 * time.Second}}
	r.GaveUpBy[policies.StopDeadline] = 1
	got, err := json.Marshal(Row(&r, metrics.Default()))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"policy":"p","clients":3,"completed":2,"attempts":10,"retries":7,"gave_up":1,` +
		`"gave_up_by":{"attempts":0,"deadline":1,"queue_full":0,"terminal":0},"amplification":3.3333,` +
		`"attempts_per_completion":5,"goodput_share":0.6667,"gave_up_share":0.3333,"give_up_ms":{"p50":2000,"p99":2000},` +
		`"latency_ms":{"mean":1250,"p50":1000,"p95":1500,"p99":1500},"last_completion_ms":1500}`
	if string(got) != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
	none, _ := json.Marshal(Row(&sim.Result{Policy: "q", Clients: 1, GaveUp: 1}, []*metrics.Metric{metrics.P99, metrics.Fallbacks}))
	if string(none) != `{"policy":"q","clients":1,"latency_ms":{"p99":null},"fallbacks":0}` {
		t.Errorf("JSON of a run without completions: %s", none)
	}
}

// The table's columns come from the metric set: give-up reasons share one
// column, and an optional metric adds one.
func TestColumnsAndCells(t *testing.T) {
	cols := Columns(metrics.Default())
	want := "policy clients completed attempts retries gave_up gave_up_by amplification attempts_per_completion goodput_share gave_up_share give_up_p50_ms give_up_p99_ms mean_ms p50_ms p95_ms p99_ms last_completion_ms"
	if strings.Join(cols, " ") != want {
		t.Fatalf("columns %v", cols)
	}
	// The single-run table leaves the detail metrics to the JSON and CSV.
	want = "policy clients completed attempts retries gave_up gave_up_by amplification p50_ms p95_ms p99_ms last_completion_ms"
	if got := strings.Join(Columns(TableMetrics(metrics.Default())), " "); got != want {
		t.Fatalf("table columns %v", got)
	}
	set := metrics.All()
	r := sim.Result{Policy: "p", Clients: 4, Attempts: 9, GaveUp: 4, Fallbacks: 3}
	r.GaveUpBy[policies.StopAttempts], r.GaveUpBy[policies.StopQueueFull] = 3, 1
	cells := Cells(Row(&r, set), "-")
	if len(cells) != len(Columns(set)) || cells[6] != "attempts=3 queue_full=1" || cells[7] != "3" || cells[8] != "2.25" || cells[9] != "-" {
		t.Fatalf("cells %q of columns %q", cells, Columns(set))
	}
}

// The CSV is tidy: one column per metric, a give-up reason included, with
// a number (not "attempts=3") in each.
func TestCSVOneColumnPerMetric(t *testing.T) {
	r := sim.Result{Policy: "p", Clients: 4, Attempts: 9, GaveUp: 4}
	r.GaveUpBy[policies.StopAttempts], r.GaveUpBy[policies.StopQueueFull] = 3, 1
	var b bytes.Buffer
	if err := Write(&b, CSV, &Comparison{Scenario: "s", Seed: 1, Results: []sim.Result{r}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	header, row := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
	if len(header) != len(row) || len(header) != 2+2+len(metrics.Default()) {
		t.Fatalf("%d columns, %d cells, %d metrics", len(header), len(row), len(metrics.Default()))
	}
	for i, h := range header {
		switch h {
		case "gave_up_by.attempts":
			if row[i] != "3" {
				t.Errorf("%s = %q", h, row[i])
			}
		case "gave_up_by.queue_full":
			if row[i] != "1" {
				t.Errorf("%s = %q", h, row[i])
			}
		case "gave_up_by":
			t.Error("a shared gave_up_by column")
		}
	}
}

package plot

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	gonum "gonum.org/v1/plot"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/runs"
)

func tickLabels(m gonum.Ticker, lo, hi float64) []string {
	var out []string
	for _, t := range m.Ticks(lo, hi) {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

func TestPlotNumber(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		prec int
		want string
	}{
		{0, 0, "0"}, {math.Copysign(0, -1), 0, "0"}, {-0.001, 1, "0.0"}, {-0.4, 0, "0"},
		{999, 0, "999"}, {1000, 0, "1,000"}, {2500000, 0, "2,500,000"}, {-12345.678, 2, "-12,345.68"},
		{0.25, 2, "0.25"}, {100000, 1, "100,000.0"},
	} {
		if got := plotNumber(tt.v, tt.prec); got != tt.want {
			t.Errorf("plotNumber(%v, %d) = %q, want %q", tt.v, tt.prec, got, tt.want)
		}
	}
}

func TestPlotDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 500 * time.Millisecond: "500ms", time.Second: "1s", 60 * time.Second: "1m",
		90 * time.Second: "1m30s", time.Hour: "1h", time.Hour + 30*time.Second: "1h30s",
		time.Hour + 2*time.Minute: "1h2m", 1500 * time.Millisecond: "1.5s",
	} {
		if got := plotDuration(d); got != want {
			t.Errorf("plotDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(plotDuration(d)); err != nil || back != d {
			t.Errorf("plotDuration(%v) = %q does not parse back (%v, %v)", d, plotDuration(d), back, err)
		}
	}
}

// Axes that start at zero, with a little padding below, show "0", not
// "-0"; large numbers have thousands separators.
func TestTickLabels(t *testing.T) {
	for _, r := range [][2]float64{{-120, 4120}, {-0.12, 4.12}, {-0.5, 10.5}} {
		labels := tickLabels(niceTicks{}, r[0], r[1])
		if slices.Contains(labels, "-0") || !slices.Contains(labels, "0") {
			t.Errorf("ticks over %v: %q, want a 0 and no -0", r, labels)
		}
	}
	labels := tickLabels(niceTicks{}, 0, 2.75e6)
	if !slices.Contains(labels, "2,500,000") || slices.Contains(labels, "2500000") {
		t.Errorf("ticks over 0–2.75e6: %q, want 2,500,000", labels)
	}
}

func TestAxisDurationUnit(t *testing.T) {
	for _, tt := range []struct {
		maxMS float64
		want  string
	}{{0, "ms"}, {900, "ms"}, {1000, "s"}, {30_000, "s"}, {179_000, "s"}, {300_000, "min"}, {4 * 3_600_000, "h"}} {
		if got := axisDurationUnit(tt.maxMS).name; got != tt.want {
			t.Errorf("axisDurationUnit(%v) = %s, want %s", tt.maxMS, got, tt.want)
		}
	}
}

// labelSweep has an outage axis of 0–30 s and a deadline axis of 30 s and
// 1 m, labelled as the sweep package labels them. Every point holds the same
// runs of overload-burst: only the labels are under test.
func labelSweep(t *testing.T) *runs.Sweep {
	t.Helper()
	s := scenariotest.Builtin(t, "overload-burst")
	sw := &runs.Sweep{Scenario: s.Name, FirstSeed: s.Seed, Seeds: 1,
		Axes: []runs.Axis{
			{Name: "outage", Title: "outage length", Unit: "ms", Labels: []string{"0s", "15s", "30s"}, Values: []float64{0, 15000, 30000}},
			{Name: "deadline", Title: "deadline", Unit: "ms", Labels: []string{"30s", "1m0s"}, Values: []float64{30000, 60000}},
		}}
	for _, p := range s.Policies {
		sw.Policies = append(sw.Policies, p.Name)
	}
	m, err := runs.Collect(context.Background(), s, s.Seed, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		for j := range 2 {
			sw.Points = append(sw.Points, runs.Point{Index: []int{i, j}, Runs: m})
		}
	}
	return sw
}

// Duration parameters are written as people write them and drawn in the
// unit their range suits: 0–30000 ms is 0–30 s.
func TestSweepPlotDurationLabels(t *testing.T) {
	figs, err := SweepFigures(labelSweep(t))
	if err != nil {
		t.Fatal(err)
	}
	fig := figs[0].Figure
	var titles []string
	for _, p := range fig.Panels {
		titles = append(titles, p.Title.Text)
	}
	if want := []string{"deadline = 30s", "deadline = 1m"}; !slices.Equal(titles, want) {
		t.Errorf("panel titles %q, want %q", titles, want)
	}
	p := fig.Panels[0]
	if p.X.Label.Text != "outage length (s)" {
		t.Errorf("x axis label %q, want %q", p.X.Label.Text, "outage length (s)")
	}
	labels := tickLabels(p.X.Tick.Marker, p.X.Min, p.X.Max)
	for _, want := range []string{"0", "10", "20", "30"} {
		if !slices.Contains(labels, want) {
			t.Errorf("x ticks %q lack %q", labels, want)
		}
	}
	if slices.Contains(labels, "-0") || slices.ContainsFunc(labels, func(l string) bool { return strings.Contains(l, "000") }) {
		t.Errorf("x ticks %q: want seconds and no -0", labels)
	}
}

// The timeline's panels share the y axis unless that would squash a panel:
// on long-outage, immediate's retry storm is twenty times gated's traffic,
// so every panel gets its own scale; panels of alike traffic share one.
func TestTimelineYScale(t *testing.T) {
	alike := plotData(t, "overload-burst", 1)
	for i := range alike.Timelines {
		t0 := alike.Timelines[0]
		alike.Timelines[i].Admitted, alike.Timelines[i].Rejected = t0.Admitted, t0.Rejected
	}
	for _, tt := range []struct {
		scenario string
		d        *runs.PlotData
		shared   bool
	}{
		{"long-outage", plotData(t, "long-outage", 1), false},
		{"overload-burst", plotData(t, "overload-burst", 1), false},
		{"overload-burst, every policy like the first", alike, true},
	} {
		d := tt.d
		fig, err := TimelineFigure(d)
		if err != nil {
			t.Fatal(err)
		}
		_, capPeak := capacitySteps(d.Server, d.Timelines[0].Bucket)
		var maxes []float64
		for i, p := range fig.Panels {
			maxes = append(maxes, p.Y.Max)
			peak := capPeak
			for j := range d.Timelines[i].Admitted {
				peak = max(peak, float64(d.Timelines[i].Admitted[j]+d.Timelines[i].Rejected[j]))
			}
			// A panel's own bars and capacity fill at least a quarter of it.
			if peak < p.Y.Max/4 {
				t.Errorf("%s, %s: peak %v on a y axis up to %v", tt.scenario, p.Title.Text, peak, p.Y.Max)
			}
		}
		shared := slices.Min(maxes) == slices.Max(maxes)
		if shared != tt.shared {
			t.Errorf("%s: y maxima %v, want shared=%v", tt.scenario, maxes, tt.shared)
		}
		if says := strings.Contains(fig.Title, "y scale per panel"); says == tt.shared {
			t.Errorf("%s: title %q should say whether y scales differ", tt.scenario, fig.Title)
		}
	}
}

// Metrics in milliseconds are drawn in the unit their range suits:
// overload-burst's p99 of about 10,000 ms is drawn as 10 s.
func TestDurationMetricAxes(t *testing.T) {
	dist, err := DistributionFigure(plotData(t, "overload-burst", 4))
	if err != nil {
		t.Fatal(err)
	}
	figs, err := SweepFigures(labelSweep(t))
	if err != nil {
		t.Fatal(err)
	}
	var sweepP99 *Figure
	for _, f := range figs {
		if f.Name == "sweep-latency_ms-p99" {
			sweepP99 = f.Figure
		}
	}
	for name, p := range map[string]*gonum.Plot{"distributions": dist.Panels[4], "sweep": sweepP99.Panels[0]} {
		if !strings.HasSuffix(p.Y.Label.Text, " (s)") {
			t.Errorf("%s: p99 axis %q, want seconds", name, p.Y.Label.Text)
		}
		if p.Y.Max > 60 {
			t.Errorf("%s: p99 axis up to %v, want seconds", name, p.Y.Max)
		}
	}
}

// Large counts have thousands separators wherever plots print them.
func TestLargeCountLabels(t *testing.T) {
	d := plotData(t, "overload-burst", 1)
	oc, err := OutcomesFigure(d)
	if err != nil {
		t.Fatal(err)
	}
	if got := oc.Panels[0].Y.Label.Text; got != "operations (of 20)" {
		t.Errorf("outcomes y label %q", got)
	}
	// An open loop's runs do not all have its expected arrivals.
	open, err := OutcomesFigure(plotData(t, "metastable-retry-storm", 1))
	if err != nil {
		t.Fatal(err)
	}
	if got := open.Panels[0].Y.Label.Text; got != "operations" {
		t.Errorf("open-loop outcomes y label %q", got)
	}
	if got := plotCount(2_500_000); got != "2,500,000" {
		t.Errorf("plotCount(2500000) = %q", got)
	}
}

// The CDF counts the operations each policy ran: an agent session repeats
// a failed call, so a policy's runs hold more operations than sessions ×
// turns, and fewer than the most the workload may start (which the CDF
// used to divide by, ending the agent CLI's curve near 80%).
func TestCDFCountsTheOperationsRun(t *testing.T) {
	d := plotData(t, "bad-day-agents", 2)
	cdf, err := CDFFigure(d)
	if err != nil {
		t.Fatal(err)
	}
	p := slices.Index(d.Runs.Policies, "agent-cli")
	completed, _ := d.Runs.Values(p, metrics.Completed)
	gaveUp, _ := d.Runs.Values(p, metrics.GaveUp)
	share := (completed[0] + completed[1]) / (completed[0] + completed[1] + gaveUp[0] + gaveUp[1])
	want := fmt.Sprintf("agent-cli (%.0f%% completed)", 100*share)
	svg := string(renderAll(t, d, SVG)["cdf"])
	if share < 0.95 || !strings.Contains(svg, want) || strings.Contains(cdf.Title, "operations each") {
		t.Errorf("CDF title %q; legend has %q: %v", cdf.Title, want, strings.Contains(svg, want))
	}
	burst, err := CDFFigure(plotData(t, "overload-burst", 2))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(burst.Title, "40 operations each") {
		t.Errorf("burst CDF title %q", burst.Title)
	}
}

// A sweep of a scenario that reports optional headline metrics (a queue's
// wasted work, the recovery after its incident) plots them too, after the
// six every scenario has.
func TestSweepPlotsOptionalHeadlineMetrics(t *testing.T) {
	s := scenariotest.Builtin(t, "metastable-retry-storm")
	m, err := runs.Collect(context.Background(), s, s.Seed, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	sw := &runs.Sweep{Scenario: s.Name, FirstSeed: s.Seed, Seeds: 1,
		Axes:   []runs.Axis{{Name: "rate", Labels: []string{"70"}, Values: []float64{70}}},
		Points: []runs.Point{{Index: []int{0}, Runs: m}}}
	for _, p := range s.Policies {
		sw.Policies = append(sw.Policies, p.Name)
	}
	figs, err := SweepFigures(sw)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	want := []string{"sweep-completed", "sweep-attempts", "sweep-gave_up", "sweep-amplification", "sweep-latency_ms-p99", "sweep-last_completion_ms",
		"sweep-server-wasted", "sweep-recovery-goodput_after", "sweep-recovery-recovered", "sweep-recovery-time_to_recover_ms"}
	if !slices.Equal(names, want) {
		t.Errorf("figures %v, want %v", names, want)
	}
}

// The give-ups panel stacks each policy's give-ups by reason, with a legend
// of the reasons that occur: in the reference burst, immediate retries run
// out of attempts and capped exponential out of time; nothing gives up for
// a budget there.
func TestGaveUpPanelShowsReasons(t *testing.T) {
	d := plotData(t, "overload-burst", 2)
	fig := &Figure{Title: "t", Cols: 1}
	p, err := gaveUpPanel(fig, d, "Gave up, by reason", "operations")
	if err != nil {
		t.Fatal(err)
	}
	fig.Panels = []*gonum.Plot{p}
	var buf bytes.Buffer
	if err := fig.Write(&buf, SVG); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{">gave up: attempts<", ">gave up: deadline<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("legend lacks %s", want)
		}
	}
	// The reasons are hatched (white lines), a channel besides colour.
	if !strings.Contains(svg, "stroke:#FFFFFF;stroke-opacity:0.8") {
		t.Error("the give-up reasons are not hatched")
	}
	for _, absent := range []string{">gave up: budget<", ">gave up: terminal<"} {
		if strings.Contains(svg, absent) {
			t.Errorf("legend has %s, which no policy gave up for", absent)
		}
	}
}

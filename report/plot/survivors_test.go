package plot

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/runs"
)

// In controls-outage the sre preset completes almost nothing and has the
// lowest amplification: its bars are hollow, the figure says what hollow
// means, and the policies that complete (nearly) everything are solid.
func TestLowCompletionIsHollow(t *testing.T) {
	d := plotData(t, "controls-outage", 1)
	s := survivorsOf(d)
	for i, name := range d.Runs.Policies {
		switch name {
		case "sre":
			if !s.low[i] || s.share[i] > 0.05 {
				t.Errorf("sre: share %.3f, low %v; want a low share, hollow", s.share[i], s.low[i])
			}
		case "full-jitter":
			if s.low[i] {
				t.Errorf("full-jitter completes everything and is hollow (share %.3f)", s.share[i])
			}
		}
	}
	fig, err := OutcomesFigure(d)
	if err != nil {
		t.Fatal(err)
	}
	if fig.Note != hollowNote() {
		t.Errorf("outcomes note %q", fig.Note)
	}
	var buf bytes.Buffer
	if err := fig.Write(&buf, SVG); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "hollow: completes under 95%") || !strings.Contains(buf.String(), "stroke-dasharray") {
		t.Error("the outcomes SVG has no hollow bars or no note")
	}
}

// A box plot over completed operations only says above each box what share
// of the policy's operations it describes.
func TestCompletedOnlyPanelsShowShare(t *testing.T) {
	d := plotData(t, "metastable-retry-storm", 6)
	fig, err := DistributionFigure(d)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fig.Write(&buf, SVG); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{"p99 completion time (completed only)", "Last completion (completed only)", "% done", hollowNote()} {
		if !strings.Contains(svg, want) {
			t.Errorf("distributions SVG lacks %q", want)
		}
	}
	// Two panels over completed operations, one label per policy each.
	if got, want := strings.Count(svg, "% done"), 2*len(d.Runs.Policies); got != want {
		t.Errorf("%d share labels, want %d", got, want)
	}
}

func TestShareWords(t *testing.T) {
	for share, want := range map[float64]string{0: "0% done", 1: "100% done", 0.015: "1.5% done", 0.42: "42% done", 0.9995: ">99.9% done", 0.995: "99.5% done", 0.0004: "<0.1% done"} {
		if got := shareWords(share); got != want {
			t.Errorf("shareWords(%v) = %q, want %q", share, got, want)
		}
	}
}

// A sweep keeps a policy without a value visible (a cross on the axis) and
// rings the points of a policy that completes too little there; its
// legend is outside the panels' data.
func TestSweepMarksSurvivorsAndMissing(t *testing.T) {
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
	notes := map[string]string{}
	for _, f := range figs {
		notes[f.Name] = f.Figure.Note
		if err := legendOutsideData(f.Figure); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
	// immediate never recovers: no time to recover, a cross.
	if got := notes["sweep-recovery-time_to_recover_ms"]; !strings.Contains(got, "×: no value (it never recovered)") {
		t.Errorf("time to recover: note %q", got)
	}
	if got := notes["sweep-latency_ms-p99"]; !strings.Contains(got, "ring: completes under 95%") {
		t.Errorf("p99: note %q", got)
	}
}

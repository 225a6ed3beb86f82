package plot

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
)

// Every figure of every built-in scenario (but the giant ones) renders, at
// the size docs/plots.md documents (900×600 pt; the timeline and load
// figures 200 pt per row of two panels when that is taller), and gives
// each policy the same colour in every figure that colours policies.
func TestBuiltinFigures(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	size := regexp.MustCompile(`<svg width="([0-9.]+)pt" height="([0-9.]+)pt"`)
	checked, noCapacity := 0, 0
	for _, s := range f.Scenarios {
		if s.Operations() > 20_000 || (racetest.Enabled && s.Operations() > 500) {
			continue
		}
		d, err := runs.CollectPlotData(context.Background(), s, s.Seed, 2, runs.DefaultBucket(s.Server), nil)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		svgs := renderAll(t, d, SVG)
		if len(svgs) != 5 {
			t.Errorf("%s: %d figures, want 5", s.Name, len(svgs))
		}
		rows := (len(s.Policies) + 1) / 2
		for name, svg := range svgs {
			m := size.FindSubmatch(svg)
			if m == nil {
				t.Fatalf("%s %s: no size", s.Name, name)
			}
			w, _ := strconv.ParseFloat(string(m[1]), 64)
			h, _ := strconv.ParseFloat(string(m[2]), 64)
			wantH := 600.0
			if name == "timeline" || name == "load" {
				wantH = max(600, 200*float64(rows))
			}
			if w != 900 || h != wantH {
				t.Errorf("%s %s: %v×%v pt, want 900×%v", s.Name, name, w, h, wantH)
			}
		}
		for _, name := range []string{"cdf", "outcomes", "distributions"} {
			svg := string(svgs[name])
			for i, p := range s.Policies {
				c := PolicyColor(i)
				hex := fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B)
				if !strings.Contains(svg, hex) {
					t.Errorf("%s %s: no %s for policy %s", s.Name, name, hex, p.Name)
				}
			}
		}
		// A server without a capacity has none in its titles.
		if steps, _ := capacitySteps(d.Server, d.Timelines[0].Bucket); len(steps) == 0 {
			fig, err := LoadFigure(d)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(fig.Title, "capacity") {
				t.Errorf("%s: load title %q names a capacity the server does not have", s.Name, fig.Title)
			}
			noCapacity++
		}
		checked++
	}
	if noCapacity == 0 {
		t.Error("no built-in scenario without a capacity was checked")
	}
	if checked < 5 {
		t.Errorf("only %d built-in scenarios checked", checked)
	}
}

// When a policy's timeline ends before a quarter of the longest, each
// panel gets its own x range, and the title says so: immediate retries in
// overload-burst are over in 2 s, capped exponential runs to 17 s.
func TestTimelineXRangePerPanel(t *testing.T) {
	d := plotData(t, "overload-burst", 1)
	for _, fig := range []func(*runs.PlotData) (*Figure, error){TimelineFigure, LoadFigure} {
		f, err := fig(d)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(f.Title, "x range per panel") {
			t.Errorf("title %q", f.Title)
		}
		if imm, capped := f.Panels[0].X.Max, f.Panels[1].X.Max; !(imm < capped/4) {
			t.Errorf("immediate's x range ends at %v, capped exponential's at %v", imm, capped)
		}
	}
}

// The timeline's legend (three lines at the top of each panel) sits above
// the bars: every panel leaves a third of its peak free above it.
func TestTimelineLegendAboveData(t *testing.T) {
	d := plotData(t, "overload-burst", 1)
	f, err := TimelineFigure(d)
	if err != nil {
		t.Fatal(err)
	}
	for i, tl := range d.Timelines {
		peak := 0
		for b := range tl.Buckets() {
			peak = max(peak, tl.Admitted[b]+tl.Rejected[b])
		}
		if f.Panels[i].Y.Max < 1.3*float64(peak) {
			t.Errorf("%s: y axis to %v for a peak of %d: the legend covers the bars", tl.Policy, f.Panels[i].Y.Max, peak)
		}
	}
}

// The incident's span is shaded in the timeline and load figures of a
// scenario that has one, and named in their legends; not elsewhere.
func TestIncidentShaded(t *testing.T) {
	for scenario, want := range map[string]bool{"metastable-retry-storm": true, "overload-burst": false} {
		d := plotData(t, scenario, 1)
		for _, fig := range []func(*runs.PlotData) (*Figure, error){TimelineFigure, LoadFigure} {
			f, err := fig(d)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := f.Write(&buf, SVG); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(buf.String(), ">incident<"); got != want {
				t.Errorf("%s %q: incident in the legend %v, want %v", scenario, f.Title, got, want)
			}
		}
	}
}

package plot

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// Every figure of every built-in scenario (but the giant ones) renders, at
// the size docs/plots.md documents (900×600 pt; the timeline and load
// figures 200 pt per row of two panels when that is taller, as the members
// figure of a pool, which only a pool has), and gives
// each policy the same colour in every figure that colours policies; every
// figure's legend is outside its panels' data (legendOutsideData); and no
// figure, of any kind, draws a string over another or off its edge (bar
// labels, survivor shares, ticks, axis labels, titles, legends, notes:
// labelCollisions; issue 40: "999.83" and "1,000.00" ran together).
func TestBuiltinFigures(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	size := regexp.MustCompile(`<svg width="([0-9.]+)pt" height="([0-9.]+)pt"`)
	checked, noCapacity, pools := 0, 0, 0
	kinds := map[string]int{}
	for _, s := range f.Scenarios {
		if s.Operations() > 20_000 || (racetest.Enabled && s.Operations() > 500) {
			continue
		}
		d, err := runs.CollectPlotData(context.Background(), s, s.Seed, 2, runs.DefaultBucket(s.Server), nil)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		figs, err := Figures(d)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		for _, f := range figs {
			if err := legendOutsideData(f.Figure); err != nil {
				t.Errorf("%s %s: %v", s.Name, f.Name, err)
			}
			kinds[f.Name]++
			for _, c := range labelCollisions(f.Figure) {
				t.Errorf("%s %s: %s", s.Name, f.Name, c)
			}
		}
		svgs := renderAll(t, d, SVG)
		_, pool := s.Server.(*sim.Pool)
		want := 5
		if pool {
			want = 6 // and members
			if !strings.Contains(string(svgs["members"]), s.Policies[0].Name+": pool members") {
				t.Errorf("%s: no pool members panel for %s", s.Name, s.Policies[0].Name)
			}
			pools++
		}
		if len(s.PriorityLevels()) > 0 {
			want++ // and priorities
		}
		if len(svgs) != want {
			t.Errorf("%s: %d figures, want %d", s.Name, len(svgs), want)
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
			if name == "timeline" || name == "load" || name == "members" {
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
	for _, k := range []string{"timeline", "load", "cdf", "outcomes", "distributions", "members"} {
		if kinds[k] == 0 && !(k == "members" && racetest.Enabled) {
			t.Errorf("no %s figure checked for label collisions", k)
		}
	}
	if pools < 2 && !racetest.Enabled { // every pool scenario is over the race limit
		t.Errorf("only %d built-in pool scenarios checked", pools)
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

// legendOutsideData says what is wrong with f's legend, if anything: an
// entry outside the figure or the legend's box, two entries on top of each
// other, the box over a panel's data area, a panel drawing its own legend
// (gonum's, inside the data area). It uses the layout Figure.Write draws.
func legendOutsideData(f *Figure) error {
	w, h := f.size()
	dc := draw.New(vgsvg.New(w, h))
	lay := f.layout(dc)
	if len(lay.legend) != len(f.legend) {
		return fmt.Errorf("%d legend entries placed of %d", len(lay.legend), len(f.legend))
	}
	for i, it := range lay.legend {
		for _, r := range []vg.Rectangle{it.icon, it.text} {
			if !within(r, lay.legendBox) || !within(r, dc.Rectangle) {
				return fmt.Errorf("entry %q at %v is outside the legend %v or the figure %v", it.label, r, lay.legendBox, dc.Rectangle)
			}
		}
		for _, o := range lay.legend[:i] {
			if overlap(it.icon, o.text) || overlap(it.text, o.text) || overlap(it.icon, o.icon) {
				return fmt.Errorf("entries %q and %q overlap", it.label, o.label)
			}
		}
	}
	for r, row := range lay.grid {
		for c, p := range row {
			if p == nil {
				continue
			}
			if sz := p.Legend.Rectangle(lay.cells[r][c]).Size(); sz.X > 0 || sz.Y > 0 {
				return fmt.Errorf("panel %q draws a legend inside itself", p.Title.Text)
			}
			if da := p.DataCanvas(lay.cells[r][c]); len(lay.legend) > 0 && overlap(da.Rectangle, lay.legendBox) {
				return fmt.Errorf("the legend %v covers panel %q's data %v", lay.legendBox, p.Title.Text, da.Rectangle)
			}
		}
	}
	return nil
}

func within(r, box vg.Rectangle) bool {
	return r.Min.X >= box.Min.X && r.Min.Y >= box.Min.Y && r.Max.X <= box.Max.X && r.Max.Y <= box.Max.Y
}

func overlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
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

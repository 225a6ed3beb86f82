package plot

import (
	"bytes"
	"context"
	"image/color"
	"image/png"
	"runtime"
	"testing"

	"github.com/retrysim/retrysim/internal/golden"
	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/runs"

	"github.com/retrysim/retrysim/internal/racetest"
)

func plotData(t *testing.T, scenario string, seeds int) *runs.PlotData {
	t.Helper()
	s := scenariotest.Builtin(t, scenario)
	d, err := runs.CollectPlotData(context.Background(), s, s.Seed, seeds, runs.DefaultBucket(s.Server), nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func renderAll(t *testing.T, d *runs.PlotData, format ImageFormat) map[string][]byte {
	t.Helper()
	figs, err := Figures(d)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range figs {
		var buf bytes.Buffer
		if err := f.Figure.Write(&buf, format); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		out[f.Name] = buf.Bytes()
	}
	return out
}

// SVG bytes are compared exactly: same inputs, same picture.
func TestPlotSVGGolden(t *testing.T) {
	svgs := renderAll(t, plotData(t, "overload-burst", 4), SVG)
	for _, name := range []string{"timeline", "load", "cdf", "outcomes", "distributions"} {
		got, ok := svgs[name]
		if !ok {
			t.Errorf("no %s figure", name)
			continue
		}
		golden.Check(t, "plot-overload-burst-seeds4-"+name+".svg", got)
	}
}

func TestPlotOneSeedHasNoDistributions(t *testing.T) {
	svgs := renderAll(t, plotData(t, "overload-burst", 1), SVG)
	if _, ok := svgs["distributions"]; ok || len(svgs) != 4 {
		t.Errorf("one seed gave %d figures, want timeline, load, cdf, outcomes", len(svgs))
	}
}

func TestPlotSVGSameOnAnyGOMAXPROCS(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	one := renderAll(t, plotData(t, "long-outage", 6), SVG)
	runtime.GOMAXPROCS(3)
	three := renderAll(t, plotData(t, "long-outage", 6), SVG)
	for name := range one {
		if !bytes.Equal(one[name], three[name]) {
			t.Errorf("%s.svg differs between GOMAXPROCS 1 and 3:\n%s", name, golden.Diff(string(one[name]), string(three[name])))
		}
	}
}

// PNG bytes may change with the Go version, so decode and check what a
// reader would see: the size, a white background, and the colours of
// admitted and rejected requests in the timeline.
func TestPlotPNG(t *testing.T) {
	if racetest.Enabled {
		t.Skip("PNG rendering is one goroutine, several times slower under -race; the plain go test runs this")
	}
	d := plotData(t, "overload-burst", 1)
	pngs := map[string][]byte{}
	for name, fig := range map[string]func(*runs.PlotData) (*Figure, error){"timeline": TimelineFigure, "cdf": CDFFigure} {
		f, err := fig(d)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := f.Write(&buf, "png"); err != nil {
			t.Fatal(err)
		}
		pngs[name] = buf.Bytes()
	}
	for name, data := range pngs {
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 800 {
			t.Errorf("%s.png is %dx%d, want 1200x800", name, b.Dx(), b.Dy())
		}
		if r, g, b, _ := img.At(2, 2).RGBA(); r != 0xffff || g != 0xffff || b != 0xffff {
			t.Errorf("%s.png: corner is not white", name)
		}
	}
	img, _ := png.Decode(bytes.NewReader(pngs["timeline"]))
	count := map[color.NRGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			count[color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 0xff}]++
		}
	}
	for _, c := range []color.NRGBA{colorAdmitted, colorOverloaded} {
		if count[c] < 200 {
			t.Errorf("timeline.png has %d pixels of %v, want bars of it", count[c], c)
		}
	}
}

// The members figure of a pool scenario, byte for byte: one panel per
// policy, a line per member.
func TestPlotMembersSVGGolden(t *testing.T) {
	svgs := renderAll(t, plotData(t, "pool-cooldown", 1), SVG)
	if _, ok := svgs["members"]; !ok || len(svgs) != 5 {
		t.Fatalf("pool-cooldown on one seed gave %d figures, want timeline, load, cdf, outcomes, members", len(svgs))
	}
	golden.Check(t, "plot-pool-cooldown-members.svg", svgs["members"])
}

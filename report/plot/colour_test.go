package plot

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/sim"

	"github.com/retrysim/retrysim/internal/racetest"
)

// renderPNG draws f as PNG and decodes it.
func renderPNG(t *testing.T, f *Figure) image.Image {
	t.Helper()
	var buf bytes.Buffer
	if err := f.Write(&buf, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// pixelAt returns the PNG pixel of f where panel i draws the data point
// (x, y), using the same layout as Figure.Write.
func pixelAt(f *Figure, panel int, x, y float64) image.Point {
	w, h := f.size()
	dc := draw.New(vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(plotDPI)))
	lay := f.layout(dc)
	r, c := panel/f.Cols, panel%f.Cols
	p := lay.grid[r][c]
	da := p.DataCanvas(lay.cells[r][c])
	tx, ty := p.Transforms(&da)
	toPx := func(l float64) int { return int(l * plotDPI / 72) }
	return image.Pt(toPx(float64(tx(x))), toPx(float64(h))-toPx(float64(ty(y))))
}

// over blends c, not premultiplied, over white, as a PNG shows it.
func over(c color.NRGBA) color.NRGBA {
	mix := func(v uint8) uint8 { return uint8((int(v)*int(c.A) + 255*(255-int(c.A)) + 127) / 255) }
	return color.NRGBA{mix(c.R), mix(c.G), mix(c.B), 0xff}
}

func near(c color.Color, want color.NRGBA, tol int) bool {
	r, g, b, _ := c.RGBA()
	d := func(got uint32, want uint8) bool { return abs(int(got>>8)-int(want)) <= tol }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

func abs(x int) int { return max(x, -x) }

// Each box of the distributions figure is filled with a pale shade of its
// policy's colour: checked at pixels inside the box, between the quartile
// and the median, in the PNG a reader sees.
func TestDistributionBoxFillColours(t *testing.T) {
	checked := 0
	// overload-burst's two randomised policies (full jitter, gated) have
	// boxes tall enough; the other scenarios' boxes are flat at this size
	// (rate-limited-burst's policies all honour the same retry-after).
	list := []string{"overload-burst", "rate-limited-burst"}
	if racetest.Enabled {
		list = list[:1] // PNG rendering is one goroutine, slow under -race
	}
	for _, scenario := range list {
		checked += checkBoxFills(t, plotData(t, scenario, 20))
	}
	if checked < 2 {
		t.Fatalf("only %d boxes tall enough to check", checked)
	}
}

// checkBoxFills checks the boxes of d's distributions figure that are tall
// enough to have an inside, and returns how many it checked.
func checkBoxFills(t *testing.T, d *runs.PlotData) (checked int) {
	t.Helper()
	fig, err := DistributionFigure(d)
	if err != nil {
		t.Fatal(err)
	}
	img := renderPNG(t, fig)
	for panel, spec := range distributionPanels() {
		m := spec.metric
		largest := 0.0
		for i := range d.Runs.Policies {
			for _, v := range policyValues(d, i, m) {
				largest = max(largest, math.Abs(v))
			}
		}
		per, _ := metricAxis(m, "", largest)
		for i, name := range d.Runs.Policies {
			vals := policyValues(d, i, m)
			if len(vals) == 0 {
				continue
			}
			for j := range vals {
				vals[j] /= per
			}
			b, err := plotter.NewBoxPlot(1, 0, plotter.Values(vals))
			if err != nil {
				t.Fatal(err)
			}
			// The taller half of the box, away from its edges and the median.
			lo, hi := b.Quartile1, b.Median
			if b.Quartile3-b.Median > hi-lo {
				lo, hi = b.Median, b.Quartile3
			}
			top, bottom := pixelAt(fig, panel, float64(i), hi), pixelAt(fig, panel, float64(i), lo)
			if bottom.Y-top.Y < 12 {
				continue // too flat to have an inside
			}
			c := PolicyColor(i)
			want := over(color.NRGBA{c.R, c.G, c.B, 0x66})
			if survivorsOf(d).low[i] {
				want = color.NRGBA{0xff, 0xff, 0xff, 0xff} // hollow
			}
			match, n := 0, 0
			for y := top.Y + 4; y <= bottom.Y-4; y++ {
				n++
				if near(img.At(top.X, y), want, 3) {
					match++
				}
			}
			// Grid lines under the box may tint a pixel or two.
			if match*2 < n {
				t.Errorf("%s, %s: box at x=%d, y=%d..%d has %v, want %v (pale %v)",
					d.Scenario+": "+m.Name, name, top.X, top.Y, bottom.Y, img.At(top.X, (top.Y+bottom.Y)/2), want, c)
			}
			checked++
		}
	}
	return checked
}

var (
	svgColourAttr = regexp.MustCompile(`(?:fill|stroke|color|stop-color)\s*(?::|=")\s*([^;"]*)`)
	inlineSVGs    = regexp.MustCompile(`(?s)<svg .*?</svg>`)
	validColour   = regexp.MustCompile(`^(?:#[0-9A-Fa-f]{6}|rgb\(\s*\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\s*\)|none)$`)
)

// checkSVGColours reports every colour in svg that is not #RRGGBB, rgb()
// or none.
func checkSVGColours(t *testing.T, name, svg string) {
	t.Helper()
	seen := 0
	for _, m := range svgColourAttr.FindAllStringSubmatch(svg, -1) {
		seen++
		if !validColour.MatchString(strings.TrimSpace(m[1])) {
			t.Errorf("%s: invalid colour %q in %q", name, m[1], m[0])
		}
	}
	if seen == 0 {
		t.Errorf("%s: no colours found", name)
	}
}

// Every SVG the package writes, standalone or inside the HTML report, uses
// only colours that browsers understand.
func TestSVGColoursValid(t *testing.T) {
	d := plotData(t, "overload-burst", 4)
	for name, svg := range renderAll(t, d, SVG) {
		checkSVGColours(t, name+".svg", string(svg))
	}
	figs, err := SweepFigures(testSweep(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		var buf bytes.Buffer
		if err := f.Figure.Write(&buf, SVG); err != nil {
			t.Fatal(err)
		}
		checkSVGColours(t, f.Name+".svg", buf.String())
	}
	var page bytes.Buffer
	figures, err := SVGFigures(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&page, scenariotest.Builtin(t, "overload-burst"), d.Runs, report.DefaultReference, figures, report.Provenance{Command: "retrysim report"}); err != nil {
		t.Fatal(err)
	}
	svgs := inlineSVGs.FindAllString(page.String(), -1)
	if len(svgs) != 5 {
		t.Fatalf("report.html has %d inline SVGs, want 5 (timeline, load, cdf, outcomes, distributions)", len(svgs))
	}
	for i, svg := range svgs {
		checkSVGColours(t, fmt.Sprintf("report.html, plot %d", i+1), svg)
	}
}

// testSweep runs overload-burst at clients 10, 20, 30 (first axis) and
// with two, then four seconds of outage (second axis), on two seeds.
func testSweep(t *testing.T) *runs.Sweep {
	t.Helper()
	base := scenariotest.Builtin(t, "overload-burst")
	sw := &runs.Sweep{Scenario: base.Name, FirstSeed: base.Seed, Seeds: 2,
		Axes: []runs.Axis{
			{Name: "clients", Labels: []string{"10", "20", "30"}, Values: []float64{10, 20, 30}},
			{Name: "outage", Title: "outage length", Unit: "ms", Labels: []string{"2s", "4s"}, Values: []float64{2000, 4000}},
		}}
	for _, p := range base.Policies {
		sw.Policies = append(sw.Policies, p.Name)
	}
	for i, clients := range []int{10, 20, 30} {
		for j, outage := range []float64{2000, 4000} {
			s := *base
			s.Workload = sim.Burst{Clients: clients}
			server := *base.Server.(*sim.CapacityWindows)
			server.Phases = append([]sim.Phase(nil), server.Phases...)
			server.Phases[0].Duration = msDuration(outage)
			s.Server = &server
			m, err := runs.Collect(context.Background(), &s, s.Seed, sw.Seeds, nil)
			if err != nil {
				t.Fatal(err)
			}
			sw.Points = append(sw.Points, runs.Point{Index: []int{i, j}, Runs: m})
		}
	}
	return sw
}

// okabeIto is the colour-blind-safe palette of Okabe and Ito (2008).
var okabeIto = []color.NRGBA{
	{0xe6, 0x9f, 0x00, 0xff}, {0x56, 0xb4, 0xe9, 0xff}, {0x00, 0x9e, 0x73, 0xff}, {0xf0, 0xe4, 0x42, 0xff},
	{0x00, 0x72, 0xb2, 0xff}, {0xd5, 0x5e, 0x00, 0xff}, {0xcc, 0x79, 0xa7, 0xff}, {0x00, 0x00, 0x00, 0xff},
}

// luminance is the WCAG relative luminance of c.
func luminance(c color.NRGBA) float64 {
	lin := func(v uint8) float64 {
		s := float64(v) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.R) + 0.7152*lin(c.G) + 0.0722*lin(c.B)
}

// contrast is the WCAG contrast ratio of two colours (>= 1).
func contrast(a, b color.NRGBA) float64 {
	hi, lo := luminance(a), luminance(b)
	if hi < lo {
		hi, lo = lo, hi
	}
	return (hi + 0.05) / (lo + 0.05)
}

// stackedInOrder walks up each pixel column of each panel of fig from the x
// axis through its bar and reports an error if a bottom-coloured pixel
// follows a top-coloured one; it returns how many columns hold both.
func stackedInOrder(t *testing.T, fig *Figure, bottom, top color.NRGBA, bottomName, topName string) int {
	t.Helper()
	img := renderPNG(t, fig)
	both := 0
	for panel, p := range fig.Panels {
		left, right := pixelAt(fig, panel, p.X.Min, 0), pixelAt(fig, panel, p.X.Max, 0)
		for x := left.X + 1; x < right.X; x++ {
			seenBottom, seenTop, gap := false, false, 0
			for y := left.Y - 1; y > 0 && gap <= 3; y-- {
				switch c := img.At(x, y); {
				case near(c, bottom, 2):
					if seenTop {
						t.Errorf("%s, column %d: %s at y=%d above %s", p.Title.Text, x, bottomName, y, topName)
					}
					seenBottom, gap = true, 0
				case near(c, top, 2):
					seenTop, gap = true, 0
				default:
					gap++ // outlines between the parts of a bar, or the end of it
				}
			}
			if seenBottom && seenTop {
				both++
			}
		}
	}
	return both
}

// Admitted and rejected requests are told apart by everyone: Okabe–Ito
// colours (terminal rejections the neutral grey of the give-up reason
// "terminal"), admitted and 429s (the commonest rejection) differing in
// lightness too (so they survive any colour vision and greyscale
// printing), every class its own colour; and by position: admitted are
// always the bottom of a bar, 429s above them, 529s above those.
func TestTimelineColourBlindSafe(t *testing.T) {
	seen := map[color.NRGBA]string{colorAdmitted: "admitted"}
	for _, c := range rejectClasses {
		if !slices.Contains(okabeIto, c.color) && c.color != colorTerminal {
			t.Errorf("%s: colour %v is not an Okabe–Ito colour", c.label, c.color)
		}
		if other, ok := seen[c.color]; ok {
			t.Errorf("%s has the colour of %s", c.label, other)
		}
		seen[c.color] = c.label
	}
	if ratio := contrast(colorAdmitted, colorRetryAfter); ratio < 2 {
		t.Errorf("admitted and 429s differ in lightness by a contrast ratio of %.2f, want >= 2", ratio)
	}
	fig, err := TimelineFigure(plotData(t, "overload-burst", 1))
	if err != nil {
		t.Fatal(err)
	}
	if stackedInOrder(t, fig, colorAdmitted, colorOverloaded, "admitted", "529") == 0 {
		t.Error("no bar of overload-burst has both admitted requests and 529s")
	}
	fig, err = TimelineFigure(plotData(t, "bad-day-agents", 1))
	if err != nil {
		t.Fatal(err)
	}
	if stackedInOrder(t, fig, colorRetryAfter, colorOverloaded, "429", "529") == 0 {
		t.Error("no bar of bad-day-agents has both 429s and 529s")
	}
}

// The load figure's first attempts and retries are told apart as admitted
// and rejected are: two Okabe–Ito colours that differ in lightness, first
// attempts always at the bottom of a bar; its lines are Okabe–Ito colours
// too.
func TestLoadColourBlindSafe(t *testing.T) {
	for _, c := range []color.NRGBA{colorFirstAttempts, colorRetries, colorGoodput, colorInFlight, colorLocalRejected} {
		if !slices.Contains(okabeIto, c) {
			t.Errorf("load colour %v is not an Okabe–Ito colour", c)
		}
	}
	if ratio := contrast(colorFirstAttempts, colorRetries); ratio < 2 {
		t.Errorf("first attempts and retries differ in lightness by a contrast ratio of %.2f, want >= 2", ratio)
	}
	fig, err := LoadFigure(plotData(t, "overload-burst", 1))
	if err != nil {
		t.Fatal(err)
	}
	if stackedInOrder(t, fig, colorFirstAttempts, colorRetries, "first attempts", "retries") == 0 {
		t.Error("no bar has both first attempts and retries")
	}
}

// On a queue working on requests whose clients have gone
// (metastable-retry-storm), the timeline splits admitted work: served in
// time at the bottom, wasted (sky blue, lighter than admitted) above it,
// both named in the legend; a run that wastes nothing keeps the
// two-part bars.
func TestTimelineWastedStacked(t *testing.T) {
	if !slices.Contains(okabeIto, colorWasted) {
		t.Errorf("wasted colour %v is not an Okabe–Ito colour", colorWasted)
	}
	if ratio := contrast(colorAdmitted, colorWasted); ratio < 2 {
		t.Errorf("served in time and wasted differ in lightness by a contrast ratio of %.2f, want >= 2", ratio)
	}
	fig, err := TimelineFigure(plotData(t, "metastable-retry-storm", 1))
	if err != nil {
		t.Fatal(err)
	}
	if stackedInOrder(t, fig, colorAdmitted, colorWasted, "served in time", "wasted") == 0 {
		t.Error("no bar has both work served in time and wasted work")
	}
	if !strings.Contains(fig.Title, "wasted") || !legendHas(t, fig, "wasted: client gone") || !legendHas(t, fig, "served in time (bottom)") {
		t.Errorf("title %q or the legends do not name the wasted work", fig.Title)
	}
	plain, err := TimelineFigure(plotData(t, "overload-burst", 1))
	if err != nil {
		t.Fatal(err)
	}
	if legendHas(t, plain, "wasted: client gone") || !legendHas(t, plain, "admitted (bottom)") {
		t.Error("overload-burst wastes nothing, yet its legend names wasted work")
	}
}

// legendHas reports whether fig's SVG draws text (a legend entry).
func legendHas(t *testing.T, fig *Figure, text string) bool {
	t.Helper()
	var buf bytes.Buffer
	if err := fig.Write(&buf, SVG); err != nil {
		t.Fatal(err)
	}
	return strings.Contains(buf.String(), ">"+text+"<")
}

// cielab returns c in CIELAB (D65), for colour differences (ΔE 1976).
func cielab(c color.NRGBA) (l, a, b float64) {
	lin := func(v uint8) float64 {
		s := float64(v) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	r, g, bl := lin(c.R), lin(c.G), lin(c.B)
	x := (0.4124*r + 0.3576*g + 0.1805*bl) / 0.95047
	y := 0.2126*r + 0.7152*g + 0.0722*bl
	z := (0.0193*r + 0.1192*g + 0.9505*bl) / 1.08883
	f := func(t float64) float64 {
		if t > 0.008856 {
			return math.Cbrt(t)
		}
		return 7.787*t + 16.0/116
	}
	return 116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))
}

// Up to 20 policies each get their own colour (issue 40: colours repeated
// after 10), every two at least ΔE 20 apart, as far as Tableau 10's own
// closest pair (about 26) nearly; none is near the capacity line's black.
func TestTwentyPoliciesDistinctColours(t *testing.T) {
	const n = 20
	dist := func(a, b color.NRGBA) float64 {
		l1, a1, b1 := cielab(a)
		l2, a2, b2 := cielab(b)
		return math.Sqrt((l1-l2)*(l1-l2) + (a1-a2)*(a1-a2) + (b1-b2)*(b1-b2))
	}
	for i := range n {
		for j := range i {
			if d := dist(PolicyColor(i), PolicyColor(j)); d < 20 {
				t.Errorf("policies %d and %d: colours %v and %v only ΔE %.1f apart", j, i, PolicyColor(j), PolicyColor(i), d)
			}
		}
		if d := dist(PolicyColor(i), colorCapacity); d < 20 {
			t.Errorf("policy %d's colour %v is ΔE %.1f from the capacity line's", i, PolicyColor(i), d)
		}
	}
}

package plot

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/runs"
)

// textCanvas is a vg.Canvas that draws nothing and keeps the box of every
// string drawn on it, in page coordinates (rotated text by the bounds of
// its rotated box), for the tests of label collisions.
type textCanvas struct {
	cur   affine
	stack []affine
	boxes []textBox
}

// textBox is a string's box: its bounds, and its corners in order (a
// rotated rectangle).
type textBox struct {
	text    string
	r       vg.Rectangle
	corners [4][2]float64
}

// shrunk returns b's corners moved by d towards its centre.
func (b textBox) shrunk(d float64) [4][2]float64 {
	var cx, cy float64
	for _, p := range b.corners {
		cx, cy = cx+p[0]/4, cy+p[1]/4
	}
	out := b.corners
	for i, p := range out {
		dx, dy := p[0]-cx, p[1]-cy
		if n := math.Hypot(dx, dy); n > 2*d {
			out[i] = [2]float64{p[0] - d*dx/n, p[1] - d*dy/n}
		}
	}
	return out
}

// intersect reports whether two convex quadrilaterals overlap: no edge
// normal of either separates them.
func intersect(a, b [4][2]float64) bool {
	for _, poly := range [][4][2]float64{a, b} {
		for i := range poly {
			p, q := poly[i], poly[(i+1)%4]
			nx, ny := q[1]-p[1], p[0]-q[0]
			lo := func(ps [4][2]float64) (float64, float64) {
				mn, mx := math.Inf(1), math.Inf(-1)
				for _, v := range ps {
					d := nx*v[0] + ny*v[1]
					mn, mx = min(mn, d), max(mx, d)
				}
				return mn, mx
			}
			amin, amax := lo(a)
			bmin, bmax := lo(b)
			if amax <= bmin || bmax <= amin {
				return false
			}
		}
	}
	return true
}

// affine maps (x, y) to (a·x + c·y + e, b·x + d·y + f).
type affine struct{ a, b, c, d, e, f float64 }

func (m affine) then(n affine) affine { // m applied after n: m·n
	return affine{m.a*n.a + m.c*n.b, m.b*n.a + m.d*n.b, m.a*n.c + m.c*n.d, m.b*n.c + m.d*n.d,
		m.a*n.e + m.c*n.f + m.e, m.b*n.e + m.d*n.f + m.f}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

func newTextCanvas() *textCanvas { return &textCanvas{cur: affine{a: 1, d: 1}} }

func (c *textCanvas) SetLineWidth(vg.Length)              {}
func (c *textCanvas) SetLineDash([]vg.Length, vg.Length)  {}
func (c *textCanvas) SetColor(color.Color)                {}
func (c *textCanvas) Stroke(vg.Path)                      {}
func (c *textCanvas) Fill(vg.Path)                        {}
func (c *textCanvas) DrawImage(vg.Rectangle, image.Image) {}
func (c *textCanvas) Push()                               { c.stack = append(c.stack, c.cur) }
func (c *textCanvas) Pop() {
	c.cur, c.stack = c.stack[len(c.stack)-1], c.stack[:len(c.stack)-1]
}
func (c *textCanvas) Rotate(rad float64) {
	s, co := math.Sin(rad), math.Cos(rad)
	c.cur = c.cur.then(affine{a: co, b: s, c: -s, d: co})
}
func (c *textCanvas) Translate(pt vg.Point) {
	c.cur = c.cur.then(affine{a: 1, d: 1, e: float64(pt.X), f: float64(pt.Y)})
}
func (c *textCanvas) Scale(x, y float64) { c.cur = c.cur.then(affine{a: x, d: y}) }

func (c *textCanvas) FillString(f font.Face, pt vg.Point, s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	ext := f.Extents()
	x0, x1 := float64(pt.X), float64(pt.X+f.Width(s))
	y0, y1 := float64(pt.Y-ext.Descent), float64(pt.Y+ext.Ascent)
	r := vg.Rectangle{Min: vg.Point{X: vg.Length(math.Inf(1)), Y: vg.Length(math.Inf(1))}, Max: vg.Point{X: vg.Length(math.Inf(-1)), Y: vg.Length(math.Inf(-1))}}
	var corners [4][2]float64
	for i, p := range [][2]float64{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}} {
		x, y := c.cur.apply(p[0], p[1])
		corners[i] = [2]float64{x, y}
		r.Min.X, r.Min.Y = min(r.Min.X, vg.Length(x)), min(r.Min.Y, vg.Length(y))
		r.Max.X, r.Max.Y = max(r.Max.X, vg.Length(x)), max(r.Max.Y, vg.Length(y))
	}
	c.boxes = append(c.boxes, textBox{s, r, corners})
}

// labelCollisions says which strings of f, drawn at its size, overlap
// one another or run off the figure. Boxes are the font's ascent to its
// descent, so lines of text a normal gap apart do not touch; a sliver of
// slack (half a point) forgives boxes that merely touch.
func labelCollisions(f *Figure) []string {
	w, h := f.size()
	c := newTextCanvas()
	if err := f.draw(draw.NewCanvas(c, w, h)); err != nil {
		return []string{err.Error()}
	}
	const slack = vg.Length(0.5)
	var out []string
	for i, a := range c.boxes {
		if a.r.Min.X < -slack || a.r.Min.Y < -slack || a.r.Max.X > w+slack || a.r.Max.Y > h+slack {
			out = append(out, fmt.Sprintf("%q runs off the figure (%.1f,%.1f)-(%.1f,%.1f)", a.text, a.r.Min.X, a.r.Min.Y, a.r.Max.X, a.r.Max.Y))
		}
		for _, b := range c.boxes[:i] {
			if intersect(a.shrunk(float64(slack)), b.shrunk(float64(slack))) {
				out = append(out, fmt.Sprintf("%q and %q overlap", b.text, a.text))
			}
		}
	}
	return out
}

// The figure kinds drawn from other runs collide nowhere (the figures of
// every built-in scenario: TestBuiltinFigures): every sweep figure of a two-parameter sweep (labelSweep) and of bad-day-agents
// over its clients (sessions first), and the tune figure.
func TestSweepAndTuneFiguresNoLabelCollisions(t *testing.T) {
	s := scenariotest.Builtin(t, "bad-day-agents")
	m, err := runs.Collect(context.Background(), s, s.Seed, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	agents := &runs.Sweep{Scenario: s.Name, FirstSeed: s.Seed, Seeds: 2,
		Axes: []runs.Axis{{Name: "clients", Labels: []string{"20", "40", "60"}, Values: []float64{20, 40, 60}}}}
	for _, p := range s.Policies {
		agents.Policies = append(agents.Policies, p.Name)
	}
	for i := range 3 {
		agents.Points = append(agents.Points, runs.Point{Index: []int{i}, Runs: m})
	}
	checked := 0
	for _, sw := range []*runs.Sweep{labelSweep(t), agents} {
		figs, err := SweepFigures(sw)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range figs {
			checked++
			for _, c := range labelCollisions(f.Figure) {
				t.Errorf("sweep of %s, %s: %s", sw.Scenario, f.Name, c)
			}
		}
	}
	fig, err := TuneFigure(tuneResult(t, "budget_percent=5,50", "budget_min_per_second=1,9,40", "base=1s,20s"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range labelCollisions(fig) {
		t.Errorf("tune: %s", c)
	}
	if checked < 10 {
		t.Errorf("only %d sweep figures checked", checked)
	}
}

// A sweep line that lies wholly under another's says so in the legend:
// bad-day-agents' agent-cli and gated complete every session at every
// point, so on sessions.completed agent-cli's line is under gated's (drawn
// later); on attempts they differ and neither is marked.
func TestSweepHiddenLineNamed(t *testing.T) {
	s := scenariotest.Builtin(t, "bad-day-agents")
	m, err := runs.Collect(context.Background(), s, s.Seed, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	sw := &runs.Sweep{Scenario: s.Name, FirstSeed: s.Seed, Seeds: 2,
		Axes: []runs.Axis{{Name: "clients", Labels: []string{"20", "40"}, Values: []float64{20, 40}}}}
	for _, p := range s.Policies {
		sw.Policies = append(sw.Policies, p.Name)
	}
	for i := range 2 {
		sw.Points = append(sw.Points, runs.Point{Index: []int{i}, Runs: m})
	}
	figs, err := SweepFigures(sw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"sweep-sessions-completed": true, "sweep-attempts": false}
	for _, f := range figs {
		w, ok := want[f.Name]
		if !ok {
			continue
		}
		delete(want, f.Name)
		if got := legendHas(t, f.Figure, "agent-cli (under gated)"); got != w {
			t.Errorf("%s: agent-cli named as under gated %v, want %v", f.Name, got, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("figures %v not drawn", want)
	}
}

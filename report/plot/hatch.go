package plot

import (
	"image/color"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// hatch draws diagonal lines over bar segments: the second visual channel
// of the give-up reasons, so that a reason's bar can never be taken for a
// policy's (policy bars are never hatched). Each segment spans [Lo, Hi] in
// data units, centred at X, Width wide.
type hatch struct {
	segs  []hatchSeg
	width vg.Length
	// slope is +1 or −1: reasons alternate the direction of their lines.
	slope int
}

type hatchSeg struct{ x, lo, hi float64 }

const hatchSpacing = 6 // points between lines

var hatchStyle = draw.LineStyle{Color: color.NRGBA{0xff, 0xff, 0xff, 0xcc}, Width: vg.Points(1)}

// Plot implements gonum.Plotter.
func (h *hatch) Plot(c draw.Canvas, plt *gonum.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, s := range h.segs {
		if s.hi <= s.lo {
			continue
		}
		x0 := trX(s.x) - h.width/2
		h.lines(&c, vg.Rectangle{Min: vg.Point{X: x0, Y: trY(s.lo)}, Max: vg.Point{X: x0 + h.width, Y: trY(s.hi)}})
	}
}

// Thumbnail implements gonum.Thumbnailer: the legend shows the hatch too.
func (h *hatch) Thumbnail(c *draw.Canvas) { h.lines(c, c.Rectangle) }

// lines draws the hatch inside r: lines of the hatch's slope, clipped.
func (h *hatch) lines(c *draw.Canvas, r vg.Rectangle) {
	w, ht := r.Max.X-r.Min.X, r.Max.Y-r.Min.Y
	if w <= 0 || ht <= 0 {
		return
	}
	step := vg.Points(hatchSpacing)
	// A line of slope 1 through (r.Min.X+o, r.Min.Y): y − Min.Y = x − (Min.X+o).
	for o := -ht; o < w; o += step {
		xs, ys := r.Min.X+o, r.Min.Y
		xe, ye := xs+ht, r.Max.Y
		if xs < r.Min.X {
			ys += r.Min.X - xs
			xs = r.Min.X
		}
		if xe > r.Max.X {
			ye -= xe - r.Max.X
			xe = r.Max.X
		}
		if h.slope < 0 { // mirror within r
			xs, xe = r.Max.X-(xs-r.Min.X), r.Max.X-(xe-r.Min.X)
		}
		c.StrokeLine2(hatchStyle, xs, ys, xe, ye)
	}
}

package plot

import (
	"fmt"
	"image/color"
	"slices"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
)

// LowCompletion is report.LowCompletion: below it (relative to the best
// policy's completed share) a policy's bars, boxes and sweep points are
// drawn hollow.
const LowCompletion = report.LowCompletion

// survivors says, per policy of d, what share of its operations completed
// (over every seed) and whether that share is low (below LowCompletion of
// the best policy's).
type survivors struct {
	share []float64
	low   []bool
}

func survivorsOf(d *runs.PlotData) survivors { return survivorsOfRuns(d.Runs) }

func survivorsOfRuns(m *runs.MultiSeed) survivors {
	share, low := report.CompletedShares(m)
	return survivors{share: share, low: low}
}

// any reports whether some policy is drawn hollow.
func (s survivors) any() bool {
	for _, l := range s.low {
		if l {
			return true
		}
	}
	return false
}

// hollowNote is the line under a figure that has hollow policies.
func hollowNote() string {
	return fmt.Sprintf("hollow: completes under %.0f%% of the share the best policy completes (a trade, not a better result)", 100*LowCompletion)
}

// hollowBar draws a bar as an outline in the policy's colour.
func hollowBar(bar *plotter.BarChart, c color.NRGBA) {
	bar.Color = color.NRGBA{0xff, 0xff, 0xff, 0xff}
	bar.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(2), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
}

// hollowBox draws a box plot without fill and with dashed lines.
func hollowBox(b *plotter.BoxPlot) {
	b.FillColor = nil
	dash := []vg.Length{vg.Points(4), vg.Points(2)}
	b.BoxStyle.Dashes = dash
	b.WhiskerStyle.Dashes = dash
}

// shareLabels writes each policy's completed share above its box or bar
// at the heights top, for a panel of a metric over completed operations
// only ("42% done"). top[p] is NaN for a policy without values.
// n[p] is the number of seeds on which policy p has a value: below the
// run's seeds, the label says so ("42% done, n=12").
func shareLabels(p *gonum.Plot, s survivors, top []float64, n []int, seeds int) error {
	var pts plotter.XYs
	var labels []string
	for i, y := range top {
		if y != y { // NaN
			continue
		}
		pts = append(pts, plotter.XY{X: float64(i), Y: y})
		label := shareWords(s.share[i])
		if n[i] < seeds {
			label += fmt.Sprintf(", n=%d", n[i])
		}
		labels = append(labels, label)
	}
	if len(pts) == 0 {
		return nil
	}
	return addLabelsAbove(p, pts, labels, 10)
}

// addLabelsAbove writes labels centred just above the points pts, in a
// font of size points, staggered where crowded (aboveLabels).
func addLabelsAbove(p *gonum.Plot, pts plotter.XYs, labels []string, size float64) error {
	if len(pts) != len(labels) {
		return fmt.Errorf("%d labels for %d points", len(labels), len(pts))
	}
	sty := p.X.Tick.Label // the panel's font, handler and colour
	sty.Font.Size = vg.Points(size)
	sty.XAlign, sty.YAlign, sty.Rotation = draw.XCenter, draw.YBottom, 0
	p.Add(&aboveLabels{pts: pts, text: labels, style: sty})
	return nil
}

// aboveLabels writes each label centred above its point, on the lower of
// labelRows rows where it clears every label placed before it (by
// labelGap): the labels of bars or boxes too close for their width
// ("999.83" beside "1,000.00", "98% done" beside ">99.9% done") are
// staggered instead of running together. The plot keeps room above each
// point for the rows.
type aboveLabels struct {
	pts   plotter.XYs
	text  []string
	style text.Style
}

const labelRows = 3

var labelOffset, labelGap = vg.Points(4), vg.Points(3)

// Plot implements gonum.Plotter.
func (l *aboveLabels) Plot(c draw.Canvas, plt *gonum.Plot) {
	trX, trY := plt.Transforms(&c)
	h := l.lineHeight()
	var placed []vg.Rectangle
	for i, pt := range l.pts {
		w := l.style.Width(l.text[i])
		x, y := trX(pt.X), trY(pt.Y)+labelOffset
		var r vg.Rectangle
		for row := range labelRows {
			r = vg.Rectangle{Min: vg.Point{X: x - w/2, Y: y + vg.Length(row)*h}, Max: vg.Point{X: x + w/2, Y: y + vg.Length(row+1)*h}}
			if !slices.ContainsFunc(placed, func(o vg.Rectangle) bool {
				return r.Min.X < o.Max.X+labelGap && o.Min.X < r.Max.X+labelGap && r.Min.Y < o.Max.Y && o.Min.Y < r.Max.Y
			}) {
				break
			}
		}
		placed = append(placed, r)
		c.FillText(l.style, r.Min.Add(vg.Point{X: w / 2}), l.text[i])
	}
}

// lineHeight is a row's height: the font's ascent and descent.
func (l *aboveLabels) lineHeight() vg.Length {
	e := l.style.FontExtents()
	return e.Ascent + e.Descent
}

// DataRange implements gonum.DataRanger: the points.
func (l *aboveLabels) DataRange() (xmin, xmax, ymin, ymax float64) { return plotter.XYRange(l.pts) }

// GlyphBoxes implements gonum.GlyphBoxer: room for every row above each
// point.
func (l *aboveLabels) GlyphBoxes(plt *gonum.Plot) []gonum.GlyphBox {
	h := l.lineHeight()
	boxes := make([]gonum.GlyphBox, len(l.pts))
	for i, pt := range l.pts {
		w := l.style.Width(l.text[i])
		boxes[i] = gonum.GlyphBox{X: plt.X.Norm(pt.X), Y: plt.Y.Norm(pt.Y),
			Rectangle: vg.Rectangle{Min: vg.Point{X: -w / 2}, Max: vg.Point{X: w / 2, Y: labelOffset + labelRows*h}}}
	}
	return boxes
}

// shareWords is a completed share as a label: "100% done", "1.5% done".
func shareWords(share float64) string { return report.SharePercent(share) + " done" }

// seedsWith returns, per policy of d, the seeds on which m has a value.
func seedsWith(d *runs.PlotData, m *metrics.Metric) []int {
	var n []int
	for p := range d.Runs.Policies {
		vals, _ := d.Runs.Values(p, m)
		n = append(n, len(vals))
	}
	return n
}

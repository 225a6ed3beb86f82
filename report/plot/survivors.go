package plot

import (
	"fmt"
	"image/color"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
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
// sans font of size points.
func addLabelsAbove(p *gonum.Plot, pts plotter.XYs, labels []string, size float64) error {
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: labels})
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(size)
		lb.TextStyle[i].Font.Variant = "Sans"
		lb.TextStyle[i].XAlign = draw.XCenter
	}
	lb.Offset = vg.Point{Y: vg.Points(4)}
	p.Add(lb)
	return nil
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

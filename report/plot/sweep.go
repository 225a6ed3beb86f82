package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
)

// maxSweepPanels bounds the panels of a two-parameter sweep plot (one per
// value of the second parameter).
const maxSweepPanels = 12

// SweepFigures returns one figure per headline metric (those of
// distributionPanels, then the optional headline metrics the scenario
// reports, such as server.writes or recovery.recovered): the metric against
// the first parameter, one line per policy (mean over seeds, with its 95%
// confidence interval when there are several seeds). With two parameters,
// each value of the second gets its own panel.
func SweepFigures(sw *runs.Sweep) ([]NamedFigure, error) {
	if len(sw.Axes) == 0 || len(sw.Points) == 0 {
		return nil, fmt.Errorf("nothing to plot")
	}
	panels := 1
	if len(sw.Axes) == 2 {
		panels = len(sw.Axes[1].Values)
		if panels > maxSweepPanels {
			return nil, fmt.Errorf("the second parameter %s has %d values; plots show at most %d", sw.Axes[1].Name, panels, maxSweepPanels)
		}
	}
	// stats[point] computed once.
	stats := make([]report.MultiSeedDocument, len(sw.Points))
	surv := make([]survivors, len(sw.Points))
	anyLow := false
	for i := range sw.Points {
		stats[i] = report.Stats(sw.Points[i].Runs)
		surv[i] = survivorsOfRuns(sw.Points[i].Runs)
		anyLow = anyLow || surv[i].any()
	}
	x := sw.Axes[0]
	xLabel := x.Name
	if x.Title != "" {
		xLabel = x.Title
	}
	// xs are the first parameter's values as drawn: durations in the unit
	// their range suits.
	xs := x.Values
	if x.Unit == "ms" {
		unit := axisDurationUnit(max(math.Abs(x.Values[0]), math.Abs(x.Values[len(x.Values)-1])))
		xs = make([]float64, len(x.Values))
		for i, v := range x.Values {
			xs[i] = v / unit.ms
		}
		xLabel += " (" + unit.name + ")"
	} else if x.Unit != "" {
		xLabel += " (" + x.Unit + ")"
	}
	// The workload's own unit of work (sessions) leads, then the calls.
	var specs []panelSpec
	for _, m := range metrics.Headline(sw.Points[0].Runs.Metrics) {
		if m.Work != metrics.NotWork {
			specs = append(specs, panelSpec{m, m.Name, unitQuantity(m)})
		}
	}
	specs = append(specs, distributionPanels()...)
	for _, m := range sw.Points[0].Runs.Metrics {
		if m.Optional() && m.Headline && m.Work == metrics.NotWork {
			specs = append(specs, panelSpec{m, m.Name, unitQuantity(m)})
		}
	}
	var out []NamedFigure
	for _, spec := range specs {
		metric := spec.metric.Name
		cols := min(panels, 3)
		fig := &Figure{Cols: cols,
			Title: fmt.Sprintf("%s: %s against %s (%s)", sw.Scenario, strings.ToLower(spec.title), x.Name, report.SweepSeeds(sw))}
		if sw.Seeds > 1 {
			fig.Title = strings.TrimSuffix(fig.Title, ")") + "; bars: 95% CI)"
		}
		var notes []string
		if anyLow {
			notes = append(notes, fmt.Sprintf("ring: completes under %.0f%% of the share the best policy completes there", 100*LowCompletion))
		}
		if rows := (panels + cols - 1) / cols; rows > 2 {
			fig.Height = vg.Length(rows) * vg.Points(200)
		}
		largest := 0.0
		for i := range sw.Points {
			for pol := range sw.Policies {
				if s := stats[i].Policies[pol].Stats(metric).Summary; s != nil {
					largest = max(largest, math.Abs(s.Mean), math.Abs(s.CIHigh))
				}
			}
		}
		per, yLabel := metricAxis(spec.metric, spec.quantity, largest)
		under := hiddenLines(sw, stats, metric)
		figMax := 0.0
		for panel := range panels {
			title := ""
			if len(sw.Axes) == 2 {
				title = sw.Axes[1].Name + " = " + axisLabel(&sw.Axes[1], panel)
			}
			p := newPanel(title, xLabel, yLabel)
			p.Add(gridLines())
			ymax := 0.0
			for pol, name := range sw.Policies {
				var pts, rings, none plotter.XYs
				var errs plotter.YErrors
				for i, pt := range sw.Points {
					if len(pt.Index) == 2 && pt.Index[1] != panel {
						continue
					}
					ms := stats[i].Policies[pol].Stats(metric)
					if ms.Summary == nil {
						// No value here: a cross on the axis keeps the
						// policy visible.
						none = append(none, plotter.XY{X: xs[pt.Index[0]], Y: 0})
						continue
					}
					mean, ciLow, ciHigh := ms.Summary.Mean/per, ms.Summary.CILow/per, ms.Summary.CIHigh/per
					if surv[i].low[pol] {
						rings = append(rings, plotter.XY{X: xs[pt.Index[0]], Y: mean})
					}
					pts = append(pts, plotter.XY{X: xs[pt.Index[0]], Y: mean})
					errs = append(errs, struct{ Low, High float64 }{mean - ciLow, ciHigh - mean})
					ymax = max(ymax, ciHigh, mean)
				}
				if len(none) > 0 {
					sc, err := plotter.NewScatter(none)
					if err != nil {
						return nil, err
					}
					sc.Color, sc.Shape, sc.Radius = PolicyColor(pol), draw.CrossGlyph{}, vg.Points(4)
					p.Add(sc)
					if !slices.Contains(notes, noValueNote(spec.metric)) {
						notes = append(notes, noValueNote(spec.metric))
					}
				}
				if len(pts) == 0 {
					if panel == 0 {
						none := &plotter.Line{LineStyle: draw.LineStyle{Color: PolicyColor(pol), Width: vg.Points(2)}}
						fig.addLegend(name+" (no data)", none)
					}
					continue
				}
				line, points, err := plotter.NewLinePoints(pts)
				if err != nil {
					return nil, err
				}
				c := PolicyColor(pol)
				line.Color, line.Width = c, vg.Points(2)
				points.Color, points.Shape, points.Radius = c, draw.CircleGlyph{}, vg.Points(3)
				p.Add(line, points)
				if len(rings) > 0 {
					// Hollow: a white dot inside the policy's ring.
					sc, err := plotter.NewScatter(rings)
					if err != nil {
						return nil, err
					}
					sc.Color, sc.Shape, sc.Radius = color.NRGBA{0xff, 0xff, 0xff, 0xff}, draw.CircleGlyph{}, vg.Points(2)
					p.Add(sc)
				}
				if sw.Seeds > 1 {
					eb := &plotter.YErrorBars{XYs: pts, YErrors: errs,
						LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1)}, CapWidth: vg.Points(6)}
					p.Add(eb)
				}
				if panel == 0 {
					label := name
					if top, ok := under[pol]; ok {
						label += " (under " + sw.Policies[top] + ")"
					}
					fig.addLegend(label, line, points)
				}
			}
			lo, hi := xs[0], xs[len(xs)-1]
			pad := (hi - lo) * 0.03
			if pad == 0 {
				pad = max(math.Abs(hi)*0.1, 0.5)
			}
			p.X.Min, p.X.Max = lo-pad, hi+pad
			p.Y.Min = 0
			fig.Panels = append(fig.Panels, p)
			figMax = math.Max(figMax, ymax)
		}
		fig.Note = strings.Join(notes, "; ")
		// Panels share the y axis so that they compare at a glance.
		for _, p := range fig.Panels {
			p.Y.Max = math.Max(figMax*1.15, 1)
		}
		out = append(out, NamedFigure{Name: "sweep-" + strings.ReplaceAll(metric, ".", "-"), Figure: fig})
	}
	return out, nil
}

// hiddenLines finds the policies whose line of metric lies wholly under a
// later policy's (the same mean at every point of the sweep, so the later
// one, drawn over it, hides it): policy index to the index of the last
// policy drawn over it. The legend says so, since nothing else would.
func hiddenLines(sw *runs.Sweep, stats []report.MultiSeedDocument, metric string) map[int]int {
	series := func(pol int) []float64 {
		out := make([]float64, len(sw.Points))
		for i := range sw.Points {
			out[i] = math.NaN()
			if s := stats[i].Policies[pol].Stats(metric).Summary; s != nil {
				out[i] = s.Mean
			}
		}
		return out
	}
	same := func(a, b []float64) bool {
		for i := range a {
			if !(a[i] == b[i] || math.IsNaN(a[i]) && math.IsNaN(b[i])) {
				return false
			}
		}
		return true
	}
	under := map[int]int{}
	for pol := range sw.Policies {
		mine := series(pol)
		for later := len(sw.Policies) - 1; later > pol; later-- {
			if same(mine, series(later)) {
				under[pol] = later
				break
			}
		}
	}
	return under
}

// noValueNote explains the crosses on the axis of a sweep plot.
func noValueNote(m *metrics.Metric) string {
	return "×: no value (" + m.MissingReason() + ")"
}

// unitQuantity is the y axis label of a metric that has no panel of its own
// in distributionPanels: what it counts, or else its unit.
func unitQuantity(m *metrics.Metric) string {
	if m.Quantity != "" {
		return m.Quantity
	}
	switch m.Unit {
	case metrics.Milliseconds:
		return "time"
	case metrics.Ratio:
		return m.Part()
	}
	return "count per run"
}

// axisLabel is value i of a swept parameter as people write it: durations
// without zero components ("1m", not "1m0s"), counts with thousands
// separators.
func axisLabel(ax *runs.Axis, i int) string {
	switch ax.Unit {
	case "ms":
		return plotDuration(msDuration(ax.Values[i]))
	case "":
		return plotNumber(ax.Values[i], 0)
	}
	return ax.Labels[i]
}

package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/tune"
)

// Influence returns the indexes of r's parameters, most influential first:
// by the range of the objective's mean over a parameter's values (the
// mean over the points run at each value), a main effect.
func Influence(r *tune.Result) []int {
	effect := make([]float64, len(r.Space))
	for i, q := range r.Space {
		sum, n := make([]float64, len(q.Values)), make([]int, len(q.Values))
		for _, c := range r.Candidates {
			if c.Invalid == "" && c.Objective.N > 0 {
				sum[c.Index[i]] += c.Objective.Mean
				n[c.Index[i]]++
			}
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for v := range sum {
			if n[v] > 0 {
				lo, hi = min(lo, sum[v]/float64(n[v])), max(hi, sum[v]/float64(n[v]))
			}
		}
		effect[i] = max(hi-lo, 0)
	}
	order := make([]int, len(r.Space))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case effect[a] > effect[b]:
			return -1
		case effect[a] < effect[b]:
			return 1
		}
		return 0
	})
	return order
}

// Glyphs of the explored space: feasible points filled, the others
// crossed, the chosen one ringed.
var (
	feasibleColor   = color.NRGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff}
	infeasibleColor = color.NRGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
)

// TuneFigure draws the space a search explored. With one parameter that
// varies: the objective (mean over seeds, with its 95% interval) against
// it. With more: the points over the two most influential (Influence),
// each labelled with its objective; a point that varies only in the
// others is drawn over the same spot, and the label is the one the search
// ranks first (tune's Result.Rank), so the chosen point's spot shows it.
// Feasible points are filled, the others crossed, the chosen one ringed.
func TuneFigure(r *tune.Result) (*Figure, error) {
	var valid []*tune.Candidate
	for _, c := range r.Candidates {
		if c.Invalid == "" {
			valid = append(valid, c)
		}
	}
	if len(valid) == 0 {
		return nil, fmt.Errorf("no point ran")
	}
	m := r.Objective.Metric
	title := fmt.Sprintf("tune %s: %s; seeds %d", r.Policy, r.Objective.Goal(), r.Seeds)
	// The parameters that vary (more than one value), most influential
	// first.
	var order []int
	for _, i := range Influence(r) {
		if len(r.Space[i].Values) > 1 {
			order = append(order, i)
		}
	}
	var p *gonum.Plot
	var err error
	switch len(order) {
	case 0:
		p, err = tuneLine(r, valid, m, 0)
	case 1:
		p, err = tuneLine(r, valid, m, order[0])
	default:
		p, err = tuneScatter(r, valid, m, order[0], order[1], len(order) > 2)
	}
	if err != nil {
		return nil, err
	}
	return &Figure{Title: title, Cols: 1, Panels: []*gonum.Plot{p},
		Note: "filled: meets every target; ×: fails one; ring: the chosen point"}, nil
}

// axisValue is value v of parameter q as drawn: a count, or milliseconds.
func axisValue(q *kinds.Param, v int64) float64 {
	if q.Unit == kinds.Duration {
		return float64(v) / 1e6
	}
	return float64(v)
}

func axisTitle(r *tune.Result, i int) (string, *kinds.Param) {
	q, _ := kinds.LookupParam(r.Space[i].Name)
	t := q.Title
	if q.Unit == kinds.Duration {
		t += " (ms)"
	}
	return t, q
}

// logAxis puts a on a log scale when values span a factor of 20 or more.
func logAxis(a *gonum.Axis, values []float64) {
	lo, hi := slices.Min(values), slices.Max(values)
	if lo > 0 && hi/lo >= 20 {
		a.Scale = gonum.LogScale{}
		a.Tick.Marker = gonum.LogTicks{Prec: -1}
	}
}

func tuneLine(r *tune.Result, valid []*tune.Candidate, m *metrics.Metric, a int) (*gonum.Plot, error) {
	xt, q := axisTitle(r, a)
	p := newPanel("", xt, "mean "+m.Name)
	p.Add(gridLines())
	var xs []float64
	var g glyphSets
	var errs plotter.XYs
	for _, c := range valid {
		if c.Objective.N == 0 {
			continue
		}
		x := axisValue(q, c.Values[a])
		xs = append(xs, x)
		g.add(r, c, plotter.XY{X: x, Y: c.Objective.Mean})
		errs = append(errs, plotter.XY{X: x, Y: c.Objective.CILow}, plotter.XY{X: x, Y: c.Objective.CIHigh})
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("no point has a value of %s", m.Name)
	}
	logAxis(&p.X, xs)
	for i := 0; i+1 < len(errs); i += 2 {
		l, err := plotter.NewLine(errs[i : i+2])
		if err != nil {
			return nil, err
		}
		l.Color = infeasibleColor
		p.Add(l)
	}
	return p, g.draw(p)
}

// glyphSets are a tune plot's points by how they are drawn: feasible, not,
// and the chosen one (drawn over its set's glyph).
type glyphSets struct{ feasible, other, chosen plotter.XYs }

func (g *glyphSets) add(r *tune.Result, c *tune.Candidate, pt plotter.XY) {
	if c.Feasible {
		g.feasible = append(g.feasible, pt)
	} else {
		g.other = append(g.other, pt)
	}
	if c == r.Chosen {
		g.chosen = append(g.chosen, pt)
	}
}

func tuneScatter(r *tune.Result, valid []*tune.Candidate, m *metrics.Metric, a, b int, others bool) (*gonum.Plot, error) {
	xt, qx := axisTitle(r, a)
	yt, qy := axisTitle(r, b)
	title := "label: mean " + m.Name
	if others {
		title += " (the best over the other parameters)"
	}
	p := newPanel(title, xt, yt)
	p.Add(gridLines())
	type spot struct{ x, y float64 }
	best := map[spot]*tune.Candidate{}
	var spots []spot
	for _, c := range valid {
		s := spot{axisValue(qx, c.Values[a]), axisValue(qy, c.Values[b])}
		old, seen := best[s]
		switch {
		case !seen:
			spots = append(spots, s)
			best[s] = c
		case r.Rank(c, old) < 0:
			best[s] = c
		}
	}
	var xs, ys []float64
	var g glyphSets
	labels := plotter.XYLabels{}
	for _, s := range spots {
		c := best[s]
		xs, ys = append(xs, s.x), append(ys, s.y)
		pt := plotter.XY{X: s.x, Y: s.y}
		g.add(r, c, pt)
		text := "none"
		if c.Objective.N > 0 {
			text = strconv.FormatFloat(metrics.Round(c.Objective.Mean, m.Decimals()), 'f', -1, 64)
		}
		labels.XYs = append(labels.XYs, pt)
		labels.Labels = append(labels.Labels, text)
	}
	logAxis(&p.X, xs)
	logAxis(&p.Y, ys)
	if err := g.draw(p); err != nil {
		return nil, err
	}
	l, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = vg.Points(9)
		l.TextStyle[i].Font.Variant = "Sans"
	}
	l.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(4)}
	p.Add(l)
	return p, nil
}

// draw adds g's points to p.
func (g *glyphSets) draw(p *gonum.Plot) error {
	for _, set := range []struct {
		pts    plotter.XYs
		shape  draw.GlyphDrawer
		colour color.Color
		radius vg.Length
	}{
		{g.other, draw.CrossGlyph{}, infeasibleColor, vg.Points(4)},
		{g.feasible, draw.CircleGlyph{}, feasibleColor, vg.Points(4)},
		{g.chosen, draw.RingGlyph{}, color.Black, vg.Points(9)},
	} {
		if len(set.pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(set.pts)
		if err != nil {
			return err
		}
		sc.Shape, sc.Color, sc.Radius = set.shape, set.colour, set.radius
		p.Add(sc)
	}
	return nil
}

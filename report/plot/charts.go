package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"
	"time"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// NamedFigure is a figure with the base name of its files.
type NamedFigure struct {
	Name   string // e.g. "timeline": written as timeline.svg and timeline.png
	Figure *Figure
}

// Figures returns every plot of d, in a fixed order: timeline, load, cdf,
// outcomes, with priorities priorities, with more than one seed
// distributions, and for a pool (HasMembers) members.
func Figures(d *runs.PlotData) ([]NamedFigure, error) {
	out := []NamedFigure{}
	tl, err := TimelineFigure(d)
	if err != nil {
		return nil, err
	}
	out = append(out, NamedFigure{"timeline", tl})
	load, err := LoadFigure(d)
	if err != nil {
		return nil, err
	}
	out = append(out, NamedFigure{"load", load})
	cdf, err := CDFFigure(d)
	if err != nil {
		return nil, err
	}
	out = append(out, NamedFigure{"cdf", cdf})
	oc, err := OutcomesFigure(d)
	if err != nil {
		return nil, err
	}
	out = append(out, NamedFigure{"outcomes", oc})
	if pf, err := PrioritiesFigure(d); err != nil {
		return nil, err
	} else if pf != nil {
		out = append(out, NamedFigure{"priorities", pf})
	}
	if d.Runs.Seeds() > 1 {
		dist, err := DistributionFigure(d)
		if err != nil {
			return nil, err
		}
		out = append(out, NamedFigure{"distributions", dist})
	}
	if HasMembers(d) {
		m, err := MembersFigure(d)
		if err != nil {
			return nil, err
		}
		out = append(out, NamedFigure{"members", m})
	}
	return out, nil
}

// SVGFigures draws every figure of d (Figures) as SVG, for
// report.WriteHTML.
func SVGFigures(d *runs.PlotData) ([]report.SVGFigure, error) {
	figs, err := Figures(d)
	if err != nil {
		return nil, err
	}
	var out []report.SVGFigure
	for _, f := range figs {
		var buf bytes.Buffer
		if err := f.Figure.Write(&buf, SVG); err != nil {
			return nil, err
		}
		out = append(out, report.SVGFigure{Caption: f.Figure.Title, HowToRead: howToRead[f.Name], SVG: buf.Bytes()})
	}
	return out, nil
}

// seedWords says which seeds m ran: "seed 1" or "seeds 1–100".
func seedWords(m *runs.MultiSeed) string {
	if k := m.Seeds(); k > 1 {
		return fmt.Sprintf("seeds %d–%d", m.FirstSeed, m.FirstSeed+uint64(k)-1)
	}
	return fmt.Sprintf("seed %d", m.FirstSeed)
}

// gridLines returns light horizontal grid lines for a panel.
func gridLines() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Width = 0
	g.Horizontal.Color = colorGrid
	return g
}

// capacityStep is the server's admission limit per bucket from At on.
type capacityStep struct {
	At       time.Duration
	Capacity float64
}

// capacitySteps returns the server's admission limit per bucket, step by
// step, and its largest value; none for a server that cannot say its
// capacity (sim.CapacityProfile).
func capacitySteps(s sim.ServerModel, bucket time.Duration) ([]capacityStep, float64) {
	p, ok := sim.ModelAs[sim.CapacityProfile](s)
	if !ok {
		return nil, 0
	}
	var steps []capacityStep
	peak := 0.0
	for _, st := range p.Capacity() {
		c := 0.0
		if st.Requests > 0 && st.Per > 0 {
			c = st.Requests * float64(bucket) / float64(st.Per)
		}
		peak = max(peak, c)
		steps = append(steps, capacityStep{st.At, c})
	}
	return steps, peak
}

// capacityLine draws the server's admission limit per bucket as a step
// line from 0 to end, with times in unit.
func capacityLine(s sim.ServerModel, bucket time.Duration, end time.Duration, unit durationUnit) (*plotter.Line, error) {
	steps, _ := capacitySteps(s, bucket)
	if len(steps) == 0 {
		return nil, nil
	}
	var pts plotter.XYs
	for _, st := range steps {
		if st.At > end {
			break
		}
		pts = append(pts, plotter.XY{X: unit.of(st.At), Y: st.Capacity})
	}
	pts = append(pts, plotter.XY{X: unit.of(end), Y: pts[len(pts)-1].Y})
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	l.StepStyle = plotter.PostStep
	l.Color = colorCapacity
	l.Width = vg.Points(2)
	l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	return l, nil
}

// TimelineFigure shows, per policy, the requests arriving in each time
// bucket, admitted at the bottom of each bar and the rejected stacked on
// top by class (rejectClasses: 429, 529, transient, terminal, each in its
// colour), with the server's capacity as a dashed line when the server
// can say it (sim.CapacityProfile) and, in a panel, only where it binds
// (capacityBinds). When some admitted work was answered after its
// client had stopped waiting (Timeline.Wasted, a queue working on
// timed-out requests), the admitted part is split: served in time at the
// bottom, wasted above it, so that a storm of work no one waits for does
// not look like a server serving several times its capacity. For a key
// with rate limits, a note names them and says which bound.
//
// Panels share the y axis, so that they compare at a glance, unless a
// panel's own peak (its tallest bar or the capacity, whichever is higher)
// would then fill less than a quarter of its height: then each panel gets
// its own y scale, and the title says so. One policy's retry storm would
// otherwise squash every other panel and the capacity line to a few pixels.
func TimelineFigure(d *runs.PlotData) (*Figure, error) {
	l, err := layoutTimelines(d, func(t *runs.Timeline, i int) float64 { return admittedAt(t, i) + float64(t.Rejected[i]) })
	if err != nil {
		return nil, err
	}
	wasted := slices.ContainsFunc(d.Timelines, func(t runs.Timeline) bool { return slices.ContainsFunc(t.Wasted, func(n int) bool { return n > 0 }) })
	bucket, end, unit := l.bucket, l.end, l.unit
	what := "admitted and rejected by class"
	if wasted {
		what = "served in time, wasted (client gone) and rejected by class"
	}
	title := fmt.Sprintf("%s: requests per %s, %s (seed %d)", d.Scenario, plotDuration(bucket), what, d.Runs.FirstSeed)
	served := d.Timelines[0].Served != nil
	if served {
		// A queue's work is drawn when its workers did it: a storm of
		// arrivals waits its turn and never stands above the capacity.
		title = fmt.Sprintf("%s: work served per %s (in requests of mean service), wasted and rejected (seed %d)", d.Scenario, plotDuration(bucket), d.Runs.FirstSeed)
	}
	fig := l.figure(title)
	// The classes any policy met: every panel stacks and lists the same.
	var classes []rejectClass
	for _, c := range rejectClasses {
		if slices.ContainsFunc(d.Timelines, func(t runs.Timeline) bool {
			return slices.ContainsFunc(c.series(&t), func(n int) bool { return n > 0 })
		}) {
			classes = append(classes, c)
		}
	}
	steps, _ := capacitySteps(d.Server, bucket)
	_, key := sim.ModelAs[sim.KeyLimiter](d.Server)
	drawn := false
	for pi, t := range d.Timelines {
		p := newPanel(t.Policy, "time since start ("+unit.name+")", "requests per "+plotDuration(bucket))
		p.Add(gridLines())
		if err := incidentSpan(fig, p, d.Incident, unit); err != nil {
			return nil, err
		}
		outline := draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}
		// bars returns the bars of height(i) in each bucket, in fill.
		bars := func(height func(i int) float64, fill color.Color) *plotter.Histogram {
			bins := make([]plotter.HistogramBin, len(t.Admitted))
			for i := range bins {
				bins[i] = plotter.HistogramBin{Min: unit.of(time.Duration(i) * bucket), Max: unit.of(time.Duration(i+1) * bucket), Weight: height(i)}
			}
			return &plotter.Histogram{Bins: bins, Width: unit.of(bucket), FillColor: fill, LineStyle: outline}
		}
		// Stacked from the bottom: admitted, then each class of rejection;
		// drawn from the top down, each bar the sum of those below it.
		for k := len(classes) - 1; k >= 0; k-- {
			h := bars(func(i int) float64 {
				n := admittedAt(&t, i)
				for _, c := range classes[:k+1] {
					n += float64(c.series(&t)[i])
				}
				return n
			}, classes[k].color)
			p.Add(h)
			label := classes[k].label
			if k == len(classes)-1 {
				label += " (top)"
			}
			fig.addLegend(label, h)
		}
		switch {
		case wasted:
			waste := bars(func(i int) float64 { return admittedAt(&t, i) }, colorWasted)
			ok := bars(func(i int) float64 { return admittedAt(&t, i) - wastedAt(&t, i) }, colorAdmitted)
			p.Add(waste, ok)
			fig.addLegend("wasted: client gone", waste)
			fig.addLegend("served in time (bottom)", ok)
		case served:
			ok := bars(func(i int) float64 { return admittedAt(&t, i) }, colorAdmitted)
			p.Add(ok)
			fig.addLegend("served (bottom)", ok)
		default:
			ok := bars(func(i int) float64 { return admittedAt(&t, i) }, colorAdmitted)
			p.Add(ok)
			fig.addLegend("admitted (bottom)", ok)
		}
		if capacityBinds(&t, steps, key) {
			capLine, err := capacityLine(d.Server, bucket, end, unit)
			if err != nil {
				return nil, err
			}
			p.Add(capLine)
			fig.addLegend("capacity, where it binds", capLine)
			drawn = true
		}
		l.place(fig, p, pi)
	}
	fig.Note = keyLimitsNote(d, steps, drawn)
	return fig, nil
}

// rejectClass is one class of rejection (policies.Class) as the timeline
// stacks it: its series, words and colour.
type rejectClass struct {
	label  string
	color  color.NRGBA
	series func(t *runs.Timeline) []int
}

// rejectClasses are the classes of rejection from the bottom of a bar up,
// in the colours every figure gives them (classColors).
var rejectClasses = []rejectClass{
	{"429 rate limited (retry-after)", colorRetryAfter, func(t *runs.Timeline) []int { return t.RejectedBy.RetryAfter }},
	{"529 overloaded (capacity)", colorOverloaded, func(t *runs.Timeline) []int { return t.RejectedBy.Capacity }},
	{"transient (5xx, timeouts)", colorTransient, func(t *runs.Timeline) []int { return t.RejectedBy.Transient }},
	{"terminal (4xx)", colorTerminal, func(t *runs.Timeline) []int { return t.RejectedBy.Terminal }},
}

// admittedAt is the admitted part of t's bar in bucket i: the work served
// in it for a queue (Timeline.Served), else the requests admitted.
func admittedAt(t *runs.Timeline, i int) float64 {
	if t.Served != nil {
		return t.Served[i]
	}
	return float64(t.Admitted[i])
}

// wastedAt is the wasted part of admittedAt.
func wastedAt(t *runs.Timeline, i int) float64 {
	if t.Served != nil {
		return t.ServedLate[i]
	}
	return float64(t.Wasted[i])
}

// capacityBinds reports whether the server's capacity (steps, per bucket)
// bound t somewhere: a bucket in which the server admitted up to its
// capacity (within one request: a request on a bucket's edge). For a key
// with rate limits (key), whose requests bucket lets a burst through
// above its rate, most of its 429s (the key's own rejections; 529s come
// from the API behind it) must also come in such buckets: where 429s
// come with admissions well below the line, a token limit bound them,
// and a line there would only mislead.
func capacityBinds(t *runs.Timeline, steps []capacityStep, key bool) bool {
	if len(steps) == 0 {
		return false
	}
	if key {
		at, below := keyRejections(t, steps)
		return at > 0 && at >= below
	}
	for i := range t.Buckets() {
		if c := capacityAt(steps, time.Duration(i)*t.Bucket); c >= 1 && admittedAt(t, i) >= c-1 {
			return true
		}
	}
	return false
}

// keyRejections counts t's 429s in buckets that admitted up to the
// capacity (within one request) and in those that admitted less.
func keyRejections(t *runs.Timeline, steps []capacityStep) (at, below int) {
	for i := range t.Buckets() {
		c := capacityAt(steps, time.Duration(i)*t.Bucket)
		if float64(t.Admitted[i]) >= c-1 {
			at += t.RejectedBy.RetryAfter[i]
		} else {
			below += t.RejectedBy.RetryAfter[i]
		}
	}
	return at, below
}

// capacityAt returns the capacity per bucket of steps at time at.
func capacityAt(steps []capacityStep, at time.Duration) float64 {
	c := 0.0
	for _, st := range steps {
		if st.At > at {
			break
		}
		c = st.Capacity
	}
	return c
}

// keyLimitsNote names a rate-limited key's limits, for the timeline of a
// server that is one (sim.KeyLimiter), and says what the dashed line is:
// the requests limit where it bound (drawn), or that it never bound, so
// that the 429s came from a token limit. "" for any other server.
func keyLimitsNote(d *runs.PlotData, steps []capacityStep, drawn bool) string {
	key, ok := sim.ModelAs[sim.KeyLimiter](d.Server)
	if !ok {
		return ""
	}
	requests, input, output := key.KeyLimits()
	var limits []string
	for _, l := range []struct {
		n    int64
		what string
	}{{requests, "requests"}, {input, "input tokens"}, {output, "output tokens"}} {
		if l.n > 0 {
			limits = append(limits, report.ShortCount(float64(l.n))+" "+l.what)
		}
	}
	note := "key: " + strings.Join(limits, ", ") + " a minute"
	if requests == 0 {
		return note
	}
	if drawn {
		note += "; dashed: the requests limit, where it bound"
	} else {
		note += "; the requests limit bound no policy"
	}
	at, below := 0, 0
	for i := range d.Timelines {
		a, b := keyRejections(&d.Timelines[i], steps)
		at, below = at+a, below+b
	}
	if below > 0 && len(limits) > 1 {
		note += fmt.Sprintf("; %s of 429s came below it: a token limit", report.SharePercent(float64(below)/float64(at+below)))
	}
	return note
}

// colorIncident shades the span of a scenario's incident: a light grey
// under the bars, no policy's or series' colour.
var colorIncident = color.NRGBA{0x00, 0x00, 0x00, 0x14}

// incidentSpan shades in (if set) across the panel's height, under what
// is added after it, with a legend entry.
func incidentSpan(fig *Figure, p *gonum.Plot, in sim.Incident, unit durationUnit) error {
	if in.End <= in.Start {
		return nil
	}
	x0, x1 := unit.of(in.Start), unit.of(in.End)
	// Clipped to the panel: the y range is set later, from the data.
	poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: 0}, {X: x1, Y: 0}, {X: x1, Y: 1e12}, {X: x0, Y: 1e12}})
	if err != nil {
		return err
	}
	poly.Color = colorIncident
	poly.LineStyle.Width = 0
	p.Add(poly)
	fig.addLegend("incident", poly)
	return nil
}

// timelineLayout is what the timeline and load figures share: one panel per
// policy over the same time axis, sharing the y axis unless a panel's own
// peak (its tallest series or the capacity) would then fill less than a
// quarter of its height.
type timelineLayout struct {
	bucket, end time.Duration
	unit        durationUnit
	peaks       []float64 // each panel's peak
	sharedMax   float64
	perPanel    bool
	// ends are each panel's last bucket's end; perPanelX gives each panel
	// its own x range, when some policy's timeline ends before a quarter
	// of the longest (it would be a sliver at the left).
	ends       []time.Duration
	perPanelX  bool
	cols, rows int
}

// layoutTimelines lays out d's timelines; peak(t, i) is the height a panel
// of timeline t reaches in bucket i.
func layoutTimelines(d *runs.PlotData, peak func(t *runs.Timeline, i int) float64) (*timelineLayout, error) {
	n := len(d.Timelines)
	if n == 0 {
		return nil, fmt.Errorf("no timelines to plot")
	}
	l := &timelineLayout{bucket: d.Timelines[0].Bucket, peaks: make([]float64, n), cols: 1}
	_, capPeak := capacitySteps(d.Server, l.bucket)
	buckets := 1
	for p := range d.Timelines {
		t := &d.Timelines[p]
		buckets = max(buckets, t.Buckets())
		l.peaks[p] = capPeak
		for i := range t.Buckets() {
			l.peaks[p] = max(l.peaks[p], peak(t, i))
		}
	}
	l.sharedMax = slices.Max(l.peaks)
	l.perPanel = slices.Min(l.peaks) < l.sharedMax/4
	l.end = time.Duration(buckets) * l.bucket
	for p := range d.Timelines {
		l.ends = append(l.ends, time.Duration(max(d.Timelines[p].Buckets(), 1))*l.bucket)
	}
	l.perPanelX = slices.Min(l.ends) < l.end/4
	l.unit = axisDurationUnit(float64(l.end) / float64(time.Millisecond))
	if n > 1 {
		l.cols = 2
	}
	l.rows = (n + l.cols - 1) / l.cols
	return l, nil
}

// figure returns the figure, its title saying when each panel has its own
// y scale.
func (l *timelineLayout) figure(title string) *Figure {
	if l.perPanel {
		title = strings.TrimSuffix(title, ")") + "; y scale per panel)"
	}
	if l.perPanelX {
		title = strings.TrimSuffix(title, ")") + "; x range per panel)"
	}
	return &Figure{Title: title, Cols: l.cols, Height: max(FigureHeight, vg.Length(l.rows)*vg.Points(200))}
}

// place sets panel pi's axes, with a little room above its peak, and adds
// it to fig.
func (l *timelineLayout) place(fig *Figure, p *gonum.Plot, pi int) {
	p.X.Min, p.X.Max = 0, l.unit.of(l.end)
	if l.perPanelX {
		p.X.Max = l.unit.of(l.ends[pi])
	}
	ymax := l.sharedMax
	if l.perPanel {
		ymax = l.peaks[pi]
	}
	p.Y.Min, p.Y.Max = 0, math.Ceil(ymax*1.08)
	fig.Panels = append(fig.Panels, p)
}

// LoadFigure shows, per policy, the load the clients offered in each time
// bucket against the server's capacity: attempts sent, first attempts at
// the bottom of each bar and retries stacked on top, with the capacity as
// a dashed line (when the server can say it), the goodput (operations
// completed per bucket), the attempts in flight at each bucket's end, and,
// for a policy whose retry controls rejected attempts locally, those
// rejections per bucket. The y axis is shared or per panel as in
// TimelineFigure.
func LoadFigure(d *runs.PlotData) (*Figure, error) {
	l, err := layoutTimelines(d, func(t *runs.Timeline, i int) float64 {
		return max(float64(t.Offered(i)), float64(t.Completed[i]), float64(t.InFlight[i]), float64(t.LocalRejections(i)))
	})
	if err != nil {
		return nil, err
	}
	end, unit := l.end, l.unit
	per := plotDuration(l.bucket)
	title := fmt.Sprintf("%s: offered load per %s against capacity (seed %d)", d.Scenario, per, d.Runs.FirstSeed)
	if steps, _ := capacitySteps(d.Server, l.bucket); len(steps) == 0 {
		// A server without a capacity (contention, a queue's time scale
		// aside) is not drawn against one.
		title = fmt.Sprintf("%s: offered load per %s (seed %d)", d.Scenario, per, d.Runs.FirstSeed)
	}
	fig := l.figure(title)
	for pi := range d.Timelines {
		t := &d.Timelines[pi]
		p := newPanel(t.Policy, "time since start ("+unit.name+")", "count per "+per)
		p.Add(gridLines())
		if err := incidentSpan(fig, p, d.Incident, unit); err != nil {
			return nil, err
		}
		ls, err := newLoadSeries(d.Server, t, end, unit)
		if err != nil {
			return nil, err
		}
		p.Add(ls.retries, ls.firsts)
		// Listed top to bottom as the bars stack, then the lines.
		fig.addLegend("retries (top)", ls.retries)
		fig.addLegend("first attempts (bottom)", ls.firsts)
		if ls.capacity != nil {
			p.Add(ls.capacity)
			fig.addLegend("capacity", ls.capacity)
		}
		p.Add(ls.goodput, ls.inFlight)
		fig.addLegend("goodput: operations completed", ls.goodput)
		fig.addLegend("in flight at the bucket's end", ls.inFlight)
		if ls.local != nil {
			p.Add(ls.local)
			fig.addLegend("rejected locally (retry controls)", ls.local)
		}
		l.place(fig, p, pi)
	}
	return fig, nil
}

// loadSeries are what one panel of the load figure draws.
type loadSeries struct {
	// retries are drawn as bars of the attempts sent (their top part),
	// firsts over them as bars of the first attempts.
	retries, firsts *plotter.Histogram
	// capacity is nil for a server that cannot say it; local is nil when
	// the retry controls rejected nothing.
	capacity, goodput, inFlight, local *plotter.Line
}

// newLoadSeries draws t's series from 0 to end, times in unit.
func newLoadSeries(s sim.ServerModel, t *runs.Timeline, end time.Duration, unit durationUnit) (*loadSeries, error) {
	bucket := t.Bucket
	offered := make([]plotter.HistogramBin, t.Buckets())
	first := make([]plotter.HistogramBin, t.Buckets())
	local := make([]int, t.Buckets())
	anyLocal := false
	for i := range t.Buckets() {
		lo, hi := unit.of(time.Duration(i)*bucket), unit.of(time.Duration(i+1)*bucket)
		offered[i] = plotter.HistogramBin{Min: lo, Max: hi, Weight: float64(t.Offered(i))}
		first[i] = plotter.HistogramBin{Min: lo, Max: hi, Weight: float64(t.FirstAttempts[i])}
		local[i] = t.LocalRejections(i)
		anyLocal = anyLocal || local[i] > 0
	}
	outline := draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}
	ls := &loadSeries{
		retries: &plotter.Histogram{Bins: offered, Width: unit.of(bucket), FillColor: colorRetries, LineStyle: outline},
		firsts:  &plotter.Histogram{Bins: first, Width: unit.of(bucket), FillColor: colorFirstAttempts, LineStyle: outline},
	}
	var err error
	if ls.capacity, err = capacityLine(s, bucket, end, unit); err != nil {
		return nil, err
	}
	if ls.goodput, err = bucketLine(t.Completed, bucket, end, unit); err != nil {
		return nil, err
	}
	ls.goodput.Color, ls.goodput.Width = colorGoodput, vg.Points(2.5)
	if ls.inFlight, err = levelLine(t.InFlight, bucket, unit); err != nil {
		return nil, err
	}
	ls.inFlight.Color, ls.inFlight.Width = colorInFlight, vg.Points(2)
	ls.inFlight.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	if anyLocal {
		if ls.local, err = bucketLine(local, bucket, end, unit); err != nil {
			return nil, err
		}
		ls.local.Color, ls.local.Width = colorLocalRejected, vg.Points(1.5)
	}
	return ls, nil
}

// bucketLine draws counts per bucket as a step line from 0 to end (0 after
// the last bucket), with times in unit.
func bucketLine(counts []int, bucket, end time.Duration, unit durationUnit) (*plotter.Line, error) {
	pts := make(plotter.XYs, 0, len(counts)+2)
	for i, c := range counts {
		pts = append(pts, plotter.XY{X: unit.of(time.Duration(i) * bucket), Y: float64(c)})
	}
	last := 0.0
	if len(counts) > 0 {
		last = float64(counts[len(counts)-1])
	}
	if e := time.Duration(len(counts)) * bucket; e < end {
		pts = append(pts, plotter.XY{X: unit.of(e), Y: 0})
		last = 0
	}
	pts = append(pts, plotter.XY{X: unit.of(end), Y: last})
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	l.StepStyle = plotter.PostStep
	return l, nil
}

// levelLine draws a level known at each bucket's end (0 at the start) as
// straight segments between those times, with times in unit.
func levelLine(levels []int, bucket time.Duration, unit durationUnit) (*plotter.Line, error) {
	pts := make(plotter.XYs, 0, len(levels)+1)
	pts = append(pts, plotter.XY{})
	for i, v := range levels {
		pts = append(pts, plotter.XY{X: unit.of(time.Duration(i+1) * bucket), Y: float64(v)})
	}
	return plotter.NewLine(pts)
}

// CDFFigure shows, per policy, the fraction of all operations completed
// within each time from their start, pooled over every seed; a curve that
// stops below 1 means give-ups. The latencies come from histograms
// (runs.PlotData.Completions): each step is drawn at most
// 2^-stats.HistogramBits of its time after the exact one, never before.
func CDFFigure(d *runs.PlotData) (*Figure, error) {
	seeds := d.Runs.Seeds()
	longest := time.Duration(0)
	for _, h := range d.Completions {
		longest = max(longest, time.Duration(h.Max()))
	}
	if longest == 0 {
		longest = time.Second
	}
	unit := axisDurationUnit(float64(longest) / float64(time.Millisecond))
	xmax := unit.of(longest) * 1.05
	p := newPanel("", "time from an operation's start to its completion ("+unit.name+")", "fraction of operations completed")
	p.Add(gridLines())
	fig := &Figure{Cols: 1, Panels: []*gonum.Plot{p}}
	allOps := make([]float64, len(d.Completions))
	for i, h := range d.Completions {
		allOps[i] = operationsRun(d, i)
		// max 1: a run with no operations (an open loop that drew none) has
		// no completions either.
		ops := max(allOps[i], 1)
		// Steps closer than a fraction of a pixel apart merge into one, so
		// that thousands of pooled completions do not bloat the SVG.
		minStep := xmax / 4000
		pts := plotter.XYs{{X: 0, Y: 0}}
		h.Steps(func(at int64, cum uint64) {
			pt := plotter.XY{X: unit.of(time.Duration(at)), Y: float64(cum) / ops}
			if last := &pts[len(pts)-1]; len(pts) > 1 && pt.X-last.X < minStep {
				last.Y = pt.Y
				return
			}
			pts = append(pts, pt)
		})
		completed := float64(h.Count()) / ops
		pts = append(pts, plotter.XY{X: xmax, Y: completed})
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		line.StepStyle = plotter.PostStep
		line.Color = PolicyColor(i)
		line.Width = vg.Points(2.5)
		p.Add(line)
		name := d.Runs.Policies[i]
		fig.addLegend(fmt.Sprintf("%s (%s completed)", name, report.SharePercent(completed)), line)
	}
	p.X.Min, p.X.Max = 0, xmax
	p.Y.Min, p.Y.Max = 0, 1.02
	pooled := fmt.Sprintf("seed %d", d.Runs.FirstSeed)
	if seeds > 1 {
		pooled = fmt.Sprintf("seeds %d–%d", d.Runs.FirstSeed, d.Runs.FirstSeed+uint64(seeds)-1)
	}
	title := fmt.Sprintf("%s: completion-time CDF per policy (%s)", d.Scenario, pooled)
	if len(allOps) > 0 && slices.Min(allOps) == slices.Max(allOps) {
		title = strings.TrimSuffix(title, ")") + fmt.Sprintf(", %s operations each)", plotCount(int(allOps[0])))
	}
	fig.Title = title
	return fig, nil
}

// operationsRun is the number of operations policy p ran over every seed:
// those that completed and those that gave up (every operation that
// starts ends one way or the other). It is the workload's size times the
// seeds for a burst, but an open loop draws its arrivals afresh for each
// seed and a chained workload starts more operations when calls fail.
func operationsRun(d *runs.PlotData, p int) float64 {
	total := 0.0
	for _, m := range []*metrics.Metric{metrics.Completed, metrics.GaveUp} {
		vals, _ := d.Runs.Values(p, m)
		for _, v := range vals {
			total += v
		}
	}
	return total
}

// barPanel draws one bar per policy: the metric's mean over the seeds, with
// its 95% confidence interval when there is more than one seed.
func barPanel(d *runs.PlotData, m *metrics.Metric, title, yLabel string) (*gonum.Plot, error) {
	p := newPanel(title, "", yLabel)
	p.Add(gridLines())
	width := barWidth(d)
	surv := survivorsOf(d)
	for i := range d.Runs.Policies {
		vals, _ := d.Runs.Values(i, m)
		if len(vals) == 0 {
			continue
		}
		bar, err := plotter.NewBarChart(plotter.Values{stats.Summarize(vals).Mean}, width)
		if err != nil {
			return nil, err
		}
		bar.XMin = float64(i)
		bar.Color = PolicyColor(i)
		bar.LineStyle.Width = 0
		if surv.low[i] {
			hollowBar(bar, PolicyColor(i))
		}
		p.Add(bar)
	}
	if err := meanLabels(p, d, m); err != nil {
		return nil, err
	}
	return p, nil
}

// barWidth is the width of a policy's bar: never thinner than 8 pt, so
// that a bar stays visible whatever the number of policies.
func barWidth(d *runs.PlotData) vg.Length {
	return vg.Points(max(8, min(60, 200/float64(max(len(d.Runs.Policies), 1)))))
}

// meanLabels adds to a panel of one bar per policy the metric's mean as a
// label above each bar and, with several seeds, its 95% confidence
// interval; it sets the policy axis and the y range.
func meanLabels(p *gonum.Plot, d *runs.PlotData, m *metrics.Metric) error {
	ymax := 0.0
	var errPts, labelPts plotter.XYs
	var errs plotter.YErrors
	var labels []string
	for i := range d.Runs.Policies {
		vals, _ := d.Runs.Values(i, m)
		if len(vals) == 0 {
			continue
		}
		s := stats.Summarize(vals)
		ymax = max(ymax, s.CIHigh, s.Mean)
		labelPts = append(labelPts, plotter.XY{X: float64(i), Y: max(s.CIHigh, s.Mean)})
		label := plotNumber(s.Mean, min(m.Decimals(), 2))
		if s.N < d.Runs.Seeds() {
			label += fmt.Sprintf(" (n=%d)", s.N) // a mean over fewer seeds than the run
		}
		labels = append(labels, label)
		if s.N > 1 {
			errPts = append(errPts, plotter.XY{X: float64(i), Y: s.Mean})
			errs = append(errs, struct{ Low, High float64 }{s.Mean - s.CILow, s.CIHigh - s.Mean})
		}
	}
	if len(errPts) > 0 {
		eb := &plotter.YErrorBars{XYs: errPts, YErrors: errs,
			LineStyle: draw.LineStyle{Color: colorCapacity, Width: vg.Points(1.5)}, CapWidth: vg.Points(10)}
		p.Add(eb)
	}
	if len(labelPts) > 0 {
		if err := addLabelsAbove(p, labelPts, labels, 11); err != nil {
			return err
		}
	}
	policyAxis(p, d.Runs.Policies)
	p.Y.Min, p.Y.Max = 0, ymax*1.12
	if ymax == 0 {
		p.Y.Max = 1
	}
	return nil
}

// gaveUpPanel stacks each policy's give-ups by reason (means over the
// seeds, one colour per reason, in a legend), with the total's mean and
// confidence interval on top as barPanel draws them.
func gaveUpPanel(fig *Figure, d *runs.PlotData, title, yLabel string) (*gonum.Plot, error) {
	p := newPanel(title, "", yLabel)
	p.Add(gridLines())
	n := len(d.Runs.Policies)
	var below *plotter.BarChart
	bottom := make([]float64, n) // the top of the segments stacked so far
	for r, m := range metrics.GaveUpBy() {
		if !slices.Contains(d.Runs.Metrics, m) {
			continue
		}
		means := make(plotter.Values, n)
		any := false
		for i := range n {
			if vals, _ := d.Runs.Values(i, m); len(vals) > 0 {
				means[i] = stats.Summarize(vals).Mean
				any = any || means[i] > 0
			}
		}
		if !any {
			continue
		}
		bar, err := plotter.NewBarChart(means, barWidth(d))
		if err != nil {
			return nil, err
		}
		bar.Color = reasonColor(r)
		bar.LineStyle = draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}
		if below != nil {
			bar.StackOn(below)
		}
		below = bar
		// Hatched, a second channel besides the colour: no policy's bar is.
		h := &hatch{width: barWidth(d), slope: 1 - 2*(r%2)}
		for i := range n {
			h.segs = append(h.segs, hatchSeg{x: float64(i), lo: bottom[i], hi: bottom[i] + means[i]})
			bottom[i] += means[i]
		}
		p.Add(bar, h)
		fig.addLegend("gave up: "+m.Part(), bar, h)
	}
	if err := meanLabels(p, d, metrics.GaveUp); err != nil {
		return nil, err
	}
	return p, nil
}

// reasonColors give each reason for giving up (metrics.GaveUpBy's order:
// attempts, deadline, terminal, queue full, budget, throttled, circuit
// open) its colour: greys for the policy's own limits, Okabe–Ito colours
// for the shared controls, none of them a policy's colour.
var reasonColors = []color.NRGBA{
	{0x40, 0x40, 0x40, 0xff}, {0x80, 0x80, 0x80, 0xff}, colorTerminal,
	{0x56, 0xb4, 0xe9, 0xff}, {0xcc, 0x79, 0xa7, 0xff}, {0x00, 0x9e, 0x73, 0xff}, {0x00, 0x72, 0xb2, 0xff},
}

func reasonColor(r int) color.NRGBA { return reasonColors[r%len(reasonColors)] }

// OutcomesFigure shows completions, give-ups and amplification per policy.
func OutcomesFigure(d *runs.PlotData) (*Figure, error) {
	// "of N" when every run had the workload's N operations (a burst); an
	// open loop draws its arrivals and a chain starts more on failures.
	of := "operations (of " + plotCount(d.Clients) + ")"
	for p := range d.Runs.Policies {
		if operationsRun(d, p) != float64(d.Clients)*float64(d.Runs.Seeds()) {
			of = "operations"
		}
	}
	spec := []panelSpec{
		{metrics.Completed, "Completed", of},
		{metrics.GaveUp, "Gave up, by reason", of},
		{metrics.Amplification, "Amplification", "attempts per operation"},
	}
	cols := 3
	if done, lost := workMetrics(d); done != nil {
		// The workload's own unit leads; its calls follow, as the cost.
		unit := done.WorkUnit()
		of := unit + unitsOf(d, done, lost)
		spec = []panelSpec{
			{done, capitalised(unit) + " completed", of},
			{lost, capitalised(unit) + " failed", of},
			{metrics.GaveUp, "Calls that gave up, by reason", "calls"},
			{metrics.Amplification, "Amplification", "attempts per call"},
		}
		cols = 2
	}
	title := fmt.Sprintf("%s: outcomes per policy (%s)", d.Scenario, seedWords(d.Runs))
	if d.Runs.Seeds() > 1 {
		title = fmt.Sprintf("%s: outcomes per policy, mean and 95%% CI over %s", d.Scenario, seedWords(d.Runs))
	}
	fig := &Figure{Title: title, Cols: cols}
	if survivorsOf(d).any() {
		fig.Note = hollowNote()
	}
	for _, s := range spec {
		panel := barPanel
		if s.metric == metrics.GaveUp {
			panel = func(d *runs.PlotData, _ *metrics.Metric, title, yLabel string) (*gonum.Plot, error) {
				return gaveUpPanel(fig, d, title, yLabel)
			}
		}
		p, err := panel(d, s.metric, s.title, s.quantity)
		if err != nil {
			return nil, err
		}
		fig.Panels = append(fig.Panels, p)
	}
	return fig, nil
}

// workMetrics returns the counts of the units of work d's workload
// completes and loses (metrics.Metric.Work: sessions), nil when it has
// no unit of work that spans calls.
func workMetrics(d *runs.PlotData) (done, lost *metrics.Metric) {
	for _, m := range d.Runs.Metrics {
		switch m.Work {
		case metrics.WorkDone:
			done = m
		case metrics.WorkLost:
			lost = m
		}
	}
	if done == nil || lost == nil {
		return nil, nil
	}
	return done, lost
}

// unitsOf says how many units of work every run had, " (of N)", when
// every policy ran the same number on every seed (completed plus lost);
// "" otherwise.
func unitsOf(d *runs.PlotData, done, lost *metrics.Metric) string {
	n := -1.0
	for p := range d.Runs.Policies {
		a, _ := d.Runs.Values(p, done)
		b, _ := d.Runs.Values(p, lost)
		if len(a) != len(b) {
			return ""
		}
		for i := range a {
			if n >= 0 && a[i]+b[i] != n {
				return ""
			}
			n = a[i] + b[i]
		}
	}
	if n < 0 {
		return ""
	}
	return " (of " + plotCount(int(n)) + ")"
}

// capitalised returns s with its first letter in upper case.
func capitalised(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// panelSpec is a panel of one metric: its title and what its y axis
// measures.
type panelSpec struct {
	metric   *metrics.Metric
	title    string
	quantity string
}

// distributionPanels are the metrics whose spread over seeds
// DistributionFigure shows, and which sweep plots draw, with panel titles
// and units.
func distributionPanels() []panelSpec {
	return []panelSpec{
		{metrics.Completed, "Completed", "operations"},
		{metrics.Attempts, "Attempts", "requests sent"},
		{metrics.GaveUp, "Gave up", "operations"},
		{metrics.Amplification, "Amplification", "attempts per operation"},
		{metrics.P99, "p99 completion time", "time from the operation's start"},
		{metrics.LastCompletion, "Last completion", "time since start"},
	}
}

// metricAxis returns what to divide a metric's values by for the unit its
// axis shows, and the axis label, given the largest magnitude on
// the axis. Metrics in milliseconds are drawn in the unit their range
// suits (axisDurationUnit); others as they are.
func metricAxis(m *metrics.Metric, label string, largest float64) (float64, string) {
	if m.Unit != metrics.Milliseconds {
		return 1, label
	}
	u := axisDurationUnit(largest)
	return u.ms, label + " (" + u.name + ")"
}

// policyValues returns policy p's values of a metric over the seeds.
func policyValues(d *runs.PlotData, p int, m *metrics.Metric) []float64 {
	vals, _ := d.Runs.Values(p, m)
	return vals
}

// DistributionFigure shows, for each headline metric, its distribution over
// the seeds per policy as box plots (box: quartiles; whiskers: 1.5 IQR).
func DistributionFigure(d *runs.PlotData) (*Figure, error) {
	fig := &Figure{
		Title: fmt.Sprintf("%s: distribution over %s (box: quartiles, line: median, whiskers: 1.5×IQR)", d.Scenario, seedWords(d.Runs)),
		Cols:  3,
	}
	n := len(d.Runs.Policies)
	width := vg.Points(min(40, 150/float64(max(n, 1))))
	surv := survivorsOf(d)
	if surv.any() {
		fig.Note = hollowNote()
	}
	for _, spec := range distributionPanels() {
		m := spec.metric
		largest := 0.0
		for i := range d.Runs.Policies {
			for _, v := range policyValues(d, i, m) {
				largest = max(largest, math.Abs(v))
			}
		}
		per, yLabel := metricAxis(m, spec.quantity, largest)
		p := newPanel(spec.title, "", yLabel)
		p.Add(gridLines())
		lo, hi := math.Inf(1), math.Inf(-1)
		top := make([]float64, n)
		for i := range d.Runs.Policies {
			top[i] = math.NaN()
			raw := policyValues(d, i, m)
			if len(raw) == 0 {
				continue
			}
			top[i] = math.Inf(-1)
			vals := make([]float64, len(raw))
			for j, v := range raw {
				vals[j] = v / per
				lo, hi = min(lo, vals[j]), max(hi, vals[j])
				top[i] = max(top[i], vals[j])
			}
			b, err := plotter.NewBoxPlot(width, float64(i), plotter.Values(vals))
			if err != nil {
				return nil, err
			}
			c := PolicyColor(i)
			b.FillColor = boxFill(c)
			b.BoxStyle.Color = c
			b.BoxStyle.Width = vg.Points(1.5)
			b.MedianStyle.Color = c
			b.MedianStyle.Width = vg.Points(2.5)
			b.WhiskerStyle.Color = c
			b.WhiskerStyle.Width = vg.Points(1.5)
			b.GlyphStyle.Color = c
			if surv.low[i] {
				hollowBox(b)
			}
			p.Add(b)
		}
		policyAxis(p, d.Runs.Policies)
		if !math.IsInf(lo, 0) {
			pad := max((hi-lo)*0.1, math.Abs(hi)*0.05, 0.5)
			p.Y.Min, p.Y.Max = max(0, lo-pad), hi+pad
		}
		// A panel over completed operations only says, above each box, how
		// many of the policy's operations it describes.
		if m.Subset() == metrics.Completed {
			if err := shareLabels(p, surv, top, seedsWith(d, m), d.Runs.Seeds()); err != nil {
				return nil, err
			}
			p.Y.Max += (p.Y.Max - p.Y.Min) * 0.1
			p.Title.Text += " (completed only)"
		}
		fig.Panels = append(fig.Panels, p)
	}
	return fig, nil
}

// boxFill is the fill of a policy's box: its colour at 40% opacity, pale
// enough for the median line to stand out.
func boxFill(c color.NRGBA) color.NRGBA { return color.NRGBA{c.R, c.G, c.B, 0x66} }

// policyAxis labels the x axis with the policies' names, slanted so that
// long names do not overlap.
func policyAxis(p *gonum.Plot, names []string) {
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 8
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
}

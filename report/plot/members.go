package plot

import (
	"cmp"
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/retrysim/retrysim/runs"
)

// maxMemberLines is how many members the members figure draws a line for:
// the busiest (over every policy), in member order; the others are summed
// into one line.
const maxMemberLines = 8

// colorMemberKey draws the legend's samples of "requests" and "failed":
// a line style, no member's colour.
var colorMemberKey = color.NRGBA{0x60, 0x60, 0x60, 0xff}

// memberLine is one line pair of the members figure: a member, or the sum
// of the members not drawn alone.
type memberLine struct {
	label           string
	requests, fails []int
}

// memberLines returns t's line pairs: the members at the indices of drawn,
// then, when some are left out, their sum.
func memberLines(t *runs.Timeline, drawn []int) []memberLine {
	var out []memberLine
	for _, i := range drawn {
		m := &t.Members[i]
		out = append(out, memberLine{m.Name, m.Requests, m.Failed})
	}
	if rest := len(t.Members) - len(drawn); rest > 0 {
		other := memberLine{label: fmt.Sprintf("%d other members (sum)", rest),
			requests: make([]int, t.Buckets()), fails: make([]int, t.Buckets())}
		for i := range t.Members {
			if slices.Contains(drawn, i) {
				continue
			}
			for b := range t.Buckets() {
				other.requests[b] += t.Members[i].Requests[b]
				other.fails[b] += t.Members[i].Failed[b]
			}
		}
		out = append(out, other)
	}
	return out
}

// drawnMembers picks the members drawn alone: all of them up to
// maxMemberLines, else the busiest over every policy (ties to the
// first), in member order.
func drawnMembers(d *runs.PlotData) []int {
	n := len(d.Timelines[0].Members)
	idx := make([]int, n)
	total := make([]int, n)
	for i := range idx {
		idx[i] = i
		for p := range d.Timelines {
			for _, v := range d.Timelines[p].Members[i].Requests {
				total[i] += v
			}
		}
	}
	if n > maxMemberLines {
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(total[b], total[a]) })
		idx = idx[:maxMemberLines]
		slices.Sort(idx)
	}
	return idx
}

// HasMembers reports whether d has pool member timelines, and so a
// members figure.
func HasMembers(d *runs.PlotData) bool {
	return len(d.Timelines) > 0 && len(d.Timelines[0].Members) > 0
}

// MembersFigure shows, per policy, what a pool sent each of its members
// per time bucket on the first seed (solid line, the member's colour) and
// how many of those the member failed (dashed, same colour): one panel
// per policy, titled "POLICY: pool members". Up to maxMemberLines members
// get their own lines; more are summed. Requests the pool answered
// itself with every member cooled down (pool.unavailable) are a grey
// dotted line of their own, when there are any. The y axis is shared or
// per panel as in TimelineFigure.
func MembersFigure(d *runs.PlotData) (*Figure, error) {
	if !HasMembers(d) {
		return nil, fmt.Errorf("%s: no pool members to plot", d.Scenario)
	}
	for p := range d.Timelines {
		if len(d.Timelines[p].Members) != len(d.Timelines[0].Members) {
			return nil, fmt.Errorf("%s: policies' timelines have different pool members", d.Scenario)
		}
	}
	l, err := layoutTimelines(d, func(*runs.Timeline, int) float64 { return 0 })
	if err != nil {
		return nil, err
	}
	drawn := drawnMembers(d)
	// The peaks are the lines' (a summed line of other members too), not
	// the pool's capacity, which no one member reaches.
	for p := range d.Timelines {
		l.peaks[p] = 0
		for _, ml := range memberLines(&d.Timelines[p], drawn) {
			for _, v := range ml.requests {
				l.peaks[p] = max(l.peaks[p], float64(v))
			}
		}
		l.peaks[p] = max(l.peaks[p], 1)
	}
	unavailable := slices.ContainsFunc(d.Timelines, func(t runs.Timeline) bool {
		return slices.ContainsFunc(t.PoolUnavailable, func(n int) bool { return n > 0 })
	})
	if unavailable {
		for p := range d.Timelines {
			for _, v := range d.Timelines[p].PoolUnavailable {
				l.peaks[p] = max(l.peaks[p], float64(v))
			}
		}
	}
	l.sharedMax = slices.Max(l.peaks)
	l.perPanel = slices.Min(l.peaks) < l.sharedMax/4
	per := plotDuration(l.bucket)
	fig := l.figure(fmt.Sprintf("%s: requests per %s to each pool member (solid) and those it failed (dashed) (seed %d)", d.Scenario, per, d.Runs.FirstSeed))
	for pi := range d.Timelines {
		t := &d.Timelines[pi]
		p := newPanel(t.Policy+": pool members", "time since start ("+l.unit.name+")", "requests per "+per)
		p.Add(gridLines())
		if err := incidentSpan(fig, p, d.Incident, l.unit); err != nil {
			return nil, err
		}
		for k, ml := range memberLines(t, drawn) {
			c := PolicyColor(k) // by member: this figure colours no policy
			req, err := bucketLine(ml.requests, t.Bucket, l.end, l.unit)
			if err != nil {
				return nil, err
			}
			req.Color, req.Width = c, vg.Points(2)
			fail, err := bucketLine(ml.fails, t.Bucket, l.end, l.unit)
			if err != nil {
				return nil, err
			}
			fail.Color, fail.Width = c, vg.Points(1.5)
			fail.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			p.Add(req, fail)
			fig.addLegend(ml.label, req)
		}
		if unavailable && t.PoolUnavailable != nil {
			line, err := bucketLine(t.PoolUnavailable, t.Bucket, l.end, l.unit)
			if err != nil {
				return nil, err
			}
			line.Color, line.Width = colorMemberKey, vg.Points(1.5)
			line.Dashes = []vg.Length{vg.Points(1.5), vg.Points(2)}
			p.Add(line)
			fig.addLegend("429 from the pool: every member out", line)
		}
		l.place(fig, p, pi)
	}
	solid, err := plotter.NewLine(plotter.XYs{{}, {X: 1}})
	if err != nil {
		return nil, err
	}
	solid.Color, solid.Width = colorMemberKey, vg.Points(2)
	dashed, err := plotter.NewLine(plotter.XYs{{}, {X: 1}})
	if err != nil {
		return nil, err
	}
	dashed.Color, dashed.Width, dashed.Dashes = colorMemberKey, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}
	fig.addLegend("requests (solid)", solid)
	fig.addLegend("failed (dashed)", dashed)
	return fig, nil
}

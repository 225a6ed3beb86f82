package plot

import (
	"fmt"
	"slices"
	"testing"

	"github.com/retrysim/retrysim/runs"
)

// A pool of more than maxMemberLines members draws the busiest alone, in
// member order, and the rest as one summed line; the legend names each
// once and stays outside the data.
func TestMembersFigureManyMembers(t *testing.T) {
	d := plotData(t, "pool-cooldown", 1)
	for p := range d.Timelines {
		tl := &d.Timelines[p]
		east := tl.Members[0]
		tl.Members = nil
		for i := range 11 {
			m := runs.MemberTimeline{Name: fmt.Sprintf("m%d", i), Requests: slices.Clone(east.Requests), Failed: slices.Clone(east.Failed)}
			if i == 4 || i == 7 || i == 9 {
				for b := range m.Requests {
					m.Requests[b] /= 4 // the three quietest
				}
				for b := range m.Failed {
					m.Failed[b] = min(m.Failed[b], m.Requests[b])
				}
			}
			tl.Members = append(tl.Members, m)
		}
	}
	fig, err := MembersFigure(d)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, it := range fig.legend {
		labels = append(labels, it.label)
	}
	want := []string{"m0", "m1", "m2", "m3", "m5", "m6", "m8", "m10", "3 other members (sum)", "429 from the pool: every member out", "requests (solid)", "failed (dashed)"}
	if !slices.Equal(labels, want) {
		t.Errorf("legend %q\nwant   %q", labels, want)
	}
	if err := legendOutsideData(fig); err != nil {
		t.Error(err)
	}
}

package plot

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/stats"
	"github.com/retrysim/retrysim/sweep"
	"github.com/retrysim/retrysim/tune"
)

// Where points that differ only in a third parameter share a spot, the
// figure labels the one the search ranks first (tune's Result.Rank): of
// two infeasible points, the one failing fewer targets, even when the
// other has the better objective.
func TestTuneFigureLabelsBySearchRank(t *testing.T) {
	t.Parallel()
	var space []sweep.Param
	for _, spec := range []string{"budget_min_per_second=1,9", "base=1s,20s", "budget_percent=5,50"} {
		q, err := sweep.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		space = append(space, q)
	}
	point := func(index []int, failing int, objective float64) *tune.Candidate {
		c := &tune.Candidate{Index: index, Failing: failing, Feasible: failing == 0,
			Objective: stats.Summary{N: 3, Mean: objective, CILow: objective, CIHigh: objective}}
		for i, v := range index {
			c.Values = append(c.Values, space[i].Values[v])
		}
		return c
	}
	chosen := point([]int{0, 0, 0}, 0, 1)
	fewerFailing := point([]int{1, 1, 0}, 1, 7.777)
	betterObjective := point([]int{1, 1, 1}, 2, 4.444) // same spot: differs in budget_percent alone
	r := &tune.Result{Policy: "p", Space: space, Objective: tune.Objective{Metric: metrics.Attempts}, Seeds: 3,
		Candidates: []*tune.Candidate{chosen, fewerFailing, betterObjective, point([]int{1, 0, 0}, 1, 5), point([]int{0, 1, 0}, 1, 5)},
		Chosen:     chosen}
	if order := Influence(r); order[2] != 2 {
		t.Fatalf("influence %v: budget_percent should come last", order)
	}
	ranked := slices.SortedStableFunc(slices.Values(r.Candidates), r.Rank)
	if ranked[0] != chosen || slices.Index(ranked, fewerFailing) > slices.Index(ranked, betterObjective) {
		t.Fatalf("rank: want the chosen point first and fewer failing targets before a better objective")
	}
	fig, err := TuneFigure(r)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := fig.Write(&b, SVG); err != nil {
		t.Fatal(err)
	}
	if svg := b.String(); !strings.Contains(svg, ">7.78<") || strings.Contains(svg, ">4.44<") {
		t.Errorf("the shared spot should be labelled 7.78 (fails 1 target), not 4.44 (fails 2)")
	}
}

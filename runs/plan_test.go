package runs

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/scenariotest"
)

// A plan's results are the same run here and taken from any number of
// merged shards (Mode.Shard, then Mode.Merged): the one protocol between
// them is the plan.
func TestExecuteMergedIsLocal(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	plan := Plan{Groups: []Group{
		{Scenario: s, First: 3, Seeds: 4},
		{Scenario: s, First: 1, Seeds: 0},
		{Scenario: s, First: 7, Seeds: 3, Plot: true, Bucket: 250 * time.Millisecond, Label: "plots"},
	}}
	want, err := Execute(context.Background(), plan, Mode{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2, 5} {
		m := runShards(t, plan.Groups, n)
		got, err := Execute(context.Background(), plan, Mode{Merged: m})
		if err != nil {
			t.Fatal(err)
		}
		for g := range want.Groups {
			if !sameBits(got.Groups[g].Runs, want.Groups[g].Runs) {
				t.Errorf("%d shards, group %d: the merged runs differ from the local ones", n, g)
			}
		}
		a, b := *got.Groups[2].Plot, *want.Groups[2].Plot
		a.Runs, b.Runs = nil, nil
		if got.Groups[2].Runs != got.Groups[2].Plot.Runs || !reflect.DeepEqual(a, b) {
			t.Errorf("%d shards: the merged plot data differ from the local ones", n)
		}
		// Another plan than the shards ran is refused, naming what differs.
		other := Plan{Groups: plan.Groups[:2]}
		if _, err := Execute(context.Background(), other, Mode{Merged: m}); err == nil || !strings.Contains(err.Error(), "3 group(s) of runs, but the command plans 2") {
			t.Errorf("%d shards, fewer groups: %v", n, err)
		}
		other = Plan{Groups: append([]Group{{Scenario: s, First: 4, Seeds: 4}}, plan.Groups[1:]...)}
		if _, err := Execute(context.Background(), other, Mode{Merged: m}); err == nil || !strings.Contains(err.Error(), "group 1 of the shards has 4 seeds from 3, want 4 from 4") {
			t.Errorf("%d shards, other seeds: %v", n, err)
		}
	}
}

// A plan that does not split refuses a shard, and its whole results are
// every policy's result on the one seed.
func TestExecuteUnsplit(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	plan := Plan{Groups: []Group{{Scenario: s, First: 5, Seeds: 1, Whole: true}}, Unsplit: "one seed is not split"}
	if _, err := Execute(context.Background(), plan, Mode{Shard: &Shard{0, 2}}); err == nil || err.Error() != "one seed is not split" {
		t.Errorf("shard of an unsplit plan: %v", err)
	}
	res, err := Execute(context.Background(), plan, Mode{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := One(context.Background(), s, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Groups[0].Whole, want) {
		t.Error("the whole results are not One's")
	}
}

// The estimate of a plan is the sum of its shards' runs.
func TestPlanWork(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	plan := Plan{Groups: []Group{{Scenario: s, Seeds: 5}, {Scenario: s, Seeds: 3, Plot: true, Bucket: time.Second}}}
	whole := plan.Work()
	var runs int64
	for i := range 3 {
		e, _, all := plan.ShardWork(Shard{i, 3})
		runs += e.Runs
		if all != 8 {
			t.Errorf("shard %d: %d seeds in all, want 8", i, all)
		}
	}
	if runs != whole.Runs || whole.Runs != int64(9*len(s.Policies)) || plan.Runs() != 9*len(s.Policies) {
		t.Errorf("runs: shards %d, whole %d, Runs %d; want %d", runs, whole.Runs, plan.Runs(), 9*len(s.Policies))
	}
}

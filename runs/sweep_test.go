package runs

import (
	"context"
	"reflect"
	"testing"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/sweep"
)

func mustParse(t *testing.T, spec string) sweep.Param {
	t.Helper()
	p, err := sweep.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunGridOrder(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	ps := []sweep.Param{mustParse(t, "clients=10:20:10"), mustParse(t, "capacity=3:6:3")}
	sw, err := RunSweep(context.Background(), s, ps, 1, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Points) != 4 {
		t.Fatalf("%d points, want 4", len(sw.Points))
	}
	want := [][]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}}
	for i, pt := range sw.Points {
		if !reflect.DeepEqual(pt.Index, want[i]) {
			t.Errorf("point %d has index %v, want %v", i, pt.Index, want[i])
		}
		if got := pt.Runs.Clients; got != int(ps[0].Values[pt.Index[0]]) {
			t.Errorf("point %d ran %d clients", i, got)
		}
	}
}

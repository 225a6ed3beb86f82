package plot

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sweep"
	"github.com/retrysim/retrysim/tune"
)

func tuneResult(t *testing.T, specs ...string) *tune.Result {
	t.Helper()
	const file = "../../docs/examples/tune.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := scenarios.Parse(file, data)
	if err != nil {
		t.Fatal(err)
	}
	p := &tune.Problem{Policy: "budgeted", FirstSeed: 1, Seeds: 3, Objective: tune.Objective{Metric: metrics.Attempts}}
	for _, name := range []string{"healthy", "outage"} {
		s, _ := f.Lookup(name)
		p.Scenarios = append(p.Scenarios, s)
	}
	for _, spec := range specs {
		q, err := sweep.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		p.Space = append(p.Space, q)
	}
	res, err := tune.Search(context.Background(), p, func(ctx context.Context, plan runs.Plan) (*runs.Results, error) {
		return runs.Execute(ctx, plan, runs.Mode{})
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The figure of the explored space draws the same bytes every time, over
// the parameters that move the objective most.
func TestTuneFigure(t *testing.T) {
	t.Parallel()
	// The budget's percent moves nothing here (the reserve decides), the
	// reserve and the base do.
	res := tuneResult(t, "budget_percent=5,50", "budget_min_per_second=1,9,40", "base=1s,20s")
	if order := Influence(res); order[2] != 0 {
		t.Errorf("influence %v: budget_percent should come last", order)
	}
	svg := func() string {
		fig, err := TuneFigure(res)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := fig.Write(&b, SVG); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	one := svg()
	if one != svg() || !strings.Contains(one, "retry budget: reserve per second") || !strings.Contains(one, "base delay (ms)") {
		t.Errorf("figure differs between two draws, or lacks its axes")
	}
	line := tuneResult(t, "budget_min_per_second=1,9,40", "base=20s")
	fig, err := TuneFigure(line)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := fig.Write(&b, SVG); err != nil || !strings.Contains(b.String(), "mean attempts") {
		t.Errorf("one varying parameter: %v", err)
	}
}

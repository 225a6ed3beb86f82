package plot

import (
	"fmt"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
)

// PrioritiesFigure shows the outcomes of each priority level, for a
// scenario whose operations have priorities: per level (a column), the
// operations completed and the mean latency of the completed ones, one
// bar per policy (two rows: a third's tick labels would not fit). Nil
// when the scenario has none.
func PrioritiesFigure(d *runs.PlotData) (*Figure, error) {
	levels := report.Levels(d.Runs.Metrics)
	if len(levels) == 0 {
		return nil, nil
	}
	title := fmt.Sprintf("%s: outcomes by priority (%s)", d.Scenario, seedWords(d.Runs))
	if d.Runs.Seeds() > 1 {
		title = fmt.Sprintf("%s: outcomes by priority, mean and 95%% CI over %s", d.Scenario, seedWords(d.Runs))
	}
	fig := &Figure{Title: title, Cols: len(levels)}
	if survivorsOf(d).any() {
		fig.Note = hollowNote()
	}
	rows := []struct {
		base            *metrics.Metric
		title, quantity string
	}{
		{metrics.Completed, "completed", "operations"},
		{metrics.MeanLatency, "mean latency", "ms, completed operations only"},
	}
	for _, row := range rows {
		for _, p := range levels {
			m, _ := metrics.ByPriority(p, row.base)
			panel, err := barPanel(d, m, capitalised(p.String())+": "+row.title, row.quantity)
			if err != nil {
				return nil, err
			}
			fig.Panels = append(fig.Panels, panel)
		}
	}
	return fig, nil
}

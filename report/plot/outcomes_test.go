package plot

import (
	"testing"
)

// Where the workload runs sessions, the outcomes figure leads with them
// (completed, then failed, of the sessions each run had) and the calls
// follow; any other workload keeps its three panels of operations.
func TestOutcomesLeadWithSessions(t *testing.T) {
	for _, c := range []struct {
		scenario string
		titles   []string
		yLabel   string
	}{
		{"bad-day-agents", []string{"Sessions completed", "Sessions failed", "Calls that gave up, by reason", "Amplification"}, "sessions (of 40)"},
		{"overload-burst", []string{"Completed", "Gave up, by reason", "Amplification"}, "operations (of 20)"},
	} {
		fig, err := OutcomesFigure(plotData(t, c.scenario, 2))
		if err != nil {
			t.Fatal(err)
		}
		if len(fig.Panels) != len(c.titles) {
			t.Fatalf("%s: %d panels, want %d", c.scenario, len(fig.Panels), len(c.titles))
		}
		for i, p := range fig.Panels {
			if p.Title.Text != c.titles[i] {
				t.Errorf("%s: panel %d is %q, want %q", c.scenario, i, p.Title.Text, c.titles[i])
			}
		}
		if got := fig.Panels[0].Y.Label.Text; got != c.yLabel {
			t.Errorf("%s: y axis %q, want %q", c.scenario, got, c.yLabel)
		}
	}
}

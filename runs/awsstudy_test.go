package runs

import (
	"math"
	"testing"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/metrics"
)

// The built-in aws-occ-contention reproduces the table of the AWS
// Architecture Blog's "Exponential Backoff And Jitter" (100 clients, 100
// runs): the time until every client has written and the writes made, each
// mean within 5 % of the study's.
func TestAWSBackoffStudyReproduces(t *testing.T) {
	if racetest.Enabled {
		t.Skip("500 runs for a mean within 5%: the plain go test runs it; other tests race Collect")
	}
	study := map[string]struct{ lastMs, writes float64 }{
		"no-backoff":          {2025, 2422},
		"exponential":         {63492, 1856},
		"decorrelated-jitter": {4450, 1004},
		"equal-jitter":        {6524, 810},
		"full-jitter":         {4973, 797},
	}
	s := scenariotest.Builtin(t, "aws-occ-contention")
	m, err := Collect(t.Context(), s, 1, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	mean := func(p int, metric *metrics.Metric) float64 {
		vals, _ := m.Values(p, metric)
		sum := 0.0
		for _, v := range vals {
			sum += v
		}
		return sum / float64(len(vals))
	}
	for p, name := range m.Policies {
		want, ok := study[name]
		if !ok {
			t.Fatalf("policy %s is not in the study", name)
		}
		serverWrites, _ := metrics.Lookup("server.writes")
		for _, c := range []struct {
			what      string
			got, want float64
		}{
			{"last completion (ms)", mean(p, metrics.LastCompletion), want.lastMs},
			{"writes", mean(p, serverWrites), want.writes},
		} {
			if off := c.got/c.want - 1; math.Abs(off) > 0.05 {
				t.Errorf("%s: %s %.1f, the study's %.0f (%+.1f%%, want within 5%%)", name, c.what, c.got, c.want, 100*off)
			}
		}
	}
}

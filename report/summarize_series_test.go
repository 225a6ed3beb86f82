package report

import (
	"math"
	"testing"

	"github.com/retrysim/retrysim/metrics"
)

// SummarizeSeries skips the seeds without a value and keeps a share's
// interval inside [0, 1], as Summarize does.
func TestSummarizeSeries(t *testing.T) {
	nan := math.NaN()
	s := SummarizeSeries(metrics.Attempts, []float64{nan, 2, nan, 4})
	if s.N != 2 || s.Mean != 3 {
		t.Errorf("attempts: %+v, want n 2, mean 3", s)
	}
	if s := SummarizeSeries(metrics.Attempts, []float64{nan}); s.N != 0 {
		t.Errorf("no value: %+v", s)
	}
	var share *metrics.Metric
	for _, name := range metrics.Names() {
		if m, _ := metrics.Lookup(name); m.Proportion {
			share = m
			break
		}
	}
	if share == nil {
		t.Fatal("no proportion metric")
	}
	if s := SummarizeSeries(share, []float64{1, nan, 1}); s.N != 2 || s.CIHigh > 1 || s.CILow < 0 {
		t.Errorf("%s: %+v, want n 2 inside [0, 1]", share.Name, s)
	}
}

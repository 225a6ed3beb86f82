package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/compare"
	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/metrics"
)

// A policy that gives up early (max_attempts: 1, every policy of every
// built-in scenario and example) never reads better on a metric that
// abandoning work can flatter, unless it completes significantly more
// (then nothing was shed): only a metric with a one-line reason
// (metrics.Metric.ShedReason: the work spent, or the work itself) may. The variant is
// derived, not declared, so a metric registered with the wrong
// population is caught by what it does.
func TestGiveUpEarlyIsNeverBetter(t *testing.T) {
	seen := map[*metrics.Metric]bool{}
	list := gateScenarios(t)
	if racetest.Enabled {
		list = list[:3] // the plain run tries every scenario
	}
	for _, s := range list {
		early, err := compare.Set(s, []string{"max_attempts=1"})
		if err != nil {
			t.Logf("%s: no variant that gives up early (%v)", s.Name, err)
			continue
		}
		base := FromMultiSeed(collect(t, s, 1, gateSeeds))
		now := FromMultiSeed(collect(t, early, 1, gateSeeds))
		cs, _ := CompareSeeds("b", base, now, Tolerances{Default: DefaultSeedTolerance}, DefaultAlpha)
		// Where giving up early completes significantly more (retries
		// that fed a storm), better is better: nothing was shed.
		completesMore := map[string]bool{}
		for _, c := range cs {
			if c.Metric == metrics.Completed && c.Verdict == Improved {
				completesMore[c.Policy] = true
			}
		}
		for _, c := range cs {
			if c.Metric == nil {
				continue
			}
			seen[c.Metric] = true
			if c.Verdict == Improved && c.Metric.ShedReason == "" && !completesMore[c.Policy] {
				t.Errorf("%s/%s with max_attempts 1: %s reads better and has no ShedReason: %s", s.Name, c.Policy, c.Metric.Name, c.Explain())
			}
		}
	}
	var unseen []string
	for _, m := range metrics.All() {
		if !seen[m] {
			unseen = append(unseen, m.Name)
		}
	}
	slices.Sort(unseen)
	t.Logf("metrics no scenario reports, so not tried: %s", strings.Join(unseen, ", "))
}

package check

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/stats"
)

func set(name string, seeds int, ms []*metrics.Metric, values ...[]float64) *SeedSet {
	return &SeedSet{Scenario: "s", FirstSeed: 1, Seeds: seeds, Policies: []SeedPolicy{{Name: name, Metrics: ms, Values: values}}}
}

func find(t *testing.T, cs []SeedChange, m *metrics.Metric) *SeedChange {
	t.Helper()
	for i := range cs {
		if cs[i].Metric == m {
			return &cs[i]
		}
	}
	t.Fatalf("no change of %s", m.Name)
	return nil
}

// Under the null hypothesis (old and new exchangeable on every seed), one
// family of many independent tests fails at most α of the time: measured
// over 2,000 families of 40 metrics each, where testing each at α alone
// fails nearly always (1 − 0.95^40 ≈ 87 %).
func TestFamilyFalseAlarmRate(t *testing.T) {
	const tests, seeds = 40, 30
	families := 2000
	if racetest.Enabled {
		families = 300 // the plain run measures the rate closely
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ms := make([]*metrics.Metric, tests)
	for i := range ms {
		ms[i] = &metrics.Metric{Name: "m", Unit: metrics.Count, Better: []stats.Direction{stats.HigherIsBetter, stats.LowerIsBetter}[i%2]}
	}
	alarms, unadjusted := 0, 0
	for f := 0; f < families; f++ {
		base, now := make([][]float64, tests), make([][]float64, tests)
		for i := range ms {
			base[i], now[i] = make([]float64, seeds), make([]float64, seeds)
			for s := range seeds {
				base[i][s], now[i][s] = rng.NormFloat64(), rng.NormFloat64()
			}
		}
		cs, _ := CompareSeeds("b", set("p", seeds, ms, base...), set("p", seeds, ms, now...), Tolerances{}, DefaultAlpha)
		any, anyRaw := false, false
		for _, c := range cs {
			any = any || c.Verdict != Unchanged
			anyRaw = anyRaw || c.Diff.Test.P < DefaultAlpha
		}
		if any {
			alarms++
		}
		if anyRaw {
			unadjusted++
		}
	}
	rate := float64(alarms) / float64(families)
	// A true rate of 5 % reads above 5 % + 2.33 standard errors (6.1 % of
	// 2,000 families) with probability about 1 %.
	if bound := DefaultAlpha + 2.33*math.Sqrt(DefaultAlpha*(1-DefaultAlpha)/float64(families)); rate > bound {
		t.Errorf("family-wise false alarms %.1f%% over %d families, want at most α = 5%%", 100*rate, families)
	}
	if float64(unadjusted)/float64(families) < 0.7 {
		t.Errorf("without the adjustment only %d of %d families alarm: the test is too easy to show anything", unadjusted, families)
	}
	t.Logf("%d of %d families alarm (%.1f%%); testing each metric alone: %d", alarms, families, 100*rate, unadjusted)
}

// Tests that always give the same p-value count once (attempts and
// amplification of a fixed number of clients; completed and the gave_up
// that is its complement); a test whose seeds differ on too few pairs to
// reach significance does not count (Tarone), so the rest face a milder
// adjustment.
func TestFamilyCountsInformationOnce(t *testing.T) {
	const seeds = 30
	rng := rand.New(rand.NewPCG(3, 4))
	var attempts, amp, completed, gaveUp, retries [2][]float64
	for side := range 2 {
		for s := range seeds {
			a := float64(100 + rng.IntN(20) + 10*side) // more attempts now
			c := float64(18 + rng.IntN(3))
			attempts[side] = append(attempts[side], a)
			amp[side] = append(amp[side], a/20)
			completed[side] = append(completed[side], c)
			gaveUp[side] = append(gaveUp[side], 20-c)
			// Retries differ on 3 seeds only: they cannot reach p < 0.05.
			r := 5.0
			if side == 1 && s < 3 {
				r = 6
			}
			retries[side] = append(retries[side], r)
		}
	}
	ms := []*metrics.Metric{metrics.Completed, metrics.Attempts, metrics.Retries, metrics.GaveUp, metrics.Amplification}
	base := set("p", seeds, ms, completed[0], attempts[0], retries[0], gaveUp[0], amp[0])
	now := set("p", seeds, ms, completed[1], attempts[1], retries[1], gaveUp[1], amp[1])
	cs, fam := CompareSeeds("b", base, now, Tolerances{Default: DefaultSeedTolerance}, DefaultAlpha)
	if fam.Tests != 5 || fam.Distinct != 3 || fam.Counted != 2 {
		t.Errorf("family %+v, want 5 tests, 3 distinct (completed = gave_up, attempts = amplification, retries), 2 counted (not retries)", fam)
	}
	a, amplification := find(t, cs, metrics.Attempts), find(t, cs, metrics.Amplification)
	if a.AdjustedP != amplification.AdjustedP || a.Diff.Test.P != amplification.Diff.Test.P {
		t.Errorf("attempts p %v (adjusted %v), amplification p %v (adjusted %v): one test, one p", a.Diff.Test.P, a.AdjustedP, amplification.Diff.Test.P, amplification.AdjustedP)
	}
	// Holm over 2: the smaller p doubled.
	c := find(t, cs, metrics.Completed)
	small := min(a.Diff.Test.P, c.Diff.Test.P)
	if got := min(a.AdjustedP, c.AdjustedP); math.Abs(got-min(1, 2*small)) > 1e-15 {
		t.Errorf("smallest adjusted p %v, want 2 × %v", got, small)
	}
	if a.Verdict != Worsened || !a.Fail {
		t.Errorf("10 more attempts on every seed: %s", a.Explain())
	}
	if r := find(t, cs, metrics.Retries); r.AdjustedP < DefaultAlpha || r.Verdict != Unchanged {
		t.Errorf("retries, 3 pairs differ: %s (adjusted p %v)", r.Explain(), r.AdjustedP)
	}
	for _, c := range cs {
		if c.AdjustedP < c.Diff.Test.P {
			t.Errorf("%s: adjusted p %v below its p %v", c.Metric.Name, c.AdjustedP, c.Diff.Test.P)
		}
	}
}

// A value that vanishes because what it measures stopped happening is
// judged by the count that says so: nothing gives up any more is no
// failure, and the row says why. The other direction, give-ups that
// start, fails through gave_up. Both through diff --fail-on worse's
// count (Diff.Worse), as the command uses it.
func TestPresenceChangesJudgedByTheirCount(t *testing.T) {
	const seeds = 30
	nan := math.NaN()
	ms := []*metrics.Metric{metrics.Completed, metrics.GaveUp, metrics.GiveUpP50}
	var doneAll, doneOne, oneGaveUp, noneGaveUp, timesOne, timesNone []float64
	for s := range seeds {
		doneAll = append(doneAll, 200)
		noneGaveUp = append(noneGaveUp, 0)
		timesNone = append(timesNone, nan)
		if s == 7 {
			doneOne, oneGaveUp, timesOne = append(doneOne, 199), append(oneGaveUp, 1), append(timesOne, 4200)
		} else {
			doneOne, oneGaveUp, timesOne = append(doneOne, 200), append(oneGaveUp, 0), append(timesOne, nan)
		}
	}
	// Better: the one give-up of 30 seeds is gone.
	before := set("full-jitter", seeds, ms, doneOne, oneGaveUp, timesOne)
	after := set("full-jitter", seeds, ms, doneAll, noneGaveUp, timesNone)
	d, err := NewDiff("old.json", before, "new.json", after, Tolerances{Default: DefaultSeedTolerance}, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	p50 := find(t, d.Changes, metrics.GiveUpP50)
	if d.Worse() != 0 || p50.Fail || !strings.Contains(p50.Note, "had a value on 1 seeds, now on 0 (nothing gave up): judged by gave_up") {
		t.Errorf("nothing gives up any more: %d worse; give_up_ms.p50 %s", d.Worse(), p50.Explain())
	}

	// Worse: every seed now loses 30 operations, which give up.
	var fewer, many, times []float64
	for s := range seeds {
		fewer, many, times = append(fewer, 170), append(many, 30), append(times, 9000+float64(s))
	}
	worse := set("full-jitter", seeds, ms, fewer, many, times)
	d, err = NewDiff("old.json", after, "new.json", worse, Tolerances{Default: DefaultSeedTolerance}, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	gaveUp, p50 := find(t, d.Changes, metrics.GaveUp), find(t, d.Changes, metrics.GiveUpP50)
	if !gaveUp.Fail || p50.Fail || !strings.Contains(p50.Note, "had a value on 0 seeds, now on 30 (nothing gave up): judged by gave_up (worse)") {
		t.Errorf("give-ups that start: gave_up %s; give_up_ms.p50 %s", gaveUp.Explain(), p50.Explain())
	}

	// On some seeds only: the seeds that have it both sides are tested.
	partial := slices.Clone(timesOne)
	partial[7] = 9000
	d, _ = NewDiff("old.json", before, "new.json", set("full-jitter", seeds, ms, doneOne, oneGaveUp, partial), Tolerances{}, DefaultAlpha)
	if p := find(t, d.Changes, metrics.GiveUpP50); p.Diff.Pairs != 1 || d.Family.Tests != 3 {
		t.Errorf("a value on one seed both sides: %d pairs, %d tests in the family; want 1 pair and every metric tested", p.Diff.Pairs, d.Family.Tests)
	}
}

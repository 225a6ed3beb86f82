package check

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retrysim/retrysim/stats"
)

// DefaultAlpha is the family-wise false-alarm rate of a gate when none is
// given: the probability that one check (or diff) fails somewhere when
// only the random draws changed.
const DefaultAlpha = 0.05

// Family is what one gate run tested as one family: every paired test of
// every metric of every policy of every multi-seed baseline it compared.
// Its probability of failing anywhere when nothing but the draws changed
// is at most Alpha (docs/statistics.md, "One family, one α").
type Family struct {
	Alpha float64
	// Tests is the number of paired tests made: metrics with a value on
	// both sides on at least one seed.
	Tests int
	// Distinct is Tests less those that repeat another test's information
	// (the same seeds differ, with the same ranks, the same or opposite
	// signs: attempts and amplification of a burst, completed and
	// goodput_share), which always have the same p-value.
	Distinct int
	// Counted is the number of distinct tests that could reach
	// significance at the level they face (Tarone's rule): a test whose
	// seeds differ on too few pairs cannot, whatever the signs, and costs
	// the others nothing. Holm's step-down runs over these.
	Counted int
}

// Correction names the procedure, for reports.
const Correction = "Holm over the tests that can reach significance (Tarone)"

// Describe is the family in one line, for the foot of a report.
func (f Family) Describe() string {
	if f.Tests == 0 {
		return "no paired test"
	}
	return fmt.Sprintf("α = %s for all %d paired tests together (%d distinct, %d able to reach significance; Holm-Tarone)",
		formatAlpha(f.Alpha), f.Tests, f.Distinct, f.Counted)
}

func formatAlpha(a float64) string { return strconv.FormatFloat(a, 'g', -1, 64) }

// ParseAlpha reads --alpha: a probability in (0, 0.5], as "0.05" or "5%".
func ParseAlpha(s string) (float64, error) {
	text := strings.TrimSpace(s)
	scale := 1.0
	if t, ok := strings.CutSuffix(text, "%"); ok {
		text, scale = strings.TrimSpace(t), 0.01
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || !plainNumber.MatchString(text) {
		return 0, fmt.Errorf("alpha %q: want a probability such as 0.05 or 5%%", s)
	}
	v *= scale
	if !(v > 0 && v <= 0.5) {
		return 0, fmt.Errorf("alpha %q: want more than 0 and at most 0.5 (50%%)", s)
	}
	return v, nil
}

// minP is the smallest two-sided p-value the exact signed-rank test can
// give with n pairs that differ, whatever their signs: 2/2^n (all of one
// sign; ties in the magnitudes do not change it).
func minP(n int) float64 {
	if n <= 0 {
		return 1
	}
	return min(1, math.Ldexp(2, -n))
}

// signature is what decides a paired test's p-value up to the signs the
// null hypothesis flips together: the seeds that differ, with their
// (doubled) ranks and their signs relative to the first that differs.
// Two tests with one signature have one p-value under any flip of whole
// seeds, so they are one test of the family, not two.
func signature(base, now []float64) string {
	var sb strings.Builder
	first := 0
	for seed, r := range stats.SignedRanks(base, now) {
		if r == 0 {
			continue
		}
		if first == 0 {
			first = r
		}
		if (r > 0) != (first > 0) {
			r = -abs(r)
		} else {
			r = abs(r)
		}
		fmt.Fprintf(&sb, "%d:%d,", seed, r)
	}
	return sb.String()
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// judge decides, for every change of cs that was compared over seeds, the
// verdict of its test and whether it fails, as one family at level alpha:
//
//  1. Tests that always give the same p-value (one signature) count once.
//  2. Tarone's rule: the smallest K such that at most K tests can reach
//     p ≤ alpha/K; only those are counted.
//  3. Holm's step-down over the counted tests: the adjusted p-value of
//     the j-th smallest of m is the running maximum of (m−j+1)·p.
//
// A test not counted has adjusted p-value min(1, K·p), above alpha. The
// selection in 1 and 2 depends only on the magnitudes of the paired
// differences, which swapping old and new on a seed leaves as they are,
// so the family-wise rate stays at most alpha when nothing changed
// (docs/statistics.md). Then the rules that can only spare a metric
// apply: the tolerance, and the survivor rule (metrics.Comparable) on
// the adjusted verdicts.
func judge(cs []SeedChange, alpha float64) Family {
	fam := Family{Alpha: alpha}
	type group struct {
		p, minP float64
		members []int
		adj     float64
	}
	var groups []*group
	bySig := map[string]*group{}
	for i := range cs {
		c := &cs[i]
		c.AdjustedP = 1
		if c.Metric == nil || c.Seeds < 2 || c.Diff.Pairs == 0 {
			continue
		}
		fam.Tests++
		if c.Diff.Test.N == 0 {
			continue // nothing differs: p = 1, nothing to count
		}
		sig := signature(c.baseValues, c.nowValues)
		g := bySig[sig]
		if g == nil {
			g = &group{p: c.Diff.Test.P, minP: minP(c.Diff.Test.N)}
			if !c.Diff.Test.Exact {
				g.minP = 0 // above 50 pairs: as small as needed
			}
			bySig[sig] = g
			groups = append(groups, g)
		}
		g.members = append(g.members, i)
	}
	fam.Distinct = len(groups)
	// Tarone: the smallest K with m(K) <= K.
	k := 1
	count := func(k int) int {
		n := 0
		for _, g := range groups {
			if g.minP <= alpha/float64(k) {
				n++
			}
		}
		return n
	}
	for count(k) > k {
		k++
	}
	var counted []*group
	for _, g := range groups {
		if g.minP <= alpha/float64(k) {
			counted = append(counted, g)
		} else {
			g.adj = min(1, float64(k)*g.p)
		}
	}
	fam.Counted = len(counted)
	slices.SortStableFunc(counted, func(a, b *group) int { return cmp.Compare(a.p, b.p) })
	running := 0.0
	for j, g := range counted {
		running = max(running, min(1, float64(len(counted)-j)*g.p))
		g.adj = running
	}
	for _, g := range groups {
		for _, i := range g.members {
			cs[i].AdjustedP = g.adj
		}
	}
	for i := range cs {
		decide(cs, i, alpha)
	}
	return fam
}

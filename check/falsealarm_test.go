package check

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/retrysim/retrysim/compare"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/scenarios"
)

// sliceSeeds is seeds [from, from+n) of set (from counted from its first
// seed), relabelled to start at first.
func sliceSeeds(set *SeedSet, from, n int, first uint64) *SeedSet {
	out := &SeedSet{Scenario: set.Scenario, FirstSeed: first, Seeds: n}
	for _, p := range set.Policies {
		sp := SeedPolicy{Name: p.Name, Metrics: p.Metrics}
		for _, v := range p.Values {
			sp.Values = append(sp.Values, v[from:from+n])
		}
		out.Policies = append(out.Policies, sp)
	}
	return out
}

func TestMeasureAA(t *testing.T) {
	if os.Getenv("AA") == "" {
		t.Skip()
	}
	f, _ := scenarios.Builtin()
	list := f.Scenarios
	ex, _ := filepath.Glob("../docs/examples/*.yaml")
	for _, e := range ex {
		g, err := scenarios.Load(e)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, g.Scenarios...)
	}
	const seeds, runs = 30, 20
	for _, s := range list {
		if s.Name == "huge-burst" {
			continue
		}
		all := FromMultiSeed(collect(t, s, 1, seeds*(runs+1)))
		base := sliceSeeds(all, 0, seeds, 1)
		fails := 0
		var first string
		for r := 1; r <= runs; r++ {
			now := sliceSeeds(all, r*seeds, seeds, 1)
			cs, _ := CompareSeeds("b", base, now, Tolerances{Default: DefaultSeedTolerance}, DefaultAlpha)
			if f := failures(cs); len(f) > 0 {
				fails++
				if first == "" {
					first = fmt.Sprint(f)
				}
			}
		}
		t.Logf("%-28s %2d of %d  %.300s", s.Name, fails, runs, first)
	}
}

func noJitter(s *scenarios.Scenario) *scenarios.Scenario {
	c := s.Clone()
	for i := range c.Policies {
		switch b := c.Policies[i].Rules.Backoff.(type) {
		case policies.FullJitter:
			c.Policies[i].Rules.Backoff = policies.Exponential(b)
		case policies.EqualJitter:
			c.Policies[i].Rules.Backoff = policies.Exponential(b)
		case policies.SDKJitter:
			c.Policies[i].Rules.Backoff = policies.Exponential(b)
		}
	}
	return c
}

func TestExploreRegressions(t *testing.T) {
	if os.Getenv("REG") == "" {
		t.Skip()
	}
	f, _ := scenarios.Builtin()
	list := f.Scenarios
	ex, _ := filepath.Glob("../docs/examples/*.yaml")
	for _, e := range ex {
		g, _ := scenarios.Load(e)
		list = append(list, g.Scenarios...)
	}
	cands := []string{"max_attempts=1", "max_attempts=2", "cap=1s", "jitter", "budget_percent=5", "breaker_failures=1", "deadline=2s"}
	for _, s := range list {
		if s.Name == "huge-burst" {
			continue
		}
		base := FromMultiSeed(collect(t, s, 1, 30))
		for _, c := range cands {
			var m *scenarios.Scenario
			if c == "jitter" {
				m = noJitter(s)
			} else {
				var err error
				m, err = compare.Set(s, []string{c})
				if err != nil {
					continue
				}
			}
			now := FromMultiSeed(collect(t, m, 1, 30))
			cs, fam := CompareSeeds("b", base, now, Tolerances{Default: DefaultSeedTolerance}, DefaultAlpha)
			var fl []string
			for _, x := range cs {
				if x.Fail {
					fl = append(fl, x.Policy+":"+x.Metric.Name)
				}
			}
			t.Logf("%-24s %-18s fam=%d/%d/%d fails=%d %.200v", s.Name, c, fam.Tests, fam.Distinct, fam.Counted, len(fl), fl)
		}
	}
}

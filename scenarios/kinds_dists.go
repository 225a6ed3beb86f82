package scenarios

import (
	"fmt"
	"time"

	"github.com/retrysim/retrysim/sim"
)

// The distributions of durations a scenario file can give (a service
// time, a response time, a think time), each registered once with its
// name (the key of its mapping), decoder, description and minimum draw.
// Their means are the distributions' own (sim.MeanDrawer).

// distKind is a registered distribution.
type distKind struct {
	name string
	// decode reads the distribution from dm, a mapping whose one key is
	// the kind's name.
	decode   func(dm *mapping) sim.Distribution
	is       func(d sim.Distribution) bool
	describe func(d sim.Distribution) string
	// min is the smallest draw the distribution can give; 0 when it is
	// not known better, for the work estimate.
	min func(d sim.Distribution) time.Duration
}

var distKinds []*distKind

// registerDistribution registers a distribution kind whose values are of
// type D; min may be nil (0).
func registerDistribution[D sim.Distribution](name string, decode func(dm *mapping) (D, bool), describe func(D) string, min func(D) time.Duration) {
	distKinds = append(distKinds, &distKind{
		name: name,
		decode: func(dm *mapping) sim.Distribution {
			if d, ok := decode(dm); ok {
				return d
			}
			return nil
		},
		is:       func(d sim.Distribution) bool { _, ok := d.(D); return ok },
		describe: func(d sim.Distribution) string { return describe(d.(D)) },
		min: func(d sim.Distribution) time.Duration {
			if min == nil {
				return 0
			}
			return min(d.(D))
		},
	})
}

func lookupDistribution(name string) *distKind {
	for _, k := range distKinds {
		if k.name == name {
			return k
		}
	}
	return nil
}

func distKindOf(d sim.Distribution) *distKind {
	for _, k := range distKinds {
		if k.is(d) {
			return k
		}
	}
	return nil
}

// distributionNames are the keys of a distribution mapping.
func distributionNames() []string {
	names := make([]string, len(distKinds))
	for i, k := range distKinds {
		names[i] = k.name
	}
	return names
}

// describeDistribution writes a distribution in words.
func describeDistribution(d sim.Distribution) string {
	if d == nil {
		return "none"
	}
	if k := distKindOf(d); k != nil {
		return k.describe(d)
	}
	return "a random time"
}

// minDistribution is the smallest draw a distribution can give; 0 when it
// is not known.
func minDistribution(d sim.Distribution) time.Duration {
	if k := distKindOf(d); k != nil {
		return k.min(d)
	}
	return 0
}

func registerDistributions() {
	registerDistribution("fixed",
		func(dm *mapping) (sim.Fixed, bool) { return sim.Fixed(dm.duration("fixed", 0)), true },
		func(d sim.Fixed) string { return time.Duration(d).String() },
		func(d sim.Fixed) time.Duration { return max(time.Duration(d), 0) })
	registerDistribution("exponential",
		func(dm *mapping) (sim.Exponential, bool) {
			return sim.Exponential{Mean: dm.duration("exponential", 0)}, true
		},
		func(d sim.Exponential) string { return fmt.Sprintf("exponential, mean %v", d.Mean) },
		nil)
	registerDistribution("lognormal",
		func(dm *mapping) (sim.LogNormal, bool) {
			before := dm.d.problems
			lm := distParams(dm, "lognormal", "{median: DURATION, p99: DURATION}")
			if lm == nil {
				return sim.LogNormal{}, false
			}
			ln := sim.LogNormal{Median: lm.duration("median", 0), P99: lm.duration("p99", 0)}
			switch {
			case dm.d.problems > before:
			case !lm.has("median"):
				lm.errorf("median", "missing: the median draw")
			case ln.Median == 0:
				lm.errorf("median", "must be > 0")
			case !lm.has("p99"):
				lm.errorf("p99", "missing: the 99th percentile of the draws (at least the median)")
			case ln.P99 < ln.Median:
				lm.errorf("p99", "must be at least the median (%v), got %v", ln.Median, ln.P99)
			}
			lm.finish("median", "p99")
			return ln, true
		},
		func(d sim.LogNormal) string { return fmt.Sprintf("lognormal, median %v, p99 %v", d.Median, d.P99) },
		nil)
	registerDistribution("normal",
		func(dm *mapping) (sim.FoldedNormal, bool) {
			before := dm.d.problems
			nm := distParams(dm, "normal", "{mean: DURATION, stddev: DURATION}")
			if nm == nil {
				return sim.FoldedNormal{}, false
			}
			n := sim.FoldedNormal{Mean: nm.duration("mean", 0), StdDev: nm.duration("stddev", 0)}
			switch {
			case dm.d.problems > before:
			case !nm.has("mean"):
				nm.errorf("mean", "missing: the mean of the normal draws (before negative ones are folded)")
			case !nm.has("stddev"):
				nm.errorf("stddev", "missing: the standard deviation of the normal draws")
			}
			nm.finish("mean", "stddev")
			return n, true
		},
		func(d sim.FoldedNormal) string { return fmt.Sprintf("|normal|, mean %v, stddev %v", d.Mean, d.StdDev) },
		nil)
	registerDistribution("uniform",
		func(dm *mapping) (sim.Uniform, bool) {
			before := dm.d.problems
			items := dm.sequence("uniform")
			if dm.d.problems > before {
				return sim.Uniform{}, false
			}
			if len(items) != 2 {
				dm.errorf("uniform", "want [min, max], two durations")
				return sim.Uniform{}, false
			}
			field := dm.field("uniform")
			lo := dm.d.durationItem(items[0], field+"[0]")
			hi := dm.d.durationItem(items[1], field+"[1]")
			if dm.d.problems == before && hi < lo {
				dm.d.errorf(items[1], field+"[1]", "must be at least the min (%v), got %v", lo, hi)
			}
			return sim.Uniform{Min: lo, Max: hi}, true
		},
		func(d sim.Uniform) string { return fmt.Sprintf("uniform in [%v, %v)", d.Min, d.Max) },
		func(d sim.Uniform) time.Duration { return max(d.Min, 0) })
}

package kinds

import (
	"fmt"
	"time"

	"github.com/retrysim/retrysim/schema"
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
	decode   func(dm *schema.Mapping) sim.Distribution
	is       func(d sim.Distribution) bool
	describe func(d sim.Distribution) string
	// min is the smallest draw the distribution can give; 0 when it is
	// not known better, for the work estimate.
	min func(d sim.Distribution) time.Duration
}

var distKinds []*distKind

// registerDistribution registers a distribution kind whose values are of
// type D; min may be nil (0).
func registerDistribution[D sim.Distribution](name string, decode func(dm *schema.Mapping) (D, bool), describe func(D) string, min func(D) time.Duration) {
	distKinds = append(distKinds, &distKind{
		name: name,
		decode: func(dm *schema.Mapping) sim.Distribution {
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
		func(dm *schema.Mapping) (sim.Fixed, bool) { return sim.Fixed(dm.Duration("fixed", 0)), true },
		func(d sim.Fixed) string { return time.Duration(d).String() },
		func(d sim.Fixed) time.Duration { return max(time.Duration(d), 0) })
	registerDistribution("exponential",
		func(dm *schema.Mapping) (sim.Exponential, bool) {
			return sim.Exponential{Mean: dm.Duration("exponential", 0)}, true
		},
		func(d sim.Exponential) string { return fmt.Sprintf("exponential, mean %v", d.Mean) },
		nil)
	registerDistribution("lognormal",
		func(dm *schema.Mapping) (sim.LogNormal, bool) {
			before := dm.Decoder().Problems()
			lm := distParams(dm, "lognormal", "{median: DURATION, p99: DURATION}")
			if lm == nil {
				return sim.LogNormal{}, false
			}
			ln := sim.LogNormal{Median: lm.Duration("median", 0), P99: lm.Duration("p99", 0)}
			switch {
			case dm.Decoder().Problems() > before:
			case !lm.Has("median"):
				lm.Errorf("median", "missing: the median draw")
			case ln.Median == 0:
				lm.Errorf("median", "must be > 0")
			case !lm.Has("p99"):
				lm.Errorf("p99", "missing: the 99th percentile of the draws (at least the median)")
			case ln.P99 < ln.Median:
				lm.Errorf("p99", "must be at least the median (%v), got %v", ln.Median, ln.P99)
			}
			lm.Finish()
			return ln, true
		},
		func(d sim.LogNormal) string { return fmt.Sprintf("lognormal, median %v, p99 %v", d.Median, d.P99) },
		nil)
	registerDistribution("normal",
		func(dm *schema.Mapping) (sim.FoldedNormal, bool) {
			before := dm.Decoder().Problems()
			nm := distParams(dm, "normal", "{mean: DURATION, stddev: DURATION}")
			if nm == nil {
				return sim.FoldedNormal{}, false
			}
			n := sim.FoldedNormal{Mean: nm.Duration("mean", 0), StdDev: nm.Duration("stddev", 0)}
			switch {
			case dm.Decoder().Problems() > before:
			case !nm.Has("mean"):
				nm.Errorf("mean", "missing: the mean of the normal draws (before negative ones are folded)")
			case !nm.Has("stddev"):
				nm.Errorf("stddev", "missing: the standard deviation of the normal draws")
			}
			nm.Finish()
			return n, true
		},
		func(d sim.FoldedNormal) string { return fmt.Sprintf("|normal|, mean %v, stddev %v", d.Mean, d.StdDev) },
		nil)
	registerDistribution("uniform",
		func(dm *schema.Mapping) (sim.Uniform, bool) {
			before := dm.Decoder().Problems()
			items := dm.Sequence("uniform")
			if dm.Decoder().Problems() > before {
				return sim.Uniform{}, false
			}
			if len(items) != 2 {
				dm.Errorf("uniform", "want [min, max], two durations")
				return sim.Uniform{}, false
			}
			field := dm.Field("uniform")
			lo := dm.Decoder().DurationItem(items[0], field+"[0]")
			hi := dm.Decoder().DurationItem(items[1], field+"[1]")
			if dm.Decoder().Problems() == before && hi < lo {
				dm.Decoder().Errorf(items[1], field+"[1]", "must be at least the min (%v), got %v", lo, hi)
			}
			return sim.Uniform{Min: lo, Max: hi}, true
		},
		func(d sim.Uniform) string { return fmt.Sprintf("uniform in [%v, %v)", d.Min, d.Max) },
		func(d sim.Uniform) time.Duration { return max(d.Min, 0) })
	registerMixture()
}

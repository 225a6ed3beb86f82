package fit

import (
	"slices"
	"testing"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/sim"
)

// The nearest preset of a log is the preset that ran, or one the log
// cannot tell from it (the same waits and attempt limit): for every
// policy of controls-outage that is a preset (anthropic-sdk, aws-standard,
// aws-adaptive, grpc-throttled, sre), on seeds 1-3; and the preset that
// ran explains every logged backoff.
func TestNearestPreset(t *testing.T) {
	s := scenariotest.Builtin(t, "controls-outage")
	tested := 0
	for i, p := range s.Policies {
		if !slices.Contains(presetNames(t), p.Name) {
			continue
		}
		for seed := uint64(1); seed <= 3; seed++ {
			log, _ := simulatedLog(t, s, i, seed)
			fits, err := fitLog(t, log).NearestPresets()
			if err != nil {
				t.Fatal(err)
			}
			k := slices.IndexFunc(fits, func(f PresetFit) bool { return f.Name == p.Name })
			if k < 0 {
				t.Fatalf("%s: no preset of that name was scored", p.Name)
			}
			if ran := fits[k]; k > 0 && !fits[0].Same(ran) {
				t.Errorf("%s seed %d: nearest %s (%d of %d inside, width %.2f), the preset that ran %d of %d, width %.2f", p.Name, seed,
					fits[0].Name, fits[0].Inside, fits[0].Samples, fits[0].Width, ran.Inside, ran.Samples, ran.Width)
			}
			if fits[k].Inside != fits[k].Samples || fits[k].Samples == 0 || !fits[k].AttemptsAgree {
				t.Errorf("%s seed %d: the preset that ran explains %d of %d backoffs (attempts agree: %v)", p.Name, seed, fits[k].Inside, fits[k].Samples, fits[k].AttemptsAgree)
			}
		}
		tested++
	}
	if tested < 4 {
		t.Fatalf("only %d presets among controls-outage's policies", tested)
	}
}

// presetNames are the policy types that are presets, not backoff kinds.
func presetNames(t *testing.T) []string {
	var out []string
	for _, pt := range kinds.PolicyTypes() {
		p, err := presetPolicy(pt.Name)
		if err != nil {
			t.Fatal(err)
		}
		if shape, _ := kinds.ShapeOf(p.Rules.Backoff); shape.Kind != pt.Name {
			out = append(out, pt.Name)
		}
	}
	return out
}

// What the policy that ran did besides its backoffs: limited-fallback's
// fallback policy switches every operation's model after 2 attempts (the
// scenario's fallback: {after: 2}) and holds retries for an in-flight
// slot; overload-burst's gated holds retries at its gate; its full-jitter
// policy switches nothing and holds nothing.
func TestRunnerSeesFallbackAndHolds(t *testing.T) {
	fitOf := func(scenario, policy string) *Result {
		s := scenariotest.Builtin(t, scenario)
		i := slices.IndexFunc(s.Policies, func(p sim.Policy) bool { return p.Name == policy })
		log, _ := simulatedLog(t, s, i, 1)
		return fitLog(t, log)
	}
	fb := fitOf("limited-fallback", "limited-fallback").runner
	if fb.Switches == 0 || fb.SwitchMin != 2 || fb.SwitchMax != 2 || fb.Held == 0 {
		t.Errorf("limited-fallback: %d switches after %d-%d attempts, %d of %d retries held", fb.Switches, fb.SwitchMin, fb.SwitchMax, fb.Held, fb.Retries)
	}
	if g := fitOf("overload-burst", "gated").runner; g.Held == 0 || g.Switches != 0 {
		t.Errorf("gated: %d of %d retries held, %d switches", g.Held, g.Retries, g.Switches)
	}
	if f := fitOf("overload-burst", "full-jitter").runner; f.Held != 0 || f.Switches != 0 || f.Retries == 0 {
		t.Errorf("full-jitter: %d of %d retries held, %d switches", f.Held, f.Retries, f.Switches)
	}
}

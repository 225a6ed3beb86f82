package sim_test

import (
	"path/filepath"
	"testing"

	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// topologyScenarios are the scenarios whose every policy
// TestTopologyDigests pins, beside the core digests of TestResultDigests:
// retry layers (with and without deadline propagation, so orphans), a
// hedged queue, a pool with cooldowns and faulted streams. Each is named
// by its file ("" for the built-in scenarios) and its name.
var topologyScenarios = []struct{ file, name string }{
	{"", "layered-amplification"},
	{"", "sidecar-after-giveup"},
	{"docs/examples/hedging.yaml", "hedged-tail"},
	{"", "pool-cooldown"},
	{"docs/examples/streams.yaml", "stalled-streams"},
}

// TestTopologyDigests pins the results (counters, give-up times and
// waits included) and event
// sequences of the scenarios of topologyScenarios, policy by policy, at
// each scenario's seed. A deliberate change of behaviour records the new
// values (-run TestTopologyDigests -v) and says why in its commit.
func TestTopologyDigests(t *testing.T) {
	want := map[string][3]string{
		// scenario/policy: {result digest, digest of the rest, event digest}
		"layered-amplification/every-layer":    {"a3b1fd54752124e6", "7de7b523897367cf", "1d666ae908124c8d"}, // 1140 events (1080 and give-ups "93204939cd86f2c4" before the layer was a wrapper)
		"layered-amplification/sidecar-only":   {"5804e675d47ec399", "4cd1327bae24e570", "3e452d442f18b299"}, // 140 events (120 before)
		"sidecar-after-giveup/no-propagation":  {"df65cdcc34c42c19", "0b236070cdfb57f1", "381d7a0aae623de3"}, // 660 events
		"sidecar-after-giveup/propagation":     {"1e8d6d8196ea51f0", "7fae97979e913d96", "92f0728f3726caee"}, // 420 events (360 before)
		"hedged-tail/no-hedge":                 {"cd24ced75ba9351d", "75154882913efdc7", "2e16d7f9806c6148"}, // 11946 events
		"hedged-tail/hedge-p95":                {"89395cffb1bf3b5c", "1821c9f841f1b154", "f52bec387a18a031"}, // 12439 events
		"hedged-tail/hedge-unbudgeted-at-once": {"ad89c185c6c0f8b2", "1a17b6bae276d424", "5c6a66aa7baf459e"}, // 11946 events
		"pool-cooldown/no-retries":             {"3e1f559238c810a2", "6e9acaf69dd4cba7", "d765edf6e4ef8b3b"}, // 4852 events
		"pool-cooldown/anthropic-sdk":          {"c6fabf7bf93563a0", "31cd14284ea84a1a", "b5bba7733cb6ffc9"}, // 6014 events
		"stalled-streams/no-watchdog":          {"888264fc40ec3bf4", "166b9392a1710852", "aa7af62988253900"}, // 444 events
		"stalled-streams/watchdog":             {"c973599e8d5f8326", "26b827227ce59b12", "b2302ed8f4a4bf28"}, // 450 events
		"stalled-streams/watchdog-interactive": {"1a6aa374b30f061d", "30a1a8e2132a6785", "752566d5aae21bd9"}, // 424 events
	}
	builtin, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, ts := range topologyScenarios {
		f := builtin
		if ts.file != "" {
			if f, err = scenarios.Load(filepath.Join("..", ts.file)); err != nil {
				t.Fatal(err)
			}
		}
		s, err := f.Lookup(ts.name)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range s.Policies {
			name := s.Name + "/" + p.Name
			seen++
			res, events, err := sim.RunEventDigest(s.Config(i, s.Seed))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			plain, err := sim.Run(s.Config(i, s.Seed))
			if err != nil {
				t.Fatal(err)
			}
			r, c := sim.Digests(&res)
			if pr, pc := sim.Digests(&plain); pr != r || pc != c {
				t.Errorf("%s: traced run gives {%s, %s}, untraced {%s, %s}", name, r, c, pr, pc)
			}
			got := [3]string{r, c, events}
			t.Logf("%q: {%q, %q, %q}, // %d events", name, got[0], got[1], got[2], res.Events)
			if w, ok := want[name]; !ok {
				t.Errorf("%s: no recorded digest", name)
			} else if got != w {
				t.Errorf("%s: digests %v, want %v: the engine's output changed", name, got, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d runs pinned, %d recorded", seen, len(want))
	}
}
